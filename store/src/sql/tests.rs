//! The dialect layer's own tests: each fragment's text per engine, and SQLite binding the
//! shared `$n` placeholders by number.

use sqlx::Connection;

use super::*;

/// Catches: a fragment written the same on both engines (PostgreSQL rejects an untyped
/// `$n IS NULL`; SQLite has no `::` cast).
#[test]
fn fragments_are_written_per_engine() {
    const S: Sql = sql!("SELECT 1 WHERE " [cast 2 text] " IS NULL OR x = $2");
    assert_eq!(S.sqlite, "SELECT 1 WHERE $2 IS NULL OR x = $2");
    assert_eq!(S.pg, "SELECT 1 WHERE $2::text IS NULL OR x = $2");
}

/// Catches: SQLite binding `$n` by the order the placeholders appear instead of by their
/// number, which would swap values in every shared statement that names `$2` before `$1`
/// or uses one twice.
#[tokio::test]
async fn sqlite_binds_dollar_placeholders_by_number() {
    let mut c = sqlx::SqliteConnection::connect("sqlite::memory:")
        .await
        .unwrap();
    let row: (String, String, i64) = sqlx::query_as("SELECT $2 || $1, $1, $3 + $3")
        .bind("a")
        .bind("b")
        .bind(2_i64)
        .fetch_one(&mut c)
        .await
        .unwrap();
    assert_eq!(row, ("ba".to_string(), "a".to_string(), 4));
}
