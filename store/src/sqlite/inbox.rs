//! The inbox: messages waiting for their session's next run (or, in steer mode, for the
//! running turn's next model call). Claiming moves them into the transcript atomically.

use sqlx::Row;
use switchboard_channels::Origin;

use super::super::decode::Columns;
use super::super::inbox::{decode_claimed, decode_waiting};
use super::row::Row as ScriptRow;
use super::runs::{claim_text, queued_row, NewRun, RunRow, RunStatus};
use super::starts::{start_sql, StartRun, Started};
use super::writer::{script, Args, Params, Script};
use super::{now_ms, to_json, Result, Sqlite};
pub(super) use crate::inbox::*;

pub(super) async fn insert_inbox<'e, E>(
    ex: E,
    session_key: &str,
    origin: &Origin,
    sender_id: &str,
    text: &str,
) -> Result<i64>
where
    E: sqlx::Executor<'e, Database = sqlx::Sqlite>,
{
    let r = sqlx::query(crate::sql::inbox::INSERT.sqlite)
        .bind(session_key)
        .bind(to_json(origin)?)
        .bind(&origin.channel)
        .bind(&origin.chat_id)
        .bind(&origin.thread_id)
        .bind(sender_id)
        .bind(text)
        .bind(now_ms())
        .fetch_one(ex)
        .await?;
    Ok(r.try_get("id")?)
}

impl Sqlite {
    /// Move waiting messages of `session_key` into the transcript of `session_id` as user
    /// messages (all of them, or only the oldest), oldest first. Returns what moved.
    ///
    /// One statement: `INSERT … SELECT` copies them (with their origin and sender) and the
    /// `messages_claim_inbox` trigger deletes each inbox row, atomically, holding the
    /// writer for that statement only.
    pub async fn claim_inbox(
        &self,
        session_key: &str,
        session_id: &str,
        run_id: &str,
        claim: Claim,
    ) -> Result<Vec<InboxItem>> {
        let limit: i64 = match claim {
            Claim::All => -1,
            Claim::Oldest => 1,
        };
        // Twin of PostgreSQL's `switchboard_claim` (which locks the rows it copies: SQLite has one writer).
        let rows = sqlx::query(
            "INSERT INTO messages (session_id, run_id, role, content, created_at, inbox_id, origin,
                 origin_channel, origin_chat_id, origin_thread_id, sender_id)
             SELECT ?, ?, 'user', text, ?, id, origin, origin_channel, origin_chat_id, origin_thread_id, sender_id
             FROM inbox WHERE session_key = ? ORDER BY id LIMIT ?
             RETURNING inbox_id, origin, sender_id, content",
        )
        .bind(session_id)
        .bind(run_id)
        .bind(now_ms())
        .bind(session_key)
        .bind(limit)
        .fetch_all(&mut *self.writer().await)
        .await?;
        let mut items = rows
            .iter()
            .map(decode_claimed)
            .collect::<Result<Vec<_>>>()?;
        // RETURNING comes in no promised order.
        items.sort_by_key(|i| i.id);
        Ok(items)
    }
}

impl Sqlite {
    /// Queue an inbound message for `session_key`.
    pub async fn push_inbox(
        &self,
        session_key: &str,
        origin: &Origin,
        sender_id: &str,
        text: &str,
    ) -> Result<i64> {
        insert_inbox(
            &mut *self.writer().await,
            session_key,
            origin,
            sender_id,
            text,
        )
        .await
    }

    /// How many messages wait for `session_key`.
    pub async fn inbox_len(&self, session_key: &str) -> Result<i64> {
        let r = sqlx::query(crate::sql::inbox::COUNT.sqlite)
            .bind(session_key)
            .fetch_one(&mut *self.reader().await)
            .await?;
        Ok(r.try_get("n")?)
    }

    /// Drop every waiting message of `session_key` (used by `/stop` and `/new`).
    pub async fn clear_inbox(&self, session_key: &str) -> Result<u64> {
        let r = sqlx::query(crate::sql::inbox::CLEAR.sqlite)
            .bind(session_key)
            .execute(&mut *self.writer().await)
            .await?;
        Ok(r.rows_affected())
    }
}

impl Sqlite {
    /// Session keys that have waiting messages.
    pub async fn sessions_with_inbox(&self) -> Result<Vec<WaitingSession>> {
        let rows = sqlx::query(crate::sql::inbox::WAITING.sqlite)
            .fetch_all(&mut *self.reader().await)
            .await?;
        rows.iter().map(decode_waiting).collect()
    }
}

/// Accepting a message. `changes()` is the count of the statement just before: the
/// message is queued only if its id was new (or it has none), the run only if the message
/// was. (A macro, so the accept-and-start script can repeat it.)
macro_rules! accept_sql {
    () => {
        "INSERT INTO inbound_seen (channel, message_id, seen_at) SELECT ?, ?, ? WHERE ? IS NOT NULL
             ON CONFLICT DO NOTHING;
         INSERT INTO inbox (session_key, origin, origin_channel, origin_chat_id, origin_thread_id, sender_id, text, created_at)
             SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE ? IS NULL OR changes() = 1
             RETURNING 'inbox' AS part, id;
         INSERT INTO runs (id, session_key, session_id, agent_id, lane, claim, status, origin,
                 origin_channel, origin_chat_id, origin_thread_id, model, timeout_ms, created_at)
             SELECT ?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ? WHERE ? AND changes() = 1;\n"
    };
}

