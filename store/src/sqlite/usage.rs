//! Usage and cost read back from `runs` on SQLite (see `store::usage`).

use super::super::decode::Columns;

use super::super::usage::{decode_totals, CallUsage, UsageTotals};
use super::messages::{bind_message, NewMessage};
use super::writer::{script, Args, Params, Script};
use super::{now_ms, Result, Sqlite, StoreError};

/// The statement of [`CALL_USAGE`], the first of [`CALL_ANSWER`].
macro_rules! usage_update {
    () => {
        "UPDATE runs SET steps = ?, input_tokens = ?, output_tokens = ?, context_tokens = ?,
             cost_usd = ?
         WHERE id = ? AND status = 'running';"
    };
}

/// A model call's usage on its running run (`crate::sql::usage::MODEL_CALL`).
static CALL_USAGE: Script = script!(usage_update!());

/// The parameters of [`CALL_USAGE`].
pub(super) struct CallUsed<'a> {
    pub(super) run_id: &'a str,
    pub(super) usage: &'a CallUsage,
}

impl Params for CallUsed<'_> {
    fn script(&self) -> &'static Script {
        &CALL_USAGE
    }

    fn args(&self) -> Result<Args> {
        Ok(bind_usage(Args::default(), self.run_id, self.usage))
    }
}

/// Bind [`CALL_USAGE`]'s values.
fn bind_usage(args: Args, run_id: &str, usage: &CallUsage) -> Args {
    args.bind(usage.steps)
        .bind(usage.input_tokens)
        .bind(usage.output_tokens)
        .bind(usage.context_tokens)
        .bind(usage.cost_usd)
        .bind(run_id)
}

/// [`CALL_USAGE`] and the call's answer appended to the transcript: one round trip
/// through the group-commit writer. Twin of `Pg::record_call_answer`'s two statements.
static CALL_ANSWER: Script = script!(concat!(
    usage_update!(),
    "
     INSERT INTO messages (session_id, run_id, role, content, tool_calls, tool_call_id,
             tool_name, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         RETURNING 'message' AS part, seq;"
));

/// The parameters of [`CALL_ANSWER`].
pub(super) struct CallAnswer<'a> {
    pub(super) run_id: &'a str,
    pub(super) session_id: &'a str,
    pub(super) usage: &'a CallUsage,
    pub(super) answer: &'a NewMessage,
    pub(super) now: i64,
}

impl Params for CallAnswer<'_> {
    fn script(&self) -> &'static Script {
        &CALL_ANSWER
    }

    fn args(&self) -> Result<Args> {
        let CallAnswer {
            run_id,
            session_id,
            usage,
            answer,
            now,
        } = *self;
        let args = bind_usage(Args::default(), run_id, usage)
            .bind(session_id)
            .bind(run_id);
        Ok(bind_message(args, Some(answer))?.bind(now))
    }
}

impl Sqlite {
    pub async fn record_model_call(&self, run_id: &str, usage: &CallUsage) -> Result<()> {
        self.conns.write(&CallUsed { run_id, usage }).await?;
        Ok(())
    }

    pub async fn record_call_answer(
        &self,
        run_id: &str,
        session_id: &str,
        usage: &CallUsage,
        answer: &NewMessage,
    ) -> Result<i64> {
        let rows = self
            .conns
            .write(&CallAnswer {
                run_id,
                session_id,
                usage,
                answer,
                now: now_ms(),
            })
            .await?;
        let row = rows
            .first()
            .ok_or_else(|| StoreError::Corrupt("a call's answer: no message row".into()))?;
        row.int("seq")
    }

    pub async fn session_usage_by_model(
        &self,
        session_key: &str,
        session_id: &str,
    ) -> Result<Vec<(String, UsageTotals)>> {
        let rows = sqlx::query(crate::sql::usage::SESSION_BY_MODEL.sqlite)
            .bind(session_key)
            .bind(session_id)
            .fetch_all(&mut *self.reader().await)
            .await?;
        rows.iter()
            .map(|r| {
                Ok((
                    sqlx::Row::try_get::<String, _>(r, "model")?,
                    decode_totals(r)?,
                ))
            })
            .collect()
    }

    pub async fn session_usage(&self, session_key: &str, session_id: &str) -> Result<UsageTotals> {
        let row = sqlx::query(crate::sql::usage::SESSION.sqlite)
            .bind(session_key)
            .bind(session_id)
            .fetch_one(&mut *self.reader().await)
            .await?;
        decode_totals(&row)
    }

    pub async fn session_context_tokens(
        &self,
        session_key: &str,
        session_id: &str,
    ) -> Result<Option<i64>> {
        let tokens: Option<i64> = sqlx::query_scalar(crate::sql::usage::SESSION_CONTEXT.sqlite)
            .bind(session_key)
            .bind(session_id)
            .fetch_optional(&mut *self.reader().await)
            .await?;
        Ok(tokens)
    }

    pub async fn usage_since(&self, agent_id: Option<&str>, since_ms: i64) -> Result<UsageTotals> {
        let row = sqlx::query(crate::sql::usage::SINCE.sqlite)
            .bind(since_ms)
            .bind(agent_id)
            .fetch_one(&mut *self.reader().await)
            .await?;
        decode_totals(&row)
    }
}
