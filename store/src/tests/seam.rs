//! The seam itself: a store opened on PostgreSQL migrates its database first, and opens
//! again on a database already migrated.

use super::*;

/// Catches: `open_postgres` that connects without applying the schema (every query of a
/// fresh database would fail), or that fails on a database already migrated (a restart).
#[tokio::test]
async fn open_postgres_applies_the_schema_once_and_opens_again() {
    let db = TestDb::create().await.unwrap();
    let first = Store::open_postgres(db.url()).await.unwrap();
    first
        .execute_for_tests("INSERT INTO channel_state VALUES ('t', 'k', 'v', 0)")
        .await
        .unwrap();
    first.close().await;
    let again = Store::open_postgres(db.url()).await.unwrap();
    assert_eq!(again.engine_name(), "PostgreSQL");
    again.close().await;
}
