//! Usage and cost read back from `runs` on PostgreSQL (see `store::usage`).

use super::super::usage::{decode_totals, CallUsage, UsageTotals};
use super::super::Result;
use super::Pg;

impl Pg {
    pub async fn record_model_call(&self, run_id: &str, usage: &CallUsage) -> Result<()> {
        sqlx::query(crate::sql::usage::MODEL_CALL.pg)
            .bind(usage.steps)
            .bind(usage.input_tokens)
            .bind(usage.output_tokens)
            .bind(usage.context_tokens)
            .bind(usage.cost_usd)
            .bind(run_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Two statements, usage first: a crash between them loses the message (the step is
    /// made again) but still counts the tokens it cost.
    pub async fn record_call_answer(
        &self,
        run_id: &str,
        session_id: &str,
        usage: &CallUsage,
        answer: &crate::NewMessage,
    ) -> Result<i64> {
        self.record_model_call(run_id, usage).await?;
        self.append_message(session_id, Some(run_id), answer).await
    }

    pub async fn session_usage_by_model(
        &self,
        session_key: &str,
        session_id: &str,
    ) -> Result<Vec<(String, UsageTotals)>> {
        let rows = sqlx::query(crate::sql::usage::SESSION_BY_MODEL.pg)
            .bind(session_key)
            .bind(session_id)
            .fetch_all(&self.pool)
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
        let row = sqlx::query(crate::sql::usage::SESSION.pg)
            .bind(session_key)
            .bind(session_id)
            .fetch_one(&self.pool)
            .await?;
        decode_totals(&row)
    }

    pub async fn session_context_tokens(
        &self,
        session_key: &str,
        session_id: &str,
    ) -> Result<Option<i64>> {
        let tokens: Option<Option<i64>> = sqlx::query_scalar(crate::sql::usage::SESSION_CONTEXT.pg)
            .bind(session_key)
            .bind(session_id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(tokens.flatten())
    }

    pub async fn usage_since(&self, agent_id: Option<&str>, since_ms: i64) -> Result<UsageTotals> {
        let row = sqlx::query(crate::sql::usage::SINCE.pg)
            .bind(since_ms)
            .bind(agent_id)
            .fetch_one(&self.pool)
            .await?;
        decode_totals(&row)
    }
}
