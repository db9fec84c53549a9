//! Usage and cost read back from `runs` on SQLite (see `store::usage`).

use super::super::usage::{decode_totals, UsageTotals};
use super::{Result, Sqlite};

/// The totals' columns over the rows a `WHERE` picks.
const TOTALS: &str = "SELECT COUNT(*) AS runs, COALESCE(SUM(input_tokens), 0) AS input_tokens,
        COALESCE(SUM(output_tokens), 0) AS output_tokens, SUM(cost_usd) AS cost_usd FROM runs";

/// [`TOTALS`] per model (a run without one counts as `?`).
const TOTALS_BY_MODEL: &str = "SELECT COALESCE(model, '?') AS model, COUNT(*) AS runs,
        COALESCE(SUM(input_tokens), 0) AS input_tokens,
        COALESCE(SUM(output_tokens), 0) AS output_tokens, SUM(cost_usd) AS cost_usd FROM runs";

impl Sqlite {
    pub async fn record_context_tokens(&self, run_id: &str, tokens: i64) -> Result<()> {
        sqlx::query("UPDATE runs SET context_tokens = ? WHERE id = ?")
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
        sqlx::query(
            "UPDATE runs SET context_tokens = ?, cost_usd = ? WHERE id = ? AND status = 'running'",
        )
        .bind(tokens)
        .bind(cost_usd)
        .bind(run_id)
        .execute(&mut *self.writer().await)
        .await?;
        Ok(())
    }

    pub async fn session_usage_by_model(
        &self,
        session_id: &str,
    ) -> Result<Vec<(String, UsageTotals)>> {
        let rows = sqlx::query(&format!("{TOTALS_BY_MODEL} WHERE session_id = ? GROUP BY model ORDER BY SUM(cost_usd) DESC, model"))
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

    pub async fn session_usage(&self, session_id: &str) -> Result<UsageTotals> {
        let row = sqlx::query(&format!("{TOTALS} WHERE session_id = ?"))
            .bind(session_id)
            .fetch_one(&mut *self.reader().await)
            .await?;
        decode_totals(&row)
    }

    pub async fn session_context_tokens(&self, session_id: &str) -> Result<Option<i64>> {
        let tokens: Option<i64> = sqlx::query_scalar(
            "SELECT context_tokens FROM runs WHERE session_id = ? AND context_tokens IS NOT NULL
             ORDER BY COALESCE(started_at, created_at) DESC, rowid DESC LIMIT 1",
        )
        .bind(session_id)
        .fetch_optional(&mut *self.reader().await)
        .await?;
        Ok(tokens)
    }

    pub async fn usage_since(&self, agent_id: Option<&str>, since_ms: i64) -> Result<UsageTotals> {
        let row = sqlx::query(&format!(
            "{TOTALS} WHERE created_at >= ? AND (? IS NULL OR agent_id = ?)"
        ))
        .bind(since_ms)
        .bind(agent_id)
        .bind(agent_id)
        .fetch_one(&mut *self.reader().await)
        .await?;
        decode_totals(&row)
    }
}
