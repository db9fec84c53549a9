//! Outbound: convert to HTML, split to the limit in balanced parts (the footer whole and
//! last, the buttons as an inline keyboard under the last part), retry a part
//! after a 429 or a network error, fall back to plain text when Telegram rejects the
//! entities, and report each delivered part so a retried message resumes after it.

use std::time::Duration;

use teloxide::prelude::*;
use teloxide::types::{
    InlineKeyboardButton, InlineKeyboardMarkup, LinkPreviewOptions, MessageId, ParseMode, ThreadId,
};
use teloxide::{ApiError, RequestError};

use super::{chat_of, format, html_split, Telegram};
use crate::backoff::Backoff;
use crate::{ChannelError, DeliveryProgress, OutboundMessage};

/// Tries per chunk for rate limits and network errors before the outbox takes over.
const CHUNK_TRIES: u32 = 3;
/// Waits between tries of a chunk after a network error or a 5xx: 1 s, then 2 s.
const CHUNK_BACKOFF: Backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(2));

impl Telegram {
    pub(super) async fn send_chunks(
        &self,
        msg: &OutboundMessage,
        progress: &dyn DeliveryProgress,
    ) -> Result<(), ChannelError> {
        let (chat, thread) = chat_of(&msg.origin)?;
        // Converted first, then split: each part is balanced HTML, and a code block cut
        // by the limit goes on as a code block in the next part.
        let parts = html_split::message_parts(&msg.text, msg.footer.as_deref(), {
            use crate::Channel;
            self.text_limit()
        });
        let keyboard = keyboard(&msg.actions);
        crate::send_parts(&parts, progress, |part, last| {
            let buttons = keyboard.as_ref().filter(|_| last);
            let sent = self.send_html(chat, thread, part, buttons);
            async move { sent.await.map(|_| ()) }
        })
        .await
    }

    /// Send one short Markdown text as one message (retried, HTML falling back to
    /// plain); the id of the message sent.
    pub(super) async fn send_chunk(
        &self,
        chat: ChatId,
        thread: Option<i32>,
        text: &str,
        buttons: Option<&InlineKeyboardMarkup>,
    ) -> Result<MessageId, ChannelError> {
        self.send_html(chat, thread, &format::to_html(text), buttons)
            .await
    }

    /// Send one part's HTML (retried; as its visible text when Telegram refuses the
    /// HTML); the id of the message sent.
    async fn send_html(
        &self,
        chat: ChatId,
        thread: Option<i32>,
        html: &str,
        buttons: Option<&InlineKeyboardMarkup>,
    ) -> Result<MessageId, ChannelError> {
        let mut tries = 0;
        let mut plain = false;
        loop {
            tries += 1;
            let body = if plain {
                html_split::visible_text(html)
            } else {
                html.to_string()
            };
            let mut req = self.bot.send_message(chat, body);
            if let Some(off) = self.no_preview() {
                req = req.link_preview_options(off);
            }
            if !plain {
                req = req.parse_mode(ParseMode::Html);
            }
            if let Some(t) = thread {
                req = req.message_thread_id(ThreadId(MessageId(t)));
            }
            if let Some(b) = buttons {
                req = req.reply_markup(b.clone());
            }
            let err = match req.await {
                Ok(m) => return Ok(m.id),
                Err(e) => e,
            };
            match err {
                RequestError::Api(ApiError::CantParseEntities(why)) if !plain => {
                    tracing::warn!(error = %why, "telegram: HTML rejected; sending as plain text");
                    plain = true;
                    tries -= 1;
                }
                RequestError::RetryAfter(s) if tries < CHUNK_TRIES => {
                    tracing::warn!(retry_after = ?s.duration(), "telegram: sendMessage rate limited; waiting");
                    tokio::time::sleep(s.duration()).await;
                }
                RequestError::RetryAfter(s) => return Err(ChannelError::RateLimited(s.duration())),
                RequestError::Network(e) if tries < CHUNK_TRIES => {
                    tracing::warn!(error = %e, "telegram: sendMessage network error; retrying");
                    tokio::time::sleep(CHUNK_BACKOFF.delay(tries)).await;
                }
                RequestError::Network(e) => return Err(ChannelError::Temporary(e.to_string())),
                RequestError::Api(e) if is_refusal(&e) => {
                    return Err(ChannelError::Permanent(format!(
                        "Telegram refused the message: {e}"
                    )))
                }
                // 5xx and anything else Telegram did not explain as a refusal: try again later.
                RequestError::Api(e) if tries < CHUNK_TRIES => {
                    tracing::warn!(error = %e, "telegram: sendMessage failed; retrying");
                    tokio::time::sleep(CHUNK_BACKOFF.delay(tries)).await;
                }
                RequestError::Api(e) => return Err(ChannelError::Temporary(e.to_string())),
                other => return Err(ChannelError::Temporary(other.to_string())),
            }
        }
    }
}

