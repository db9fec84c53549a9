//! Usage and cost read back from `runs` on SQLite (see `store::usage`).

use super::super::usage::{decode_totals, UsageTotals};
use super::{Result, Sqlite};

impl Sqlite {
    pub async fn record_context_tokens(&self, run_id: &str, tokens: i64) -> Result<()> {
        sqlx::query(crate::sql::usage::CONTEXT_TOKENS.sqlite)
            .bind(tokens)
            .bind(run_id)
            .execute(&mut *self.writer().await)
            .await?;
        Ok(())
    }

    pub async fn record_model_call(
        &self,
        run_id: &str,
        tokens: i64,
        cost_usd: Option<f64>,
    ) -> Result<()> {
        sqlx::query(crate::sql::usage::MODEL_CALL.sqlite)
            .bind(tokens)
            .bind(cost_usd)
            .bind(run_id)
            .execute(&mut *self.writer().await)
            .await?;
        Ok(())
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
