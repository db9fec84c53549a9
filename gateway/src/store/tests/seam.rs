//! The seam itself: a store opened on PostgreSQL migrates its database first, and a
//! method its engine does not have yet fails with a typed error that names it (never a
//! panic, never a made-up answer).

use super::*;

/// Catches: an unported method that panics, answers something made up (an empty list, a
/// `None`) or fails with an error that does not say what is missing.
#[tokio::test]
async fn an_unported_method_fails_with_its_name_on_postgres() {
    let (_db, store) = file_store(Db::Postgres).await;
    assert_eq!(store.engine_name(), "PostgreSQL");
    match store.list_pairings().await {
        Err(StoreError::Unsupported { engine, what }) => {
            assert_eq!((engine, what), ("PostgreSQL", "list_pairings"));
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
    let e = store.exec_allowed("main").await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "exec_allowed is not available on PostgreSQL yet"
    );
}

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
