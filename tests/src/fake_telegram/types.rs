//! The values tests script the fake Telegram with (chats, users, failures) and the records it
//! keeps of what the client did (calls, sent messages, the webhook).

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

/// The bot's user id (`getMe`, `from` of every message the bot sends).
pub const BOT_ID: i64 = 1000;
/// The bot's username, without the `@`.
pub const BOT_USERNAME: &str = "switchboard_bot";
/// The bot's first name.
pub const BOT_FIRST_NAME: &str = "Switchboard";

/// Supergroup ids at or below this are written `-100…` by Telegram; basic groups are above it.
const SUPERGROUP_ID_CEILING: i64 = -1_000_000_000_000;

/// What kind of chat a [`Chat`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChatKind {
    Private,
    Group,
    Supergroup,
    /// A supergroup with topics (`is_forum: true`).
    Forum,
}

/// A chat a user writes from; `thread_id` is the forum topic the message is posted in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chat {
    pub id: i64,
    pub kind: ChatKind,
    pub title: Option<String>,
    pub thread_id: Option<i64>,
}

impl Chat {
    /// The private chat with a user: its id is the user's id.
    pub fn private(user_id: i64) -> Chat {
        Chat {
            id: user_id,
            kind: ChatKind::Private,
            title: None,
            thread_id: None,
        }
    }

    /// A basic group (ids are negative, e.g. `-4001`).
    pub fn group(chat_id: i64, title: &str) -> Chat {
        Chat {
            id: chat_id,
            kind: ChatKind::Group,
            title: Some(title.to_owned()),
            thread_id: None,
        }
    }

    /// A supergroup (ids look like `-100…`).
    pub fn supergroup(chat_id: i64, title: &str) -> Chat {
        Chat {
            id: chat_id,
            kind: ChatKind::Supergroup,
            title: Some(title.to_owned()),
            thread_id: None,
        }
    }

    /// A topic of a forum supergroup; messages carry `message_thread_id = thread_id`.
    pub fn forum_topic(chat_id: i64, thread_id: i64) -> Chat {
        Chat {
            id: chat_id,
            kind: ChatKind::Forum,
            title: Some("Forum".to_owned()),
            thread_id: Some(thread_id),
        }
    }

    /// The Bot API `Chat` object; a private chat takes the names of `from` when it is its user.
    pub(super) fn to_json(&self, from: Option<&User>) -> Value {
        let mut chat = json!({"id": self.id});
        let title = self.title.clone().unwrap_or_else(|| "Group".to_owned());
        match self.kind {
            ChatKind::Private => {
                chat["type"] = json!("private");
                if let Some(user) = from.filter(|user| user.id == self.id) {
                    chat["first_name"] = json!(user.first_name);
                    if let Some(username) = &user.username {
                        chat["username"] = json!(username);
                    }
                }
            }
            ChatKind::Group => {
                chat["type"] = json!("group");
                chat["title"] = json!(title);
            }
            ChatKind::Supergroup | ChatKind::Forum => {
                chat["type"] = json!("supergroup");
                chat["title"] = json!(title);
                if self.kind == ChatKind::Forum {
                    chat["is_forum"] = json!(true);
                }
            }
        }
        chat
    }
}

/// A `Chat` object for a chat id no update ever showed, guessed from the id's shape.
pub(super) fn guessed_chat_json(id: i64) -> Value {
    let kind = if id > 0 {
        "private"
    } else if id <= SUPERGROUP_ID_CEILING {
        "supergroup"
    } else {
        "group"
    };
    json!({"id": id, "type": kind})
}

/// A Telegram user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub id: i64,
    pub is_bot: bool,
    pub first_name: String,
    pub username: Option<String>,
}

impl User {
    /// A human user; an empty `username` means none.
    pub fn new(id: i64, username: &str, first_name: &str) -> User {
        User {
            id,
            is_bot: false,
            first_name: first_name.to_owned(),
            username: (!username.is_empty()).then(|| username.to_owned()),
        }
    }

    /// The fake's own bot.
    pub fn bot() -> User {
        User {
            id: BOT_ID,
            is_bot: true,
            first_name: BOT_FIRST_NAME.to_owned(),
            username: Some(BOT_USERNAME.to_owned()),
        }
    }

