//! The group-commit writer: the hot writes (a turn's) as scripts queued to one task
//! that owns the writer's script connection and commits whatever is queued together.
//!
//! Why: every commit writes each page it changed to the WAL, so turns that each commit
//! alone write the same pages again and again; and a sqlx-sqlite query is a hand-off to
//! the connection's own thread and back (two thread wake-ups, ~70 µs on a small VM, more
//! than the SQL of a turn's script). So a turn's write is one script of several
//! statements, the scripts queued while a batch ran share the next batch's transaction,
//! and the task runs them itself, on a connection of its own (rusqlite on the same
//! SQLite), with each statement prepared once and kept.
//!
//! - A batch of one runs its script in its own `BEGIN IMMEDIATE … COMMIT`.
//! - A batch of several runs its scripts in queue order in one transaction.
//! - Answers go back only after the commit. If anything in a batch fails, the batch is
//!   rolled back and each of its scripts runs again on its own, so a bad one fails alone
//!   and every answer is about exactly what was committed.
//!
//! The statements run on the runtime's thread that polls the task, a batch in a few
//! hundred microseconds: WAL appends go to the OS's page cache, the commit does not sync
//! (`synchronous = NORMAL`), and the WAL is checkpointed by another connection (`conns`).
//! The store's other writes take the same mutex as a batch, so they never collide; if
//! another process holds the write lock (an operator's `sqlite3` shell), the task waits
//! for it asleep, not in SQLite's busy handler on the runtime's thread.
//!
//! The task ends when the store's last handle is gone (the queue closes), after running
//! what was queued.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, ToSql};
use sqlx::SqliteConnection;
use tokio::sync::{mpsc, oneshot, Mutex};
use tokio::task::JoinHandle;

use super::row::Row;
use super::{Result, StoreError, BUSY_TIMEOUT};

/// Most scripts committed in one transaction.
const MAX_BATCH: usize = 128;

/// Prepared statements the script connection keeps: every statement of every script
/// (about sixty), with room.
const STATEMENTS: usize = 128;

/// A write of several statements. Build it with [`script!`]. Binds are positional (`?`)
/// across the statements, in order; tag the rows of each statement that returns any
/// with a `part` column. Its values come from a [`Params`] struct of its own.
pub(super) struct Script {
    /// The statements, `;`-terminated.
    pub(super) body: &'static str,
    /// How many `?` the body has: how many values its [`Params`] must bind.
    pub(super) placeholders: usize,
    /// The body split into its statements, on first use.
    pub(super) statements: OnceLock<Vec<&'static str>>,
}

impl Script {
    /// The body's statements, one by one.
    pub(super) fn statements(&self) -> &[&'static str] {
        self.statements.get_or_init(|| statements(self.body))
    }
}

/// A [`Script`] from its body: a string literal of `;`-terminated statements (or a macro
/// call that makes one, e.g. `concat!`).
macro_rules! script {
    ($body:expr) => {
        $crate::sqlite::writer::Script {
            body: $body,
            placeholders: $crate::sqlite::writer::placeholders($body),
            statements: std::sync::OnceLock::new(),
        }
    };
}
pub(super) use script;

/// `sql` split after each `;` outside quoted strings, identifiers and `--` comments; empty
/// pieces dropped. (A script has no trigger bodies, whose `;` this would split; a test
/// prepares every piece of every script as exactly one statement.)
pub(super) fn statements(sql: &'static str) -> Vec<&'static str> {
    let b = sql.as_bytes();
    let (mut out, mut from, mut i, mut quote) = (Vec::new(), 0, 0, 0u8);
    while i < b.len() {
        let c = b[i];
        if quote == b'\n' {
            if c == b'\n' {
                quote = 0;
            }
        } else if quote != 0 {
            if c == quote {
                quote = 0;
            }
        } else if c == b'\'' || c == b'"' {
            quote = c;
        } else if c == b'-' && b.get(i + 1) == Some(&b'-') {
            quote = b'\n';
        } else if c == b';' {
            out.push(&sql[from..=i]);
            from = i + 1;
        }
        i += 1;
    }
    out.push(&sql[from..]);
    out.retain(|s| !s.trim().is_empty() && s.trim() != ";");
    out.iter().map(|s| s.trim()).collect()
}

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

/// One value: bound (owned, since scripts travel to the writer task and may run twice) or
/// read back (a [`Row`]'s).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Null => ValueRef::Null,
            Value::Int(i) => ValueRef::Integer(*i),
            Value::Real(f) => ValueRef::Real(*f),
            Value::Text(s) => ValueRef::Text(s.as_bytes()),
            Value::Blob(b) => ValueRef::Blob(b),
        }))
    }
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

