//! The statements both engines share, written once (`sql/<area>.rs`), and the thin dialect
//! layer that writes each one's text for SQLite and for PostgreSQL at compile time.
//!
//! Placeholders are `$n` on both engines: PostgreSQL's own, and sqlx binds SQLite's
//! `$NNN` by its number too (a value bound once serves every `$n` of that number). What
//! else differs is a fragment of [`sql!`]; the statements that must differ as a whole (a
//! turn's scripts, array parameters, advisory locks, JSON paths) stay beside their twins in `sqlite/`
//! and `pg/`. `RETURNING`, `ON CONFLICT … DO NOTHING/UPDATE`, `EXISTS`, `IS NOT DISTINCT
//! FROM`, `NULLS LAST`, `CAST(… AS BIGINT)` and a subquery's `AS` alias are written the
//! same on both (the bundled SQLite is 3.46). `verbatim` (a test) fails when a statement
//! appears in both engines' bodies again.

pub(crate) mod announces;
pub(crate) mod approvals;
pub(crate) mod channels;
pub(crate) mod choices;
pub(crate) mod compactions;
pub(crate) mod cron;
pub(crate) mod inbox;
pub(crate) mod interrupts;
pub(crate) mod ledger;
pub(crate) mod media_files;
pub(crate) mod messages;
pub(crate) mod outbox;
pub(crate) mod progress;
pub(crate) mod runs;
pub(crate) mod sessions;
pub(crate) mod subagents;
pub(crate) mod usage;
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
/// - `[rowid]`: a row's insertion order, the tie-break of an `ORDER BY`: SQLite's implicit
///   `rowid`, PostgreSQL's `seq` column (a `BIGSERIAL`; PostgreSQL has no row ids).
/// - `[greatest]`: the larger of its arguments: `MAX(a, b)` on SQLite (a scalar with two
///   or more arguments), `GREATEST(a, b)` on PostgreSQL (where `MAX` is an aggregate only).
/// - `[json_text column]`: a `JSONB` column (PostgreSQL) read as the text SQLite stores it
///   in: `column::text AS column` there, `column` on SQLite.
///
/// Statements that share a head (the columns of a row type) are written with a macro of
/// their area that calls `sql!` with the head and its caller's tail.
macro_rules! sql {
    (@$engine:ident $text:literal) => { $text };
    (@sqlite [cast $n:literal $ty:ident]) => { concat!("$", $n) };
    (@pg [cast $n:literal $ty:ident]) => { concat!("$", $n, "::", stringify!($ty)) };
    (@sqlite [rowid]) => { "rowid" };
    (@pg [rowid]) => { "seq" };
    (@sqlite [greatest]) => { "MAX" };
    (@pg [greatest]) => { "GREATEST" };
    (@sqlite [json_text $col:ident]) => { stringify!($col) };
    (@pg [json_text $col:ident]) => { concat!(stringify!($col), "::text AS ", stringify!($col)) };
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod verbatim;
