//! Starting a run on PostgreSQL: one call of `switchboard_start_run` (migration 0004), one
//! round trip and its own transaction: mark the run running (the row lock of its UPDATE
//! serializes two starts of one run), claim its waiting messages into the transcript and
//! read the transcript back whole (no transcript cache on this engine). A turn whose run
//! starts at once is one call of `switchboard_open_and_start` (migration 0005): the
//! session, the accept and the start. The rows both answer with, shared with
//! `switchboard_accept_and_start`, are decoded here.

use sqlx::postgres::PgRow;

use uuid::Uuid;

use super::super::decode::Columns;
use super::super::inbox::decode_claimed;
use super::super::messages::decode_message;
use super::super::runs::claim_text;
use super::super::runs::queued_row;
use super::super::sessions::decode_session;
use super::super::{
    now_ms, to_json, Claim, NewTurn, Result, RunRow, RunStatus, SessionRow, Started, StoreError,
};
use super::inbox::claim_limit;
use super::Pg;

/// What the rows of a start say: the inbox id of an accept (`switchboard_accept_and_start`
/// only) and the start. `None` when there is no `start` row: the run was no longer queued
/// or running (or the accept's platform id was taken), and nothing changed.
pub(super) fn decode_start(rows: &[PgRow]) -> Result<Option<(Option<i64>, Started)>> {
    let mut accepted = None;
    let mut started_at = None;
    let mut claimed = Vec::new();
    let mut transcript = Vec::with_capacity(rows.len());
    for r in rows {
        match r.text("kind")? {
            "accepted" => accepted = Some(r.int("inbox_id")?),
            "start" => started_at = Some(r.opt_int("started_at")?),
            "claim" => claimed.push(decode_claimed(r)?),
            "message" => transcript.push(decode_message(r)?),
            // `switchboard_open_and_start`'s session, read by its caller.
            "session" => {}
            other => {
                return Err(StoreError::Corrupt(format!(
                    "a start answered with a row of kind {other}"
                )))
            }
        }
    }
    let Some(started_at) = started_at else {
        return Ok(None);
    };
    // The function returns its rows in the order it made them; sorting keeps the promise
    // (oldest first) without relying on that.
    claimed.sort_by_key(|i| i.id);
    transcript.sort_by_key(|m| m.seq);
    Ok(Some((
        accepted,
        Started {
            claimed,
            transcript,
            started_at,
        },
    )))
}

impl Pg {
    /// Start a run, in one transaction: mark it running, move the session's waiting
    /// messages into its transcript (`claim`; `None` when resuming a run that claimed its
    /// messages before a restart) and read the transcript back. `None` when the run is no
    /// longer queued or running.
    pub async fn start_run(
        &self,
        id: &str,
        session_key: &str,
        session_id: &str,
        model: Option<&str>,
        claim: Option<Claim>,
    ) -> Result<Option<Started>> {
        let rows = sqlx::query("SELECT * FROM switchboard_start_run($1, $2, $3, $4, $5, $6, $7)")
            .bind(id)
            .bind(session_key)
            .bind(session_id)
            .bind(model)
            .bind(claim.is_some())
            .bind(claim.and_then(claim_limit))
            .bind(now_ms())
            .fetch_all(&self.pool)
            .await
            .map_err(super::shared::busy)?;
        Ok(decode_start(&rows)?.map(|(_, started)| started))
    }
}

impl Pg {
    /// The active session of the turn's key (created, or its origin replaced, as
    /// [`Pg::ensure_session`] does), then the accept and the start of the turn's run in it,
    /// in one call of `switchboard_open_and_start`: one round trip, one transaction. When
    /// the platform id was taken before, only the session is stored.
    pub async fn open_and_start(
        &self,
        turn: &NewTurn<'_>,
    ) -> Result<(SessionRow, Option<(i64, RunRow, Started)>)> {
        let m = &turn.inbound;
        let now = now_ms();
        let claim = if turn.claim_all {
            Claim::All
        } else {
            Claim::Oldest
        };
        let rows = sqlx::query(
            "SELECT * FROM switchboard_open_and_start($1, $2, $3, $4, $5, $6, $7, $8, $9, $10,
                 $11, $12, $13, $14, $15, $16)",
        )
        .bind(Uuid::new_v4().to_string())
        .bind(m.session_key)
        .bind(turn.agent_id)
        .bind(m.message_id)
        .bind(to_json(m.origin)?)
        .bind(m.origin.channel.as_str())
        .bind(m.origin.chat_id.as_str())
        .bind(m.origin.thread_id.as_deref())
        .bind(m.sender_id)
        .bind(m.text)
        .bind(now)
        .bind(turn.run_id)
        .bind(turn.lane)
        .bind(claim_text(turn.claim_all))
        .bind(turn.model)
        .bind(claim_limit(claim))
        .fetch_all(&self.pool)
        .await
        .map_err(super::shared::busy)?;
        let session = rows
            .iter()
            .find(|r| r.text("kind").ok() == Some("session"))
            .map(decode_session)
            .transpose()?
            .ok_or_else(|| {
                StoreError::Corrupt(format!("the turn of run {} found no session", turn.run_id))
            })?;
        let Some((accepted, started)) = decode_start(&rows)? else {
            return Ok((session, None));
        };
        let id = accepted.ok_or_else(|| {
            StoreError::Corrupt(format!(
                "the turn of run {} returned no inbox id",
                turn.run_id
            ))
        })?;
        let mut row = queued_row(&turn.run(&session.id));
        row.status = RunStatus::Running;
        row.started_at = Some(now);
        row.model = turn.model.map(str::to_string);
        Ok((session, Some((id, row, started))))
    }
}