    /// The Bot API `User` object.
    pub(super) fn to_json(&self) -> Value {
        let mut user = json!({"id": self.id, "is_bot": self.is_bot, "first_name": self.first_name});
        if let Some(username) = &self.username {
            user["username"] = json!(username);
        }
        if !self.is_bot {
            user["language_code"] = json!("en");
        }
        user
    }
}

/// A scripted failure, consumed by the next call of its method (FIFO per method).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// 429 `Too Many Requests: retry after N` with `parameters.retry_after`.
    TooManyRequests { retry_after: u64 },
    /// 400 `Bad Request: <text>` (the prefix is added unless present).
    BadRequest(String),
    /// 409 `Conflict: terminated by other getUpdates request; …`.
    Conflict,
    /// This 5xx status with a JSON error body.
    ServerError(u16),
    /// Answer nothing for this long, then answer normally (a long poll's `timeout` counts from
    /// the request's arrival, so a stall longer than it answers at once).
    Stall(Duration),
    /// Never answer (until the fake shuts down, then 503).
    Hang,
    /// Close the connection without an HTTP answer.
    Drop,
}

/// A message the bot sent successfully with `sendMessage`.
#[derive(Debug, Clone, PartialEq)]
pub struct SentMessage {
    pub chat_id: i64,
    /// `message_thread_id`: the forum topic it was posted in.
    pub thread_id: Option<i64>,
    /// The `text` parameter as sent (HTML tags and entities included).
    pub text: String,
    /// The text users see: tags removed and entities decoded for `parse_mode` HTML, else `text`.
    pub plain_text: String,
    pub parse_mode: Option<String>,
    pub message_id: i64,
    pub at: Instant,
    /// The message replied to (`reply_parameters.message_id` or `reply_to_message_id`).
    pub reply_to: Option<i64>,
    /// The `reply_markup` sent with it (an inline keyboard), as JSON.
    pub reply_markup: Option<Value>,
    /// Whether it asked for no link preview (`link_preview_options.is_disabled`, or the
    /// older `disable_web_page_preview`).
    pub preview_disabled: bool,
}

impl SentMessage {
    /// The `callback_data` of its inline keyboard buttons, row by row, with their texts.
    pub fn buttons(&self) -> Vec<(String, String)> {
        inline_buttons(self.reply_markup.as_ref())
    }
}

/// `(text, callback_data)` of every button of an inline keyboard markup.
pub(super) fn inline_buttons(markup: Option<&Value>) -> Vec<(String, String)> {
    markup
        .and_then(|m| m["inline_keyboard"].as_array())
        .into_iter()
        .flatten()
        .filter_map(Value::as_array)
        .flatten()
        .map(|b| {
            (
                b["text"].as_str().unwrap_or_default().to_owned(),
                b["callback_data"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// A successful `editMessageText`.
#[derive(Debug, Clone, PartialEq)]
pub struct EditedMessage {
    pub chat_id: i64,
    pub message_id: i64,
    /// The new text users see.
    pub plain_text: String,
    /// The keyboard the message keeps (none: its buttons are gone).
    pub reply_markup: Option<Value>,
    /// Whether the edit asked for no link preview (as [`SentMessage::preview_disabled`]).
    pub preview_disabled: bool,
}

/// An `answerCallbackQuery` call for a query the fake delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallbackAnswer {
    pub callback_query_id: String,
    pub text: Option<String>,
    pub show_alert: bool,
}

/// One Bot API call the fake received (with the right token or not).
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// Canonical lowerCamel name (`sendMessage`), whatever case the client used.
    pub method: String,
    /// The parameters: JSON body, or form / query fields as strings.
    pub body: Value,
    pub at: Instant,
    /// The HTTP status answered; 0 while unanswered, or when no answer was sent (`Hang`,
    /// `Drop`, client gone).
    pub status: u16,
    /// Which client made it: the path segment before `/bot<TOKEN>/` of a client given
    /// [`FakeTelegram::api_url_for`](super::FakeTelegram::api_url_for) (`None` for
    /// [`FakeTelegram::api_url`](super::FakeTelegram::api_url)).
    pub client: Option<String>,
}

/// The webhook set with `setWebhook` (the fake does not deliver to it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Webhook {
    pub url: String,
    pub secret_token: Option<String>,
    /// `allowed_updates` as given (`None`: not given, Telegram's default kinds).
    pub allowed_updates: Option<Vec<String>>,
}

/// Seconds since the Unix epoch, for `date` fields.
pub(super) fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX)
        })
}
