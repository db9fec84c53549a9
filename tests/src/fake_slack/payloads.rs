//! The payloads Slack puts in envelopes: `event_callback` (a `message`, an `app_mention`),
//! a slash command, and `block_actions`, in the shapes Slack sends.

use serde_json::{json, Value};

use super::types::{SUser, APP_ID, BOT_USER, TEAM_ID};

/// A `message` event (`channel_type`: `im` or `channel`) wrapped in `event_callback`.
pub(super) fn message(
    event_id: &str,
    channel: &str,
    channel_type: &str,
    user: &SUser,
    text: &str,
    ts: &str,
    thread_ts: Option<&str>,
) -> Value {
    let mut event = json!({"type": "message", "channel": channel, "channel_type": channel_type,
        "user": user.id, "text": text, "ts": ts, "event_ts": ts, "team": TEAM_ID,
        "blocks": [{"type": "rich_text", "block_id": "b1",
                    "elements": [{"type": "rich_text_section",
                                  "elements": [{"type": "text", "text": text}]}]}]});
    if let Some(t) = thread_ts {
        event["thread_ts"] = json!(t);
        event["parent_user_id"] = json!(user.id);
    }
    callback(event_id, event)
}

/// The `app_mention` event Slack sends beside the `message` when the bot is mentioned.
pub(super) fn app_mention(
    event_id: &str,
    channel: &str,
    user: &SUser,
    text: &str,
    ts: &str,
    thread_ts: Option<&str>,
) -> Value {
    let mut event = json!({"type": "app_mention", "channel": channel, "user": user.id,
        "text": text, "ts": ts, "event_ts": ts, "team": TEAM_ID});
    if let Some(t) = thread_ts {
        event["thread_ts"] = json!(t);
    }
    callback(event_id, event)
}

fn callback(event_id: &str, event: Value) -> Value {
    json!({"token": "verification-token", "team_id": TEAM_ID, "api_app_id": APP_ID,
        "event": event, "type": "event_callback", "event_id": event_id,
        "event_time": 1_700_000_000,
        "authorizations": [{"team_id": TEAM_ID, "user_id": BOT_USER, "is_bot": true}],
        "is_ext_shared_channel": false})
}

/// A slash command's payload (form fields as a JSON object, as Socket Mode sends them).
pub(super) fn slash_command(
    trigger: &str,
    channel: &str,
    user: &SUser,
    command: &str,
    text: &str,
) -> Value {
    json!({"token": "verification-token", "team_id": TEAM_ID, "team_domain": "fake",
        "channel_id": channel, "channel_name": channel, "user_id": user.id,
        "user_name": user.name, "command": command, "text": text, "api_app_id": APP_ID,
        "is_enterprise_install": "false",
        "response_url": "https://hooks.slack.invalid/commands/T/1/x", "trigger_id": trigger})
}

/// A `block_actions` payload: `user` pressed the button `action_id` on message `ts`.
#[allow(clippy::too_many_arguments)]
pub(super) fn block_actions(
    trigger: &str,
    channel: &str,
    user: &SUser,
    ts: &str,
    thread_ts: Option<&str>,
    text: &str,
    label: &str,
    action_id: &str,
) -> Value {
    let mut message = json!({"type": "message", "user": BOT_USER, "ts": ts, "text": text});
    if let Some(t) = thread_ts {
        message["thread_ts"] = json!(t);
    }
    json!({"type": "block_actions",
        "user": {"id": user.id, "username": user.name, "name": user.name, "team_id": TEAM_ID},
        "api_app_id": APP_ID, "token": "verification-token",
        "container": {"type": "message", "message_ts": ts, "channel_id": channel,
                      "is_ephemeral": false},
        "trigger_id": trigger, "team": {"id": TEAM_ID, "domain": "fake"},
        "channel": {"id": channel, "name": channel}, "message": message,
        "response_url": "https://hooks.slack.invalid/actions/T/1/x",
        "actions": [{"action_id": action_id, "block_id": "actions",
                     "text": {"type": "plain_text", "text": label, "emoji": true},
                     "value": action_id, "type": "button", "action_ts": "1700000001.000001"}]})
}
