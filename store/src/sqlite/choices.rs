//! A session's `/model` and `/think` choices on SQLite (see `store/choices.rs`).

use sqlx::Row;

use super::{now_ms, Result, Sqlite};
use crate::choices::{Choice, SessionChoices};

impl Sqlite {
    pub async fn session_choices(&self, key: &str) -> Result<SessionChoices> {
        let r = sqlx::query(crate::sql::choices::GET.sqlite)
            .bind(key)
            .fetch_optional(&mut *self.reader().await)
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
        sqlx::query(crate::sql::choices::set(choice).sqlite)
            .bind(value)
            .bind(now_ms())
            .bind(key)
            .execute(&mut *self.writer().await)
            .await?;
        Ok(())
    }
}
