//! The inbox on PostgreSQL: accepting a message (dedupe, the message, its run) and
//! claiming waiting messages into the transcript (the `messages_claim_inbox` trigger
//! deletes each claimed row), each one call of a server-side function of migration 0004
//! (`switchboard_accept`, `switchboard_accept_and_start`, `switchboard_claim`): one round
//! trip, its own transaction.

use sqlx::postgres::{PgArguments, PgRow};
use sqlx::query::Query;
use sqlx::{PgConnection, Postgres, Row};
use switchboard_channels::Origin;

use super::super::inbox::{decode_claimed, decode_waiting};
use super::super::runs::{claim_text, queued_row};
use super::super::{
    now_ms, to_json, Claim, InboxItem, NewInbound, NewRun, Result, RunRow, RunStatus, Started,
    StoreError, WaitingSession,
};
use super::starts::decode_start;
use super::Pg;

/// The placeholders of the accept's arguments, as [`bind_accept`] binds them (a macro, so
/// that `concat!` makes each statement's text a `&'static str`).
macro_rules! accept_args {
    () => {
        "$1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, \
         $20, $21"
    };
}

/// `LIMIT` of a claim: `NULL` takes every waiting message.
pub(super) fn claim_limit(claim: Claim) -> Option<i64> {
    match claim {
        Claim::All => None,
        Claim::Oldest => Some(1),
    }
}

/// Move waiting messages of `session_key` into the transcript of `session_id` (oldest
/// first, at most `limit`), on `c` (`switchboard_claim`). The rows are locked as they are
/// read (`FOR UPDATE`): a second claim of the same rows waits for the first and then finds
/// them gone, so a message is never claimed twice.
pub(super) async fn claim_in(
    c: &mut PgConnection,
    session_key: &str,
    session_id: &str,
    run_id: &str,
    limit: Option<i64>,
    now: i64,
) -> Result<Vec<InboxItem>> {
    // Twin of SQLite's claim statement in `claim_inbox`; the function is also the start's.
    let rows = sqlx::query(
        "SELECT inbox_id, origin, sender_id, content FROM switchboard_claim($1, $2, $3, $4, $5)",
    )
    .bind(session_key)
    .bind(session_id)
    .bind(run_id)
    .bind(limit)
    .bind(now)
    .fetch_all(&mut *c)
    .await?;
    let mut items = rows
        .iter()
        .map(decode_claimed)
        .collect::<Result<Vec<_>>>()?;
    // RETURNING comes in no promised order.
    items.sort_by_key(|i| i.id);
    Ok(items)
}

impl Pg {
    /// Move waiting messages of `session_key` into the transcript of `session_id` as user
    /// messages (all of them, or only the oldest), oldest first. Returns what moved.
    pub async fn claim_inbox(
        &self,
        session_key: &str,
        session_id: &str,
        run_id: &str,
        claim: Claim,
    ) -> Result<Vec<InboxItem>> {
        // One statement: its own transaction.
        let mut c = self.pool.acquire().await?;
        claim_in(
            &mut c,
            session_key,
            session_id,
            run_id,
            claim_limit(claim),
            now_ms(),
        )
        .await
    }

    /// Queue an inbound message for `session_key`.
    pub async fn push_inbox(
        &self,
        session_key: &str,
        origin: &Origin,
        sender_id: &str,
        text: &str,
    ) -> Result<i64> {
        let mut c = self.pool.acquire().await?;
        insert_inbox(&mut c, session_key, origin, sender_id, text, now_ms()).await
    }

    /// How many messages wait for `session_key`.
    pub async fn inbox_len(&self, session_key: &str) -> Result<i64> {
        let r = sqlx::query(crate::sql::inbox::COUNT.pg)
            .bind(session_key)
            .fetch_one(&self.pool)
            .await?;
        Ok(r.try_get("n")?)
    }

    /// Drop every waiting message of `session_key`.
    pub async fn clear_inbox(&self, session_key: &str) -> Result<u64> {
        let r = sqlx::query(crate::sql::inbox::CLEAR.pg)
            .bind(session_key)
            .execute(&self.pool)
            .await?;
        Ok(r.rows_affected())
    }

    /// Session keys that have waiting messages.
    pub async fn sessions_with_inbox(&self) -> Result<Vec<WaitingSession>> {
        let rows = sqlx::query(crate::sql::inbox::WAITING.pg)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(decode_waiting).collect()
    }

