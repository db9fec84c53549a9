//! Starting a run on PostgreSQL, in one transaction: mark it running (the row lock of the
//! UPDATE serializes two starts of one run), claim its waiting messages into the
//! transcript and read the transcript back whole (no transcript cache on this engine).

use sqlx::{PgConnection, Row};

use super::super::{now_ms, Claim, Result, Started};
use super::inbox::{claim_in, claim_limit};
use super::messages::transcript;
use super::Pg;

/// A run's start (see [`Pg::start_run`]).
pub(super) struct StartRun<'a> {
    pub(super) id: &'a str,
    pub(super) session_key: &'a str,
    pub(super) session_id: &'a str,
    pub(super) model: Option<&'a str>,
    pub(super) claim: Option<Claim>,
    pub(super) now: i64,
}

/// The start's statements on `c` (inside the caller's transaction); `None` if the run is
/// no longer queued or running (then nothing was changed).
pub(super) async fn start_in(c: &mut PgConnection, run: &StartRun<'_>) -> Result<Option<Started>> {
    let r = sqlx::query(
        "UPDATE runs SET status = 'running', started_at = COALESCE(started_at, $1),
             session_id = $2, model = COALESCE(model, $3)
         WHERE id = $4 AND status IN ('queued', 'running')
         RETURNING started_at",
    )
    .bind(run.now)
    .bind(run.session_id)
    .bind(run.model)
    .bind(run.id)
    .fetch_optional(&mut *c)
    .await?;
    let Some(r) = r else {
        return Ok(None);
    };
    let started_at: Option<i64> = r.try_get("started_at")?;
    let claimed = match run.claim {
        Some(claim) => {
            claim_in(
                c,
                run.session_key,
                run.session_id,
                run.id,
                claim_limit(claim),
                run.now,
            )
            .await?
        }
        None => Vec::new(),
    };
    let transcript = transcript(&mut *c, run.session_id).await?;
    Ok(Some(Started {
        claimed,
        transcript,
        started_at,
    }))
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
        let run = StartRun {
            id,
            session_key,
            session_id,
            model,
            claim,
            now: now_ms(),
        };
        let mut tx = self.pool.begin().await?;
        let started = start_in(&mut tx, &run).await?;
        tx.commit().await?;
        Ok(started)
    }
}
