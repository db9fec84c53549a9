//! The statements both engines share, written once (`sql/<area>.rs`), and the thin dialect
//! layer that writes each one's text for SQLite and for PostgreSQL at compile time.
//!
//! Placeholders are `$n` on both engines: PostgreSQL's own, and sqlx binds SQLite's
//! `$NNN` by its number too (a value bound once serves every `$n` of that number). What
//! else differs is a fragment of [`sql!`]; the statements that must differ as a whole (a
//! turn's scripts, array parameters, advisory locks, JSON paths) stay beside their twins in `sqlite/`
//! and `pg/`. `RETURNING`, `ON CONFLICT … DO NOTHING/UPDATE` and `EXISTS` are written the
//! same on both.

pub(crate) mod approvals;
pub(crate) mod channels;
pub(crate) mod cron;
pub(crate) mod ledger;
pub(crate) mod worktrees;

/// A statement's text on each engine.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sql {
    pub sqlite: &'static str,
    pub pg: &'static str,
}

/// One statement as literals and dialect fragments, written for both engines:
///
/// - `"…"`: the same text on both.
/// - `[cast N type]`: parameter `$N` of a type PostgreSQL cannot infer (`$N IS NULL`):
///   `$N::type` there, `$N` on SQLite.
macro_rules! sql {
    (@$engine:ident $text:literal) => { $text };
    (@sqlite [cast $n:literal $ty:ident]) => { concat!("$", $n) };
    (@pg [cast $n:literal $ty:ident]) => { concat!("$", $n, "::", stringify!($ty)) };
    ($($part:tt)+) => {
        $crate::sql::Sql {
            sqlite: concat!($($crate::sql::sql!(@sqlite $part)),+),
            pg: concat!($($crate::sql::sql!(@pg $part)),+),
        }
    };
}
pub(crate) use sql;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
