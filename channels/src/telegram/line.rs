//! Lines edited in place on Telegram: posted like any chunk (`sendMessage`, HTML with the
//! plain fallback, retried), then rewritten with `editMessageText`. An edit that finds its
//! message gone (deleted, or never the bot's) is [`LineError::Gone`]; one that changes
//! nothing is success.

use teloxide::prelude::*;
use teloxide::types::{MessageId, ParseMode};
use teloxide::{ApiError, RequestError};

use super::{chat_of, format, send::is_refusal, Telegram};
use crate::{ChannelError, LineError, Origin};

impl Telegram {
    pub(super) async fn post(&self, origin: &Origin, text: &str) -> Result<String, LineError> {
        let (chat, thread) = chat_of(origin)?;
        let id = self.send_chunk(chat, thread, text, None).await?;
        Ok(id.0.to_string())
    }

    pub(super) async fn edit(
        &self,
        origin: &Origin,
        message_id: &str,
        text: &str,
    ) -> Result<(), LineError> {
        let (chat, _) = chat_of(origin)?;
        let id = message_id
            .parse::<i32>()
            .map_err(|_| LineError::Gone(format!("not a Telegram message id: {message_id}")))?;
        let html = format::to_html(text);
        let mut req = self
            .bot
            .edit_message_text(chat, MessageId(id), html)
            .parse_mode(ParseMode::Html);
        if let Some(off) = self.no_preview() {
            req = req.link_preview_options(off);
        }
        let sent = req.await;
        let err = match sent {
            Ok(_) => return Ok(()),
            Err(RequestError::Api(ApiError::CantParseEntities(why))) => {
                tracing::warn!(error = %why, "telegram: HTML rejected in an edit; editing as plain text");
                let mut req = self
                    .bot
                    .edit_message_text(chat, MessageId(id), text.to_string());
                if let Some(off) = self.no_preview() {
                    req = req.link_preview_options(off);
                }
                match req.await {
                    Ok(_) => return Ok(()),
                    Err(e) => e,
                }
            }
            Err(e) => e,
        };
        edit_error(err)
    }
}

/// What a failed `editMessageText` means for the caller: the same text again is no
/// failure.
fn edit_error(e: RequestError) -> Result<(), LineError> {
    Err(match e {
        RequestError::Api(ApiError::MessageNotModified) => return Ok(()),
        RequestError::Api(
            ApiError::MessageToEditNotFound
            | ApiError::MessageIdInvalid
            | ApiError::MessageCantBeEdited,
        ) => LineError::Gone(e.to_string()),
        RequestError::RetryAfter(s) => ChannelError::RateLimited(s.duration()).into(),
        RequestError::Network(e) => ChannelError::Temporary(e.to_string()).into(),
        RequestError::Api(e) if is_refusal(&e) => {
            ChannelError::Permanent(format!("Telegram refused the edit: {e}")).into()
        }
        other => ChannelError::Temporary(other.to_string()).into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Catches: a deleted message taken for a passing failure (the line would never be
    /// posted again) or a rate limit taken for a gone message (a second message).
    #[test]
    fn edit_errors_are_classified() {
        assert!(matches!(
            edit_error(RequestError::Api(ApiError::MessageToEditNotFound)),
            Err(LineError::Gone(_))
        ));
        assert!(matches!(
            edit_error(RequestError::RetryAfter(teloxide::types::Seconds::from_seconds(3))),
            Err(LineError::Channel(ChannelError::RateLimited(d))) if d.as_secs() == 3
        ));
        assert!(matches!(
            edit_error(RequestError::Api(ApiError::Unknown(
                "Bad Request: chat not found".into()
            ))),
            Err(LineError::Channel(ChannelError::Permanent(_)))
        ));
        assert!(edit_error(RequestError::Api(ApiError::MessageNotModified)).is_ok());
    }
}
