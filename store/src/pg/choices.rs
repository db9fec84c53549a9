//! A session's `/model` and `/think` choices on PostgreSQL (see `store/choices.rs`).

use sqlx::Row;

use super::super::{now_ms, Result};
use super::Pg;
use crate::choices::{Choice, SessionChoices};

impl Pg {
    pub async fn session_choices(&self, key: &str) -> Result<SessionChoices> {
        let r = sqlx::query(crate::sql::choices::GET.pg)
            .bind(key)
            .fetch_optional(&self.pool)
            .await?;
        Ok(match r {
            Some(r) => SessionChoices {
                model: r.try_get("model_override")?,
                thinking: r.try_get("thinking_override")?,
            },
            None => SessionChoices::default(),
        })
    }

    pub async fn set_session_choice(
        &self,
        key: &str,
        agent_id: &str,
        choice: Choice,
        value: Option<&str>,
    ) -> Result<()> {
        self.ensure_session(key, agent_id, None).await?;
        sqlx::query(crate::sql::choices::set(choice).pg)
            .bind(value)
            .bind(now_ms())
            .bind(key)
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}