/// The message's buttons as an inline keyboard (one row), if it has any.
fn keyboard(actions: &[crate::Action]) -> Option<InlineKeyboardMarkup> {
    let row: Vec<InlineKeyboardButton> = crate::renderable(actions)
        .map(|a| InlineKeyboardButton::callback(a.label.clone(), a.id.clone()))
        .collect();
    (!row.is_empty()).then(|| InlineKeyboardMarkup::new(vec![row]))
}

/// Whether Telegram refused the request itself (4xx: retrying the same message cannot
/// help), as opposed to failing on its side (5xx), which teloxide reports alike.
pub(super) fn is_refusal(e: &ApiError) -> bool {
    // An error teloxide does not know keeps Telegram's description as is (its `Display`
    // wraps it in `Unknown error: "…"`, which no prefix below matches).
    let ApiError::Unknown(text) = e else {
        return true;
    };
    [
        "Bad Request",
        "Forbidden",
        "Unauthorized",
        "Not Found",
        "Conflict",
    ]
    .iter()
    .any(|p| text.starts_with(p))
}

/// Longest notice `answerCallbackQuery` shows (Telegram's limit is 200 characters).
const MAX_NOTICE: usize = 200;

impl Telegram {
    /// Give the gateway's answer to a press to Telegram: answer the callback query (the
    /// presser sees the notice; an alert for a refusal), then, when the answer says so,
    /// edit the pressed message to its new text, which drops its keyboard. Best effort:
    /// the press was handled whatever Telegram says now.
    pub(super) async fn answer_press(
        &self,
        callback: &super::convert::Callback,
        answer: &crate::PressAnswer,
    ) {
        let notice: String = answer.notice.chars().take(MAX_NOTICE).collect();
        let req = self
            .bot
            .answer_callback_query(callback.id.clone())
            .text(notice)
            .show_alert(answer.alert);
        if let Err(e) = req.await {
            tracing::warn!(error = %e, "telegram: answerCallbackQuery failed");
        }
        let Some(text) = &answer.update else {
            return;
        };
        let text: String = text.chars().take(super::MAX_TEXT / 2).collect();
        let mut req = self
            .bot
            .edit_message_text(callback.chat, callback.message, format::to_html(&text))
            .parse_mode(ParseMode::Html);
        if let Some(off) = self.no_preview() {
            req = req.link_preview_options(off);
        }
        let err = match req.await {
            Ok(_) => return,
            Err(RequestError::Api(ApiError::CantParseEntities(_))) => {
                let mut req = self
                    .bot
                    .edit_message_text(callback.chat, callback.message, text);
                if let Some(off) = self.no_preview() {
                    req = req.link_preview_options(off);
                }
                match req.await {
                    Ok(_) => return,
                    Err(e) => e,
                }
            }
            Err(e) => e,
        };
        // A press delivered again finds the message edited already.
        tracing::debug!(error = %err, "telegram: editing the pressed message failed");
    }

    /// The link preview options of every message the bot sends or edits: previews off
    /// unless `linkPreview` (`None`: Telegram's default, previews on).
    pub(super) fn no_preview(&self) -> Option<LinkPreviewOptions> {
        (!self.settings.link_preview).then_some(LinkPreviewOptions {
            is_disabled: true,
            url: None,
            prefer_small_media: false,
            prefer_large_media: false,
            show_above_text: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Catches: matching the prefixes against the error's `Display` ("Unknown error: …"),
    /// which made every 4xx teloxide does not know a retryable failure.
    #[test]
    fn an_unknown_4xx_is_a_refusal_and_a_5xx_is_not() {
        assert!(is_refusal(&ApiError::Unknown(
            "Bad Request: chat is being moved".into()
        )));
        assert!(is_refusal(&ApiError::Unknown(
            "Forbidden: bot is not a member".into()
        )));
        assert!(!is_refusal(&ApiError::Unknown("Bad Gateway".into())));
        assert!(!is_refusal(&ApiError::Unknown(
            "Internal Server Error".into()
        )));
        assert!(is_refusal(&ApiError::BotBlocked));
    }
}
