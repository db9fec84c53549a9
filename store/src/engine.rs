//! The seam between `Store` and its engines: which engine a store runs on, and the macro
//! that writes each public `Store` method as a static dispatch to the engine's method of
//! the same name (no `dyn`, no boxing: a `match` and a call).

use super::pg::Pg;
use super::sqlite::Sqlite;

/// The engine a [`super::Store`] runs on.
#[derive(Clone)]
pub(super) enum Engine {
    Sqlite(Sqlite),
    Postgres(Pg),
}

/// Public `Store` methods, each calling the same-named method of the store's engine.
/// Adding a method is one line in its area's invocation and one method per engine; an
/// engine without it does not compile. A method may take one type parameter with one bound
/// (`fn cron_jobs<S: JobSpec>`).
macro_rules! engine_fns {
    ($(
        $(#[$meta:meta])*
        $vis:vis async fn $name:ident $(<$gen:ident: $bound:path>)? (&self $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty;
    )*) => {
        impl $crate::Store {
            $(
                $(#[$meta])*
                $vis async fn $name $(<$gen: $bound>)? (&self $(, $arg: $ty)*) -> $ret {
                    match &self.engine {
                        $crate::engine::Engine::Sqlite(e) => e.$name($($arg),*).await,
                        $crate::engine::Engine::Postgres(e) => e.$name($($arg),*).await,
                    }
                }
            )*
        }
    };
}
pub(super) use engine_fns;
