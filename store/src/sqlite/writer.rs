//! The group-commit writer: the hot writes (a turn's) as scripts queued to one task
//! that owns their use of the writer connection and commits whatever is queued together.
//!
//! Why: every sqlx-sqlite query is a hand-off to the connection's worker thread and back
//! (two thread wake-ups, which on a small VM cost more than the SQL), and every commit
//! writes each page it changed to the WAL. Turns that each lock the writer, run their
//! statements one by one and commit keep the connection idle between hand-offs and write
//! the same pages again and again. Here a turn's write is one script (several statements,
//! one round trip), and the scripts that queued up while a batch ran share the next
//! batch's transaction, run in chunks of the same script (one round trip per chunk).
//!
//! - A batch of one runs its script's own `BEGIN IMMEDIATE … COMMIT` (one round trip).
//! - A batch of several runs its scripts grouped by kind in chunks of 1, 2, 4, 8 or 16
//!   copies (each chunk a cached prepared query, its copies' binds one after another), in
//!   one transaction: the first chunk begins with `BEGIN IMMEDIATE`, the last ends with
//!   `COMMIT`. Scripts of a batch were all queued before any of
//!   them was answered, so running them grouped rather than in queue order is a valid
//!   order: no caller can have seen one's result before another was sent.
//! - Answers go back only after the commit. If anything in a batch fails, the batch is
//!   rolled back and each of its scripts runs again on its own, so a bad one fails alone
//!   and every answer is about exactly what was committed.
//!
//! The task ends when the store's last handle is gone (the queue closes), after running
//! what was queued.

use std::sync::{Arc, OnceLock};

use sqlx::sqlite::{SqliteArguments, SqliteRow};
use sqlx::{Arguments, Row, SqliteConnection};
use tokio::sync::{mpsc, oneshot, Mutex};
use tokio::task::JoinHandle;

use super::{Result, StoreError};

/// Most scripts committed in one transaction.
const MAX_BATCH: usize = 128;

/// Chunk sizes, largest first: a group of `n` copies of one script runs as the binary
/// decomposition of `n` (13 = 8 + 4 + 1).
const CHUNKS: [usize; 5] = [16, 8, 4, 2, 1];

/// The row that opens each copy in a chunk, to split the chunk's rows between copies.
const MARK: &str = "SELECT 'op' AS part;\n";

/// A write of several statements. Build it with [`script!`]. Binds are positional (`?`)
/// across the statements, in order; tag the rows of each statement that returns any
/// with a `part` column (a chunk's copies are told apart by rows whose `part` is `op`).
/// Its values come from a [`Params`] struct of its own.
pub(super) struct Script {
    /// `BEGIN IMMEDIATE; <body> COMMIT;`
    pub(super) solo: &'static str,
    /// The statements, run inside a batch's transaction.
    pub(super) body: &'static str,
    /// How many `?` the body has: how many values its [`Params`] must bind.
    pub(super) placeholders: usize,
    /// Per chunk size of `CHUNKS`, four texts: the body repeated that many times (each
    /// copy opened by MARK), alone, after `BEGIN IMMEDIATE`, before `COMMIT`, and both.
    pub(super) chunks: OnceLock<Vec<[String; 4]>>,
}

impl Script {
    /// The text of a chunk of `CHUNKS[i]` copies, opening and/or closing the batch's
    /// transaction (which saves a round trip each).
    fn chunk(&self, i: usize, begin: bool, commit: bool) -> &str {
        let texts = &self.chunks.get_or_init(|| {
            CHUNKS
                .iter()
                .map(|&n| {
                    let copies = format!("{MARK}{}\n", self.body).repeat(n);
                    [
                        copies.clone(),
                        format!("BEGIN IMMEDIATE;\n{copies}"),
                        format!("{copies}COMMIT;"),
                        format!("BEGIN IMMEDIATE;\n{copies}COMMIT;"),
                    ]
                })
                .collect()
        })[i];
        &texts[usize::from(begin) + 2 * usize::from(commit)]
    }
}

