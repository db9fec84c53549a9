//! Every statement the store runs on SQLite finds its rows through an index: the suite's
//! SQLite tests run one after the other while sqlx's statement log is recorded, and each
//! statement they ran is planned again with `EXPLAIN QUERY PLAN`. A `SCAN` of a table
//! (every row read) fails, unless the table is one of the few whose whole reading is the
//! point or whose size is bounded ([`BOUNDED`]).
//!
//! Why: a lookup without its index reads every row of a table that grows with use, so a
//! turn gets slower with each one before it. A missing index on the registry's
//! `child_session_key` made a burst of sub-agents slow down as it went (each child's turn
//! read the whole registry, 60 % of the daemon's CPU at 30,000 children).

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Mutex, OnceLock};

use sqlx::{Connection, Row};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

use crate::sql::verbatim::{literals, normalize, rust_files};

/// Tables a statement may read whole, and why.
const BOUNDED: &[(&str, &str)] = &[
    (
        "cron_jobs",
        "the jobs configured or made by tools, read when one may be due",
    ),
    (
        "pairings",
        "capped per channel (pairing requests expire and are capped)",
    ),
    ("subagent_worktrees", "swept once at start"),
    (
        "inbox",
        "the messages waiting for a run: each is claimed by the next one",
    ),
    (
        "exec_allowlist",
        "the commands an operator allowed, a short list per agent",
    ),
];

/// The statements sqlx logged from SQLite's worker threads (PostgreSQL's are logged on
/// the runtime's threads, and are not SQLite's to plan).
fn recorded() -> &'static Mutex<BTreeSet<String>> {
    static RECORDED: OnceLock<Mutex<BTreeSet<String>>> = OnceLock::new();
    RECORDED.get_or_init(Default::default)
}

struct Record;

#[derive(Default)]
struct Fields {
    summary: String,
    statement: String,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "summary" => self.summary = value.to_owned(),
            "db.statement" => self.statement = value.to_owned(),
            _ => {}
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.record_str(field, &format!("{value:?}"));
    }
}

impl<S: tracing::Subscriber> Layer<S> for Record {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        if event.metadata().target() != "sqlx::query" {
            return;
        }
        let on_sqlite = std::thread::current()
            .name()
            .is_some_and(|n| n.starts_with("sqlx-sqlite-worker"));
        if !on_sqlite {
            return;
        }
        let mut f = Fields::default();
        event.record(&mut f);
        // sqlx gives the whole text apart only when the summary shortened it.
        let text = if f.statement.trim().is_empty() {
            f.summary
        } else {
            f.statement
        };
        recorded()
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(text);
    }
}

/// The statements of a script, split where a statement ends a line.
fn statements(script: &str) -> Vec<String> {
    script
        .split(";\n")
        .map(|s| s.trim().trim_end_matches(';').trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The normalized statements of `texts` (the migrations, the tests' fixtures' literals).
fn written_in(texts: impl IntoIterator<Item = String>) -> BTreeSet<String> {
    texts
        .into_iter()
        .flat_map(|t| statements(&t))
        .map(|s| normalize(&s))
        .collect()
}

/// The text of a file.
fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// The table a plan's `SCAN name` reads: `name` itself, or the table `statement` gives
/// that alias (`FROM subagent_runs s`, `… AS s`); `None` for a subquery's alias.
fn table_of(name: &str, statement: &str, tables: &BTreeSet<String>) -> Option<String> {
    if tables.contains(name) {
        return Some(name.to_owned());
    }
    let words: Vec<&str> = statement
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .collect();
    words.iter().enumerate().find_map(|(i, w)| {
        if *w != name || i == 0 {
            return None;
        }
        let before = match words[i - 1] {
            a if a.eq_ignore_ascii_case("AS") && i >= 2 => words[i - 2],
            b => b,
        };
        tables.contains(before).then(|| before.to_owned())
    })
}

/// Whether a statement is the store's: not the migrations' nor a test's own, and not
/// the transaction control and pragmas around the scripts.
fn is_the_stores(s: &str, not_the_stores: &BTreeSet<String>) -> bool {
    let head = s.trim_start().to_ascii_uppercase();
    let control = [
        "BEGIN",
        "COMMIT",
        "ROLLBACK",
        "PRAGMA",
        "SAVEPOINT",
        "RELEASE",
    ]
    .iter()
    .any(|k| head.starts_with(k));
    !control && !s.contains("_sqlx_migrations") && !not_the_stores.contains(&normalize(s))
}

/// Catches: a statement of the store that reads a whole table that grows with use (a
/// lookup by a column without an index).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_statement_of_the_store_finds_its_rows_through_an_index() {
    let subscriber = tracing_subscriber::registry().with(
        Record.with_filter(
            tracing_subscriber::filter::Targets::new()
                .with_target("sqlx::query", tracing::Level::TRACE),
        ),
    );
    tracing::subscriber::set_global_default(subscriber)
        .expect("no other test of the store sets the global subscriber");

    super::engines::all_on_sqlite().await;

    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut fixtures = rust_files(&root.join("src/tests"));
    fixtures.extend(rust_files(&root.join("src/sqlite/tests")));
    fixtures.push(root.join("src/tests.rs"));
    fixtures.push(root.join("src/sqlite/tests.rs"));
    let mut not_the_stores = written_in(fixtures.iter().flat_map(|f| literals(&read(f))));
    let migrations = std::fs::read_dir(root.join("../migrations/sqlite")).unwrap();
    not_the_stores.extend(written_in(migrations.map(|e| read(&e.unwrap().path()))));

    let mut db = sqlx::SqliteConnection::connect("sqlite::memory:")
        .await
        .unwrap();
    crate::sqlite::migrate(&mut db).await.unwrap();

    let tables: BTreeSet<String> =
        sqlx::query_scalar("SELECT name FROM sqlite_master WHERE type = 'table'")
            .fetch_all(&mut db)
            .await
            .unwrap()
            .into_iter()
            .collect();
    let scripts = recorded()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    let mut planned = 0;
    let mut scans = Vec::new();
    for s in scripts.iter().flat_map(|s| statements(s)) {
        if !is_the_stores(&s, &not_the_stores) {
            continue;
        }
        let plan = sqlx::raw_sql(&format!("EXPLAIN QUERY PLAN {s}"))
            .fetch_all(&mut db)
            .await
            .unwrap_or_else(|e| panic!("cannot plan `{s}`: {e}"));
        planned += 1;
        for row in plan {
            let detail: String = row.get("detail");
            let Some(table) = detail.strip_prefix("SCAN ") else {
                continue;
            };
            let name = table.split(' ').next().unwrap_or_default();
            let Some(table) = table_of(name, &s, &tables) else {
                continue; // a subquery's rows, planned on their own lines
            };
            let indexed = detail.contains(" INDEX ");
            if !indexed && !BOUNDED.iter().any(|(t, _)| *t == table) {
                scans.push(format!("{detail}\n    in: {}", normalize(&s)));
            }
        }
    }
    // The workload ran: a quiet logger would make this test pass on nothing.
    assert!(planned > 60, "only {planned} statements were recorded");
    assert!(
        scans.is_empty(),
        "statements that read a whole table ({} of {planned}):\n{}",
        scans.len(),
        scans.join("\n")
    );
}
