//! Starting a run on PostgreSQL: one call of `switchboard_start_run` (migration 0004), one
//! round trip and its own transaction: mark the run running (the row lock of its UPDATE
//! serializes two starts of one run), claim its waiting messages into the transcript and
//! read the transcript back whole (no transcript cache on this engine). The rows it
//! answers with, shared with `switchboard_accept_and_start`, are decoded here.

use sqlx::postgres::PgRow;

use super::super::decode::Columns;
use super::super::inbox::decode_claimed;
use super::super::messages::decode_message;
use super::super::{now_ms, Claim, Result, Started, StoreError};
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
            .await?;
        Ok(decode_start(&rows)?.map(|(_, started)| started))
    }
}