struct Pending {
    script: &'static Script,
    args: Args,
    reply: oneshot::Sender<Result<Vec<Row>>>,
}

/// What the writer task is asked to do.
enum Job {
    Write(Pending),
    /// Give back the memory the script connection keeps (its prepared statements and its
    /// unused page cache), when the database has gone quiet.
    Shrink(oneshot::Sender<()>),
}

/// The queue into the writer task. Dropping it lets the task finish what is queued and
/// end.
pub(super) struct Writer {
    queue: mpsc::UnboundedSender<Job>,
    _task: JoinHandle<()>,
}

/// A handle that asks the writer task to give its memory back, without keeping the task
/// alive (the checkpoint task's).
pub(super) struct Shrinker(mpsc::WeakUnboundedSender<Job>);

impl Shrinker {
    /// Drop the script connection's prepared statements and unused page cache; done when
    /// this returns (at once if the writer has ended).
    pub(super) async fn shrink(&self) {
        let Some(queue) = self.0.upgrade() else {
            return;
        };
        let (done, wait) = oneshot::channel();
        if queue.send(Job::Shrink(done)).is_ok() {
            let _ = wait.await;
        }
    }
}

impl Writer {
    /// Start the writer task with `scripts`, its own connection to the database, and
    /// `conn`, the store's other writer connection (for its direct writes and the WAL's
    /// checkpoint), whose mutex the task holds while a batch runs, so that the two take
    /// turns.
    pub(super) fn start(scripts: Connection, conn: Arc<Mutex<SqliteConnection>>) -> Writer {
        let (queue, rx) = mpsc::unbounded_channel();
        scripts.set_prepared_statement_cache_capacity(STATEMENTS);
        Writer {
            queue,
            _task: tokio::spawn(run(scripts, conn, rx)),
        }
    }

    /// A handle that asks this writer to give its memory back.
    pub(super) fn shrinker(&self) -> Shrinker {
        Shrinker(self.queue.downgrade())
    }

    /// Run `script` with `args`, committed (alone or with others) before this returns;
    /// the rows of all its statements, in order.
    pub(super) async fn write(&self, script: &'static Script, args: Args) -> Result<Vec<Row>> {
        let (reply, answer) = oneshot::channel();
        self.queue
            .send(Job::Write(Pending {
                script,
                args,
                reply,
            }))
            .map_err(|_| StoreError::Closed)?;
        answer.await.map_err(|_| StoreError::Closed)?
    }
}

async fn run(
    scripts: Connection,
    conn: Arc<Mutex<SqliteConnection>>,
    mut rx: mpsc::UnboundedReceiver<Job>,
) {
    let mut jobs = Vec::with_capacity(MAX_BATCH);
    let mut batch = std::collections::VecDeque::with_capacity(MAX_BATCH);
    while rx.recv_many(&mut jobs, MAX_BATCH).await > 0 {
        let mut shrunk = Vec::new();
        for job in jobs.drain(..) {
            match job {
                Job::Write(p) => batch.push_back(p),
                Job::Shrink(done) => shrunk.push(done),
            }
        }
        if !batch.is_empty() {
            let _turn = conn.lock().await;
            // The whole batch in one transaction; if that fails, each script alone.
            let mut together = batch.len() > 1;
            while !batch.is_empty() {
                let n = if together { batch.len() } else { 1 };
                let mut waits = BusyWaits::default();
                let began = loop {
                    match begin(&scripts) {
                        Ok(true) => break Ok(()),
                        Ok(false) => match waits.next() {
                            Some(pause) => tokio::time::sleep(pause).await,
                            None => break Err(busy()),
                        },
                        Err(e) => break Err(e),
                    }
                };
                let unit: Vec<Pending> = batch.drain(..n).collect();
                if let Err(e) = began {
                    tracing::warn!(error = %e, scripts = n, "cannot begin a write");
                    for p in unit {
                        let _ = p.reply.send(Err(again(&e).into()));
                    }
                    continue;
                }
                match finish(&scripts, &unit) {
                    Ok(rows) => {
                        for (p, rows) in unit.into_iter().zip(rows) {
                            let _ = p.reply.send(Ok(rows));
                        }
                    }
                    Err(e) if n > 1 => {
                        tracing::debug!(error = %e, scripts = n, "batch rolled back; running its scripts one by one");
                        for p in unit.into_iter().rev() {
                            batch.push_front(p);
                        }
                        together = false;
                    }
                    Err(e) => {
                        if let Some(p) = unit.into_iter().next() {
                            let _ = p.reply.send(Err(e));
                        }
                    }
                }
            }
        }
        if !shrunk.is_empty() {
            shrink(&scripts);
            for done in shrunk {
                let _ = done.send(());
            }
        }
    }
}