/// A [`Script`] from its body: a string literal of `;`-terminated statements (or a macro
/// call that makes one, e.g. `concat!`).
macro_rules! script {
    ($body:expr) => {
        $crate::sqlite::writer::Script {
            solo: concat!("BEGIN IMMEDIATE;\n", $body, "\nCOMMIT;"),
            body: $body,
            placeholders: $crate::sqlite::writer::placeholders($body),
            chunks: std::sync::OnceLock::new(),
        }
    };
}
pub(super) use script;

/// The `?` placeholders of `sql`, outside quoted strings and identifiers.
pub(super) const fn placeholders(sql: &str) -> usize {
    let b = sql.as_bytes();
    let (mut i, mut n, mut quote) = (0, 0, 0u8);
    while i < b.len() {
        let c = b[i];
        if quote != 0 {
            if c == quote {
                quote = 0;
            }
        } else if c == b'\'' || c == b'"' {
            quote = c;
        } else if c == b'?' {
            n += 1;
        }
        i += 1;
    }
    n
}

/// A script's parameters, owned by a struct per script: the values it binds, in the
/// order of the script's `?` (a test checks every script's count, see `store/tests`).
pub(super) trait Params {
    /// The script these are the parameters of.
    fn script(&self) -> &'static Script;
    /// The values, in bind order.
    fn args(&self) -> Result<Args>;
}

/// One bound value, owned (scripts travel to the writer task, and may run twice).
#[derive(Debug, Clone)]
pub(super) enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int(v)
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Value {
        Value::Int(v.into())
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Value {
        Value::Real(v)
    }
}

impl From<String> for Value {
    fn from(v: String) -> Value {
        Value::Text(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::Text(v.to_string())
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

/// A script's arguments, in bind order.
#[derive(Debug, Default)]
pub(super) struct Args(Vec<Value>);

impl Args {
    pub(super) fn bind(mut self, value: impl Into<Value>) -> Self {
        self.0.push(value.into());
        self
    }

    /// How many values are bound.
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }
}

/// Arguments for sqlx: the values of `args`, one list after another.
fn sqlite_args<'a>(args: impl IntoIterator<Item = &'a Args>) -> SqliteArguments<'static> {
    let mut out = SqliteArguments::default();
    for v in args.into_iter().flat_map(|a| &a.0) {
        // Encoding these types cannot fail.
        let _ = match v {
            Value::Null => out.add(None::<i64>),
            Value::Int(i) => out.add(*i),
            Value::Real(f) => out.add(*f),
            Value::Text(s) => out.add(s.clone()),
        };
    }
    out
}

struct Pending {
    script: &'static Script,
    args: Args,
    reply: oneshot::Sender<Result<Vec<SqliteRow>>>,
}

/// The queue into the writer task. Dropping it lets the task finish what is queued and
/// end.
pub(super) struct Writer {
    queue: mpsc::UnboundedSender<Pending>,
    _task: JoinHandle<()>,
}

impl Writer {
    /// Start the writer task on `conn` (shared with the store's direct writes, which take
    /// turns with the batches on its mutex).
    pub(super) fn start(conn: Arc<Mutex<SqliteConnection>>) -> Writer {
        let (queue, rx) = mpsc::unbounded_channel();
        Writer {
            queue,
            _task: tokio::spawn(run(conn, rx)),
        }
    }

    /// Run `script` with `args`, committed (alone or with others) before this returns;
    /// the rows of all its statements, in order.
    pub(super) async fn write(
        &self,
        script: &'static Script,
        args: Args,
    ) -> Result<Vec<SqliteRow>> {
        let (reply, answer) = oneshot::channel();
        self.queue
            .send(Pending {
                script,
                args,
                reply,
            })
            .map_err(|_| StoreError::Closed)?;
        answer.await.map_err(|_| StoreError::Closed)?
    }
}