/// Accepting a message (and its run). Twin of PostgreSQL's function `switchboard_accept`.
static ACCEPT: Script = script!(accept_sql!());

/// Accepting a message with a run that starts at once: the accept, then the start (which
/// finds the run queued only if the accept inserted it). Twin of `switchboard_accept_and_start`.
static ACCEPT_START: Script = script!(concat!(accept_sql!(), start_sql!()));

/// Accepting a message (and maybe its run): the parameters of `accept_sql!` ([`ACCEPT`],
/// and the first half of [`ACCEPT_START`]).
pub(super) struct Accept<'a> {
    pub(super) message: &'a NewInbound<'a>,
    /// The queued run that takes it, if one is needed.
    pub(super) run: Option<&'a NewRun<'a>>,
    pub(super) now: i64,
}

impl Params for Accept<'_> {
    fn script(&self) -> &'static Script {
        &ACCEPT
    }

    fn args(&self) -> Result<Args> {
        self.bind(Args::default())
    }
}

impl Accept<'_> {
    /// The binds of `accept_sql!`, after `args`.
    fn bind(&self, args: Args) -> Result<Args> {
        let Accept {
            message: m,
            run,
            now,
        } = *self;
        let run_origin = run.and_then(|r| r.origin);
        Ok(args
            // inbound_seen
            .bind(m.origin.channel.as_str())
            .bind(m.message_id)
            .bind(now)
            .bind(m.message_id)
            // inbox
            .bind(m.session_key)
            .bind(to_json(m.origin)?)
            .bind(m.origin.channel.as_str())
            .bind(m.origin.chat_id.as_str())
            .bind(m.origin.thread_id.as_deref())
            .bind(m.sender_id)
            .bind(m.text)
            .bind(now)
            .bind(m.message_id)
            // runs
            .bind(run.map(|r| r.id))
            .bind(run.map(|r| r.session_key))
            .bind(run.map(|r| r.session_id))
            .bind(run.map(|r| r.agent_id))
            .bind(run.map(|r| r.lane))
            .bind(run.map(|r| claim_text(r.claim_all)))
            .bind(run_origin.map(to_json).transpose()?)
            .bind(run_origin.map(|o| o.channel.as_str()))
            .bind(run_origin.map(|o| o.chat_id.as_str()))
            .bind(run_origin.and_then(|o| o.thread_id.as_deref()))
            .bind(run.and_then(|r| r.model))
            .bind(run.and_then(|r| r.timeout_ms))
            .bind(now)
            .bind(run.is_some()))
    }
}

/// The parameters of [`ACCEPT_START`]: the accept's, then the start's.
pub(super) struct AcceptStart<'a> {
    pub(super) accept: Accept<'a>,
    pub(super) start: &'a StartRun<'a>,
}

impl Params for AcceptStart<'_> {
    fn script(&self) -> &'static Script {
        &ACCEPT_START
    }

    fn args(&self) -> Result<Args> {
        Ok(self.start.bind(self.accept.bind(Args::default())?))
    }
}

/// The inbox id a script's `accept_sql!` returned, if it stored the message.
fn accepted_id(rows: &[ScriptRow]) -> Result<Option<i64>> {
    for r in rows {
        if r.text("part")? == "inbox" {
            return Ok(Some(r.int("id")?));
        }
    }
    Ok(None)
}

impl Sqlite {
    /// Accept an inbound message, in one transaction (one script, one round trip): record
    /// its platform id as taken (with a `message_id`), queue it in the inbox and, with
    /// `run`, insert the queued run that will take it.
    ///
    /// Returns the inbox id and the run's row; `None` (and nothing stored) when that
    /// platform id was taken before.
    pub async fn accept_message(
        &self,
        m: &NewInbound<'_>,
        run: Option<&NewRun<'_>>,
    ) -> Result<Option<(i64, Option<RunRow>)>> {
        let accept = Accept {
            message: m,
            run,
            now: now_ms(),
        };
        let rows = self.conns.write(&accept).await?;
        Ok(accepted_id(&rows)?.map(|id| (id, run.map(queued_row))))
    }

    /// [`Sqlite::accept_message`] with a run that starts at once, in the same transaction
    /// (see [`Sqlite::start_run`]; `model` is the model it starts with unless `run` names
    /// one): for a session that nothing runs for, whose lane has a free slot.
    ///
    /// Returns the inbox id, the run's row (running) and what its start found; `None` (and
    /// nothing stored) when that platform id was taken before.
    pub async fn accept_and_start(
        &self,
        m: &NewInbound<'_>,
        run: &NewRun<'_>,
        model: Option<&str>,
    ) -> Result<Option<(i64, RunRow, Started)>> {
        let now = now_ms();
        let claim = run.claim();
        let start = StartRun {
            id: run.id,
            session_key: run.session_key,
            session_id: run.session_id,
            model,
            claim: Some(claim),
            cached: self.transcripts.get(run.session_id),
            now,
        };
        let accept = Accept {
            message: m,
            run: Some(run),
            now,
        };
        let rows = self
            .conns
            .write(&AcceptStart {
                accept,
                start: &start,
            })
            .await?;
        let (Some(id), Some(started)) = (accepted_id(&rows)?, self.started(&start, &rows)?) else {
            return Ok(None);
        };
        let mut row = queued_row(run);
        row.status = RunStatus::Running;
        row.started_at = Some(now);
        row.model = row.model.or(model.map(str::to_string));
        Ok(Some((id, row, started)))
    }
}
