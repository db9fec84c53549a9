//! PostgreSQL groundwork: the schema's migrations and the migrator that applies them under
//! a lock. Nothing else in the store uses it yet; the store seam that lets the gateway run
//! on PostgreSQL builds on it (docs/postgres.md).

pub mod migrate;