async fn run(conn: Arc<Mutex<SqliteConnection>>, mut rx: mpsc::UnboundedReceiver<Pending>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let mut guard = conn.lock().await;
        let c = &mut *guard;
        if batch.len() > 1 {
            // Same scripts next to each other, queue order kept among them.
            batch.sort_by_key(|p| p.script as *const Script);
            match together(c, &batch).await {
                Ok(rows) => {
                    for (p, rows) in batch.drain(..).zip(rows) {
                        let _ = p.reply.send(Ok(rows));
                    }
                    continue;
                }
                Err(Failed::Committed(e)) => {
                    // Committed, so not to be run again; only its answers are lost.
                    tracing::error!(error = %e, "a committed batch returned rows it cannot split");
                    for p in batch.drain(..) {
                        let _ = p.reply.send(Err(StoreError::Corrupt(e.to_string())));
                    }
                    continue;
                }
                Err(Failed::RolledBack(e)) => {
                    tracing::debug!(error = %e, scripts = batch.len(), "batch rolled back; running its scripts one by one");
                    rollback(c).await;
                }
            }
        }
        for p in batch.drain(..) {
            let r = solo(c, &p).await;
            let _ = p.reply.send(r);
        }
    }
}

/// One script in a transaction of its own; rolled back if any statement fails.
async fn solo(c: &mut SqliteConnection, p: &Pending) -> Result<Vec<SqliteRow>> {
    let r = sqlx::query_with(p.script.solo, sqlite_args([&p.args]))
        .fetch_all(&mut *c)
        .await;
    if r.is_err() {
        rollback(c).await;
    }
    Ok(r?)
}

/// Why a batch failed: before its commit (nothing of it kept) or after.
enum Failed {
    RolledBack(StoreError),
    Committed(StoreError),
}

/// Every script of `batch` (sorted by script) in one transaction; its rows per script.
/// The first chunk opens the transaction and the last one commits it.
async fn together(
    c: &mut SqliteConnection,
    batch: &[Pending],
) -> std::result::Result<Vec<Vec<SqliteRow>>, Failed> {
    // (first script of the chunk, index into CHUNKS, its copies)
    let mut plan: Vec<(usize, usize, usize)> = Vec::new();
    let mut at = 0;
    while let Some(first) = batch.get(at) {
        let same = batch[at..]
            .iter()
            .take_while(|p| std::ptr::eq(p.script, first.script))
            .count();
        let (i, &n) = CHUNKS
            .iter()
            .enumerate()
            .find(|(_, &n)| n <= same)
            .expect("CHUNKS ends with 1");
        plan.push((at, i, n));
        at += n;
    }
    let mut chunks = Vec::with_capacity(plan.len());
    for (k, &(at, i, n)) in plan.iter().enumerate() {
        let copies = &batch[at..at + n];
        let text = copies[0].script.chunk(i, k == 0, k + 1 == plan.len());
        let rows = sqlx::query_with(text, sqlite_args(copies.iter().map(|p| &p.args)))
            .fetch_all(&mut *c)
            .await
            .map_err(|e| Failed::RolledBack(e.into()))?;
        chunks.push((rows, n));
    }
    let mut out = Vec::with_capacity(batch.len());
    for (rows, n) in chunks {
        split_copies(rows, n, &mut out).map_err(Failed::Committed)?;
    }
    Ok(out)
}

/// Split a chunk's rows at its `n` MARK rows, into `out`.
fn split_copies(rows: Vec<SqliteRow>, n: usize, out: &mut Vec<Vec<SqliteRow>>) -> Result<()> {
    let start = out.len();
    for r in rows {
        let part: String = r.try_get("part")?;
        if part == "op" {
            out.push(Vec::new());
        } else if let Some(copy) = out[start..].last_mut() {
            copy.push(r);
        }
    }
    if out.len() - start != n {
        return Err(StoreError::Corrupt(format!(
            "a chunk of {n} scripts returned {} of them",
            out.len() - start
        )));
    }
    Ok(())
}

/// Roll back whatever a failed script or batch left open. "No transaction is active" (it
/// failed before `BEGIN`, or SQLite rolled back by itself) is not an error.
async fn rollback(c: &mut SqliteConnection) {
    if let Err(e) = sqlx::query("ROLLBACK").execute(c).await {
        tracing::debug!(error = %e, "rollback after a failed write");
    }
}
