//! Usage and cost read back from `runs` on PostgreSQL (see `store::usage`).

use super::super::usage::{decode_totals, UsageTotals};
use super::super::Result;
use super::Pg;

/// The totals' columns over the rows a `WHERE` picks (sums of BIGINT are NUMERIC: cast).
const TOTALS: &str = "SELECT COUNT(*) AS runs, COALESCE(SUM(input_tokens), 0)::BIGINT AS input_tokens,
        COALESCE(SUM(output_tokens), 0)::BIGINT AS output_tokens, SUM(cost_usd) AS cost_usd FROM runs";

/// [`TOTALS`] per model (a run without one counts as `?`).
const TOTALS_BY_MODEL: &str = "SELECT COALESCE(model, '?') AS model, COUNT(*) AS runs,
        COALESCE(SUM(input_tokens), 0)::BIGINT AS input_tokens,
        COALESCE(SUM(output_tokens), 0)::BIGINT AS output_tokens, SUM(cost_usd) AS cost_usd FROM runs";

impl Pg {
    pub async fn record_context_tokens(&self, run_id: &str, tokens: i64) -> Result<()> {
        sqlx::query("UPDATE runs SET context_tokens = $1 WHERE id = $2")
            .bind(tokens)
            .bind(run_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub async fn record_model_call(
        &self,
        run_id: &str,
        tokens: i64,
        cost_usd: Option<f64>,
    ) -> Result<()> {
        sqlx::query("UPDATE runs SET context_tokens = $1, cost_usd = $2 WHERE id = $3 AND status = 'running'")
            .bind(tokens)
            .bind(cost_usd)
            .bind(run_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub async fn session_usage_by_model(
        &self,
        session_id: &str,
    ) -> Result<Vec<(String, UsageTotals)>> {
        let rows = sqlx::query(&format!("{TOTALS_BY_MODEL} WHERE session_id = $1 GROUP BY model ORDER BY SUM(cost_usd) DESC NULLS LAST, model"))
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

    pub async fn session_usage(&self, session_id: &str) -> Result<UsageTotals> {
        let row = sqlx::query(&format!("{TOTALS} WHERE session_id = $1"))
            .bind(session_id)
            .fetch_one(&self.pool)
            .await?;
        decode_totals(&row)
    }

    pub async fn session_context_tokens(&self, session_id: &str) -> Result<Option<i64>> {
        let tokens: Option<Option<i64>> = sqlx::query_scalar(
            "SELECT context_tokens FROM runs WHERE session_id = $1 AND context_tokens IS NOT NULL
             ORDER BY COALESCE(started_at, created_at) DESC, seq DESC LIMIT 1",
        )
        .bind(session_id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(tokens.flatten())
    }

    pub async fn usage_since(&self, agent_id: Option<&str>, since_ms: i64) -> Result<UsageTotals> {
        let row = sqlx::query(&format!(
            "{TOTALS} WHERE created_at >= $1 AND ($2::TEXT IS NULL OR agent_id = $2)"
        ))
        .bind(since_ms)
        .bind(agent_id)
        .fetch_one(&self.pool)
        .await?;
        decode_totals(&row)
    }
}
