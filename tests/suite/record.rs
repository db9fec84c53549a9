//! The system's own record, for "exactly once" and "nothing lost" assertions: the daemon's
//! database (outbox rows, registry, timers), read or changed while it runs (WAL lets both
//! work) or after it stopped, and the web chat socket's full log after a graceful stop.

use std::time::Duration;

use serde_json::Value;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{Connection, Row, SqliteConnection};
use switchboard_testkit::harness::{Gateway, WsClient};

use crate::common::{get_json, get_text, WAIT};

/// A connection to the daemon's database.
async fn db(gw: &Gateway) -> SqliteConnection {
    let path = gw.state_dir().join("data").join("switchboard.db");
    let opts = SqliteConnectOptions::new()
        .filename(path)
        .busy_timeout(Duration::from_secs(10));
    SqliteConnection::connect_with(&opts).await.unwrap()
}

/// Run one statement on the daemon's database (a test's fault: a trigger, a table).
pub(crate) async fn db_exec(gw: &Gateway, sql: &str) {
    let mut c = db(gw).await;
    sqlx::query(sql).execute(&mut c).await.unwrap();
    c.close().await.unwrap();
}

/// The first column of the first row of `sql`, an integer.
pub(crate) async fn db_i64(gw: &Gateway, sql: &str) -> i64 {
    let mut c = db(gw).await;
    let v = sqlx::query(sql)
        .fetch_one(&mut c)
        .await
        .unwrap()
        .try_get(0)
        .unwrap();
    c.close().await.unwrap();
    v
}

/// Wait (bounded) until `sql` answers `want`.
pub(crate) async fn wait_db_i64(gw: &Gateway, sql: &str, want: i64) {
    for _ in 0..800 {
        if db_i64(gw, sql).await == want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!(
        "`{sql}` never answered {want} (now {})",
        db_i64(gw, sql).await
    );
}

/// One outbox row: a message the daemon owes a chat, and how its delivery went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OutboxRow {
    pub key: String,
    pub channel: String,
    pub chat_id: String,
    pub text: String,
    pub state: String,
    pub attempts: i64,
    pub parts_sent: i64,
}

/// Every outbox row, in insertion order.
pub(crate) async fn outbox(gw: &Gateway) -> Vec<OutboxRow> {
    let mut c = db(gw).await;
    let rows = sqlx::query(
        "SELECT key, channel, COALESCE(chat_id, '') AS chat_id, text, state, attempts, parts_sent
         FROM outbox ORDER BY id",
    )
    .fetch_all(&mut c)
    .await
    .unwrap();
    c.close().await.unwrap();
    rows.into_iter()
        .map(|r| OutboxRow {
            key: r.get("key"),
            channel: r.get("channel"),
            chat_id: r.get("chat_id"),
            text: r.get("text"),
            state: r.get("state"),
            attempts: r.get("attempts"),
            parts_sent: r.get("parts_sent"),
        })
        .collect()
}

/// The texts of the outbox rows, asserting that each was delivered on its first attempt
/// (state `sent`, one attempt): the daemon's own record that each went out exactly once.
pub(crate) async fn sent_once(gw: &Gateway) -> Vec<String> {
    outbox(gw)
        .await
        .into_iter()
        .map(|row| {
            assert_eq!(
                (row.state.as_str(), row.attempts),
                ("sent", 1),
                "outbox row {} ({:?})",
                row.key,
                row.text
            );
            row.text
        })
        .collect()
}

/// Every assistant message a web chat socket receives until the daemon closes it (call
/// after `Gateway::terminate`): with what the socket had read before, its full log.
pub(crate) async fn rest_of_socket(ws: &mut WsClient) -> Vec<String> {
    let mut out = Vec::new();
    loop {
        match ws.next_message(WAIT).await {
            Ok(text) => out.push(text),
            Err(e) => {
                let e = format!("{e:#}");
                assert!(
                    !e.contains("no ws frame within"),
                    "the socket stayed open after the daemon stopped: {e}"
                );
                return out;
            }
        }
    }
}

/// `/api/subagents`, every row.
pub(crate) async fn registry(gw: &Gateway) -> Vec<Value> {
    get_json(gw, "/api/subagents?limit=10000").await["subagents"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Outbox rows in `state`, from `/metrics` (absent: none).
pub(crate) async fn outbox_rows(gw: &Gateway, state: &str) -> u64 {
    let prefix = format!("switchboard_outbox_messages{{state=\"{state}\"}} ");
    get_text(gw, "/metrics")
        .await
        .lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

/// How many outbox rows the starts of `gw` re-sent because a crash cut their delivery
/// (the one at-least-once window), from its log.
pub(crate) fn resent_rows(gw: &Gateway) -> usize {
    gw.stderr_lines()
        .iter()
        .filter(|l| l.contains("re-sending messages whose delivery was cut by a crash"))
        .filter_map(|l| {
            l.split("rows=")
                .nth(1)?
                .split_whitespace()
                .next()?
                .parse::<usize>()
                .ok()
        })
        .sum()
}