/// `BEGIN IMMEDIATE`: `false` when another process holds the write lock (the script
/// connection has no busy timeout: the task waits asleep, `BusyWaits`, not in SQLite's
/// busy handler on the runtime's thread).
fn begin(c: &Connection) -> rusqlite::Result<bool> {
    match c.prepare_cached("BEGIN IMMEDIATE")?.raw_execute() {
        Ok(_) => Ok(true),
        Err(rusqlite::Error::SqliteFailure(e, _))
            if e.code == rusqlite::ErrorCode::DatabaseBusy =>
        {
            Ok(false)
        }
        Err(e) => Err(e),
    }
}

/// The same failure once more, for each script of a batch that could not begin.
fn again(e: &rusqlite::Error) -> rusqlite::Error {
    match e {
        rusqlite::Error::SqliteFailure(f, m) => rusqlite::Error::SqliteFailure(*f, m.clone()),
        other => rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_ERROR),
            Some(other.to_string()),
        ),
    }
}

/// The pauses between attempts to begin while another process writes: 1, 2, 4 … ms, at
/// most 100 ms each, for as long as the store's busy timeout.
#[derive(Default)]
struct BusyWaits {
    waited: Duration,
    next: Duration,
}

impl Iterator for BusyWaits {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        if self.waited >= BUSY_TIMEOUT {
            return None;
        }
        let pause = self.next.max(Duration::from_millis(1));
        self.next = (pause * 2).min(Duration::from_millis(100));
        self.waited += pause;
        Some(pause)
    }
}

/// The error of a write that found the database locked by another process for the whole
/// busy timeout.
fn busy() -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
        Some("another process held the database's write lock for the whole busy timeout".into()),
    )
}

/// The scripts of `unit` in the transaction just begun, then `COMMIT`; their rows per
/// script. Rolled back if a script or the commit fails.
fn finish(c: &Connection, unit: &[Pending]) -> Result<Vec<Vec<Row>>> {
    let r = unit
        .iter()
        .map(|p| run_script(c, p.script, &p.args))
        .collect::<Result<Vec<_>>>()
        .and_then(|rows| {
            c.prepare_cached("COMMIT")?.raw_execute()?;
            Ok(rows)
        });
    if r.is_err() {
        rollback(c);
    }
    r
}

/// One script's statements in order, `args` bound across them; the rows they returned.
fn run_script(c: &Connection, script: &Script, args: &Args) -> Result<Vec<Row>> {
    let mut values = args.0.iter();
    let mut rows = Vec::new();
    for sql in script.statements() {
        let mut stmt = c.prepare_cached(sql)?;
        for i in 1..=stmt.parameter_count() {
            let v = values.next().ok_or_else(|| {
                StoreError::Corrupt(format!("too few values for the script\n{}", script.body))
            })?;
            stmt.raw_bind_parameter(i, v)?;
        }
        let names: Arc<[Box<str>]> = stmt.column_names().into_iter().map(Box::from).collect();
        let mut read = stmt.raw_query();
        while let Some(row) = read.next()? {
            rows.push(Row::read(&names, row)?);
        }
    }
    Ok(rows)
}

/// Give back the prepared statements and the unused page cache. An error is logged.
fn shrink(c: &Connection) {
    c.flush_prepared_statement_cache();
    if let Err(e) = c.execute_batch("PRAGMA shrink_memory") {
        tracing::warn!(error = %e, "cannot release the database's cache");
    }
}

/// Roll back whatever a failed script or batch left open. "No transaction is active" (it
/// failed before `BEGIN`, or SQLite rolled back by itself) is not an error.
fn rollback(c: &Connection) {
    if c.is_autocommit() {
        return;
    }
    if let Err(e) = c.execute_batch("ROLLBACK") {
        tracing::debug!(error = %e, "rollback after a failed write");
    }
}
