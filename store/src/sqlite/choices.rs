//! A session's `/model` and `/think` choices on SQLite (see `store/choices.rs`).

use sqlx::Row;

use super::{now_ms, Result, Sqlite};
use crate::choices::{Choice, SessionChoices};

impl Sqlite {
    /// Cached with the key's active session (see `SessionCache`): a run's start reads them.
    pub async fn session_choices(&self, key: &str) -> Result<SessionChoices> {
        if let Some(hit) = self.sessions.choices(key) {
            return Ok(hit);
        }
        let forgotten = self.sessions.forgotten();
        let r = sqlx::query(crate::sql::choices::GET.sqlite)
            .bind(key)
            .fetch_optional(&mut *self.reader().await)
            .await?;
        let choices = match r {
            Some(r) => SessionChoices {
                model: r.try_get("model_override")?,
                thinking: r.try_get("thinking_override")?,
            },
            None => SessionChoices::default(),
        };
        self.sessions
            .put_choices_unless_forgotten(key, choices.clone(), forgotten);
        Ok(choices)
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
        self.sessions.forget_choices(key);
        Ok(())
    }
}
