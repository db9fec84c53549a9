//! Starting a run: one script marks it running, claims its waiting messages into the
//! transcript and reads the transcript back (the accept-and-start script of `inbox`
//! repeats it after its accept).

use std::sync::Arc;

use super::super::decode::Columns;
use super::super::inbox::decode_claimed;
use super::super::messages::decode_message;
use super::super::{RunRow, SessionRow};
use super::inbox::Claim;
use super::messages::MessageRow;
use super::row::Row;
use super::writer::{script, Args, Params, Script};
use super::{now_ms, Result, Sqlite};
pub(super) use crate::starts::*;

/// Starting a run: every statement after the UPDATE acts only if it started the run
/// (after it, the run is `running` exactly when it was queued or running before). A run
/// resumed after a restart keeps the time of its first start. (A macro, so the
/// accept-and-start script can repeat it.)
macro_rules! start_sql {
    () => {
        "UPDATE runs SET status = 'running', started_at = COALESCE(started_at, ?), session_id = ?,
                 model = COALESCE(model, ?)
             WHERE id = ? AND status IN ('queued', 'running')
             RETURNING 'started' AS part, started_at;
         INSERT INTO messages (session_id, run_id, role, content, created_at, inbox_id, origin,
                 origin_channel, origin_chat_id, origin_thread_id, sender_id)
             SELECT ?, ?, 'user', text, ?, id, origin, origin_channel, origin_chat_id, origin_thread_id, sender_id
             FROM inbox
             WHERE session_key = ? AND EXISTS (SELECT 1 FROM runs WHERE id = ? AND status = 'running')
             ORDER BY id LIMIT ?
             RETURNING 'claimed' AS part, inbox_id, origin, sender_id, content;
         SELECT 'transcript' AS part, * FROM messages
             WHERE session_id = ? AND seq > ?
                 AND EXISTS (SELECT 1 FROM runs WHERE id = ? AND status = 'running')
             ORDER BY seq;\n"
    };
}
pub(super) use start_sql;

/// A run's start. Twin of PostgreSQL's function `switchboard_start_run`.
static START: Script = script!(start_sql!());

/// A run's start: the parameters of `start_sql!` ([`START`], and the second half of the
/// accept-and-start script).
pub(super) struct StartRun<'a> {
    pub(super) id: &'a str,
    pub(super) session_key: &'a str,
    pub(super) session_id: &'a str,
    pub(super) model: Option<&'a str>,
    pub(super) claim: Option<Claim>,
    /// The session's transcript as cached: the start reads the messages after it.
    pub(super) cached: Arc<Vec<MessageRow>>,
    pub(super) now: i64,
}

impl Params for StartRun<'_> {
    fn script(&self) -> &'static Script {
        &START
    }

    fn args(&self) -> Result<Args> {
        Ok(self.bind(Args::default()))
    }
}

impl StartRun<'_> {
    /// The binds of `start_sql!`, after `args`.
    pub(super) fn bind(&self, args: Args) -> Args {
        let StartRun {
            id,
            session_key,
            session_id,
            model,
            claim,
            now,
            ..
        } = *self;
        let limit: i64 = match claim {
            Some(Claim::All) => -1,
            Some(Claim::Oldest) => 1,
            None => 0,
        };
        args
            // UPDATE
            .bind(now)
            .bind(session_id)
            .bind(model)
            .bind(id)
            // INSERT … SELECT (the claim)
            .bind(session_id)
            .bind(id)
            .bind(now)
            .bind(session_key)
            .bind(id)
            .bind(limit)
            // SELECT (the transcript past the cached part)
            .bind(session_id)
            .bind(self.cached.last().map_or(0, |m| m.seq))
            .bind(id)
    }
}

impl Sqlite {
    /// What the script's `start_sql!` for `run` found (`None` if it did not start it),
    /// with the whole transcript: the cached part, then what the script read, which is
    /// cached in turn.
    pub(super) fn started(&self, run: &StartRun<'_>, rows: &[Row]) -> Result<Option<Started>> {
        let Some(mut started) = parse_started(rows)? else {
            return Ok(None);
        };
        if !run.cached.is_empty() {
            let read = std::mem::take(&mut started.transcript);
            started.transcript = Vec::with_capacity(run.cached.len() + read.len());
            started.transcript.extend(run.cached.iter().cloned());
            started.transcript.extend(read);
        }
        self.transcripts
            .put(run.session_id, started.transcript.clone());
        Ok(Some(started))
    }
}

/// What a script's `start_sql!` found; `None` if it did not start the run.
fn parse_started(rows: &[Row]) -> Result<Option<Started>> {
    let mut started = None;
    for r in rows {
        match r.text("part")? {
            "started" => {
                started.get_or_insert_with(Started::default).started_at =
                    r.opt_int("started_at")?;
            }
            "claimed" => started
                .get_or_insert_with(Started::default)
                .claimed
                .push(decode_claimed(r)?),
            "transcript" => started
                .get_or_insert_with(Started::default)
                .transcript
                .push(decode_message(r)?),
            _ => {}
        }
    }
    if let Some(s) = &mut started {
        // RETURNING comes in no promised order.
        s.claimed.sort_by_key(|i| i.id);
    }
    Ok(started)
}

impl Sqlite {
    /// Start a run, in one transaction (one script, one round trip): mark it running,
    /// move the session's waiting messages into its transcript (`claim`: all of them or
    /// only the oldest; `None` when resuming a run that claimed its messages before a
    /// restart) and read the transcript back. The session id is refreshed (a `/new` may
    /// have replaced it); the model is set unless the run has one.
    ///
    /// `None` when the run is no longer queued or running (it was stopped while it waited).
    pub async fn start_run(
        &self,
        id: &str,
        session_key: &str,
        session_id: &str,
        model: Option<&str>,
        claim: Option<Claim>,
    ) -> Result<Option<Started>> {
        let run = StartRun {
            id,
            session_key,
            session_id,
            model,
            claim,
            cached: self.transcripts.get(session_id),
            now: now_ms(),
        };
        let rows = self.conns.write(&run).await?;
        self.started(&run, &rows)
    }
}

impl Sqlite {
    /// [`Sqlite::ensure_session`], then [`Sqlite::accept_and_start`] in that session: the
    /// two calls a turn made before the seam had this method (on SQLite the session is
    /// usually a cache hit, so folding them would save nothing).
    pub async fn open_and_start(
        &self,
        turn: &NewTurn<'_>,
    ) -> Result<(SessionRow, Option<(i64, RunRow, Started)>)> {
        let m = &turn.inbound;
        let session = self
            .ensure_session(m.session_key, turn.agent_id, Some(m.origin))
            .await?;
        let run = turn.run(&session.id);
        let started = self.accept_and_start(m, &run, turn.model).await?;
        Ok((session, started))
    }
}
