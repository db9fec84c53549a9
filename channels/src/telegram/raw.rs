//! Updates as Telegram's JSON, repaired before teloxide reads them. teloxide 0.17 declares a
//! voice note's, audio's, video's and animation's `mime_type` `Option` but reads it with a
//! `serde(with)` helper and no `default`, so an object without the field (the Bot API marks
//! it optional) fails, its message falls through serde's untagged kinds to
//! `MessageKind::Empty`, and the file is lost without a word. The same happens to a type
//! the `mime` crate cannot parse. `getUpdates` is therefore asked for raw JSON, and each
//! media object teloxide cannot read is given `"mime_type": null` (which it reads as none)
//! before the update is parsed; the webhook body goes through the same repair.

use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use teloxide::requests::Payload;
use teloxide::types::{AllowedUpdate, Animation, Audio, Document, Update, Video, Voice};

/// Most nested messages repaired (a message, the message it replies to, that one's …):
/// Telegram nests one level; this bounds a hostile body.
const MAX_DEPTH: usize = 4;

/// `getUpdates`, answered as raw JSON values (teloxide's own payload answers typed updates).
#[derive(Debug, Clone, Serialize)]
pub(super) struct GetUpdatesRaw {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) offset: Option<i32>,
    pub(super) timeout: u32,
    pub(super) allowed_updates: Vec<AllowedUpdate>,
}

impl Payload for GetUpdatesRaw {
    type Output = Vec<Value>;
    const NAME: &'static str = "GetUpdates";

    fn timeout_hint(&self) -> Option<Duration> {
        Some(Duration::from_secs(u64::from(self.timeout)))
    }
}

/// One update as the adapter reads it: repaired, then teloxide's typed view. `None` only
/// for a value without an integer `update_id` (never sent by Telegram; it cannot be
/// acknowledged by itself, the next update's offset passes it).
pub(super) fn parse_update(mut raw: Value) -> Option<Update> {
    raw.get("update_id")?.as_i64()?;
    repair_update(&mut raw);
    serde_json::from_str(&raw.to_string()).ok()
}

/// Give every media object of the update's message (and of the messages nested in it) that
/// teloxide cannot read a `null` `mime_type`, when that makes it readable.
pub(super) fn repair_update(update: &mut Value) {
    if let Some(m) = update.get_mut("message") {
        repair_message(m, 0);
    }
    if let Some(m) = update
        .get_mut("callback_query")
        .and_then(|q| q.get_mut("message"))
    {
        repair_message(m, 0);
    }
}

fn repair_message(message: &mut Value, depth: usize) {
    if depth >= MAX_DEPTH || !message.is_object() {
        return;
    }
    for nested in ["reply_to_message", "pinned_message", "external_reply"] {
        if let Some(m) = message.get_mut(nested) {
            repair_message(m, depth + 1);
        }
    }
    repair_field::<Voice>(message, "voice");
    repair_field::<Audio>(message, "audio");
    repair_field::<Video>(message, "video");
    repair_field::<Animation>(message, "animation");
    repair_field::<Document>(message, "document");
}

/// `message[field]`, if teloxide cannot read it as `T` but can with a `null` `mime_type`,
/// gets that `null`; anything else is left as it is (teloxide's verdict stands).
fn repair_field<T: DeserializeOwned>(message: &mut Value, field: &str) {
    let Some(object) = message.get_mut(field) else {
        return;
    };
    if !object.is_object() || T::deserialize(&*object).is_ok() {
        return;
    }
    let mut fixed = object.clone();
    fixed["mime_type"] = Value::Null;
    if T::deserialize(&fixed).is_ok() {
        *object = fixed;
    }
}

#[cfg(test)]
#[path = "raw_tests.rs"]
mod tests;