    /// Accept an inbound message in one transaction: record its platform id as taken
    /// (with a `message_id`), queue it and, with `run`, insert the queued run that takes
    /// it. `None` (and nothing stored) when that platform id was taken before.
    pub async fn accept_message(
        &self,
        m: &NewInbound<'_>,
        run: Option<&NewRun<'_>>,
    ) -> Result<Option<(i64, Option<RunRow>)>> {
        let q = sqlx::query(concat!(
            "SELECT switchboard_accept(",
            accept_args!(),
            ") AS id"
        ));
        let r = bind_accept(q, m, run, now_ms())?
            .fetch_one(&self.pool)
            .await?;
        let id: Option<i64> = r.try_get("id")?;
        Ok(id.map(|id| (id, run.map(queued_row))))
    }

    /// [`Pg::accept_message`] with a run that starts at once, in the same transaction
    /// (see [`Pg::start_run`]).
    pub async fn accept_and_start(
        &self,
        m: &NewInbound<'_>,
        run: &NewRun<'_>,
        model: Option<&str>,
    ) -> Result<Option<(i64, RunRow, Started)>> {
        let now = now_ms();
        let q = sqlx::query(concat!(
            "SELECT * FROM switchboard_accept_and_start(",
            accept_args!(),
            ", $22, $23)"
        ));
        let rows: Vec<PgRow> = bind_accept(q, m, Some(run), now)?
            .bind(model)
            .bind(claim_limit(run.claim()))
            .fetch_all(&self.pool)
            .await?;
        let Some((accepted, started)) = decode_start(&rows)? else {
            return Ok(None);
        };
        let id = accepted.ok_or_else(|| {
            StoreError::Corrupt(format!("the accept of run {} returned no inbox id", run.id))
        })?;
        let mut row = queued_row(run);
        row.status = RunStatus::Running;
        row.started_at = Some(now);
        row.model = row.model.or(model.map(str::to_string));
        Ok(Some((id, row, started)))
    }
}

/// Bind the accept's arguments (`$1…$21` of `switchboard_accept` and of
/// `switchboard_accept_and_start`): the message, the time, then the run (all NULL without
/// one).
fn bind_accept<'q>(
    q: Query<'q, Postgres, PgArguments>,
    m: &'q NewInbound<'q>,
    run: Option<&'q NewRun<'q>>,
    now: i64,
) -> Result<Query<'q, Postgres, PgArguments>> {
    let run_origin = run.and_then(|r| r.origin);
    Ok(q.bind(m.message_id)
        .bind(m.session_key)
        .bind(to_json(m.origin)?)
        .bind(m.origin.channel.as_str())
        .bind(m.origin.chat_id.as_str())
        .bind(m.origin.thread_id.as_deref())
        .bind(m.sender_id)
        .bind(m.text)
        .bind(now)
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
        .bind(run.and_then(|r| r.timeout_ms)))
}

/// Insert a waiting message; its inbox id.
pub(super) async fn insert_inbox(
    c: &mut PgConnection,
    session_key: &str,
    origin: &Origin,
    sender_id: &str,
    text: &str,
    now: i64,
) -> Result<i64> {
    let r = sqlx::query(crate::sql::inbox::INSERT.pg)
        .bind(session_key)
        .bind(to_json(origin)?)
        .bind(&origin.channel)
        .bind(&origin.chat_id)
        .bind(&origin.thread_id)
        .bind(sender_id)
        .bind(text)
        .bind(now)
        .fetch_one(&mut *c)
        .await?;
    Ok(r.try_get("id")?)
}

/// Insert a queued run.
pub(super) async fn insert_run(c: &mut PgConnection, run: &NewRun<'_>, now: i64) -> Result<()> {
    sqlx::query(crate::sql::runs::INSERT.pg)
        .bind(run.id)
        .bind(run.session_key)
        .bind(run.session_id)
        .bind(run.agent_id)
        .bind(run.lane)
        .bind(claim_text(run.claim_all))
        .bind(run.origin.map(to_json).transpose()?)
        .bind(run.origin.map(|o| o.channel.as_str()))
        .bind(run.origin.map(|o| o.chat_id.as_str()))
        .bind(run.origin.and_then(|o| o.thread_id.as_deref()))
        .bind(run.model)
        .bind(run.timeout_ms)
        .bind(now)
        .execute(&mut *c)
        .await?;
    Ok(())
}
