//! Socket Mode frames → what the adapter does with them: pure, so it is property-tested
//! against hostile JSON apart from the socket. A frame is `hello`, a `disconnect`, or an
//! envelope (`events_api`, `slash_commands`, `interactive`) whose payload becomes an
//! [`InboundMessage`] (a person's message, a slash command typed as its text, a button
//! press; a message's files as references, see `received`) or nothing (a bot's own
//! message, an edit, an event the gateway has no use for),
//! each with the key that deduplicates its deliveries. Ids and timestamps are checked;
//! anything out of shape is ignored (and still acked), never trusted.

use serde_json::Value;

use super::CHANNEL_ID;
use crate::{ChatKind, InboundMessage, Origin, Press};

/// Longest text taken from Slack (its own limit on a message is 40,000 characters).
pub(super) const MAX_INBOUND_TEXT: usize = 40_000;
/// Longest Slack id (user, conversation, team) or timestamp accepted.
const MAX_ID: usize = 32;
/// Longest envelope id or trigger id accepted.
const MAX_ENVELOPE_ID: usize = 128;

/// Who the bot is and how it answers.
#[derive(Debug, Clone, Copy)]
pub(super) struct Me<'a> {
    pub(super) user_id: &'a str,
    pub(super) reply_in_thread: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Frame {
    Hello,
    /// `disconnect` with its reason (`refresh_requested`, `link_disabled`, …).
    Disconnect(String),
    Envelope {
        id: String,
        item: Box<Item>,
    },
    /// Any other frame type: nothing to do.
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Item {
    /// A person's message. `thread` is `(channel, thread_ts)` when it is a reply in a
    /// thread (it addresses the bot when the bot is in that thread).
    Message {
        key: String,
        msg: InboundMessage,
        thread: Option<(String, String)>,
    },
    /// A slash command, as the text `/name args`; acked within Slack's 3 s.
    Command { key: String, msg: InboundMessage },
    /// A button press, and where to answer it.
    Press {
        key: String,
        msg: InboundMessage,
        at: PressAt,
    },
    /// Nothing for the gateway: ack it.
    Ignore(&'static str),
}

/// The pressed message and the presser: where the press's answer goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PressAt {
    pub(super) channel: String,
    pub(super) ts: String,
    pub(super) user: String,
}

/// A Slack id: 1 to 32 upper-case letters and digits, a letter first.
pub(crate) fn is_slack_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_ID
        && s.starts_with(|c: char| c.is_ascii_uppercase())
        && s.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

/// A message timestamp: digits, one dot, digits.
pub(crate) fn is_ts(s: &str) -> bool {
    s.len() <= MAX_ID
        && s.split_once('.').is_some_and(|(a, b)| {
            !a.is_empty()
                && !b.is_empty()
                && a.chars().all(|c| c.is_ascii_digit())
                && b.chars().all(|c| c.is_ascii_digit())
        })
}

fn id_of(v: &Value, check: fn(&str) -> bool) -> Option<&str> {
    v.as_str().filter(|s| check(s))
}

/// An envelope or trigger id: printable ASCII, bounded.
fn is_token(s: &str) -> bool {
    !s.is_empty() && s.len() <= MAX_ENVELOPE_ID && s.chars().all(|c| c.is_ascii_graphic())
}

/// Read one text frame.
pub(super) fn frame(text: &str, me: Me<'_>) -> Result<Frame, String> {
    let v: Value =
        serde_json::from_str(text).map_err(|e| format!("a frame that is not JSON: {e}"))?;
    match v["type"].as_str() {
        Some("hello") => return Ok(Frame::Hello),
        Some("disconnect") => {
            let reason = v["reason"].as_str().unwrap_or("unknown");
            return Ok(Frame::Disconnect(reason.chars().take(64).collect()));
        }
        _ => {}
    }
    let Some(id) = v["envelope_id"].as_str() else {
        return Ok(Frame::Other);
    };
    if !is_token(id) {
        return Err("an envelope id out of shape".into());
    }
    let payload = &v["payload"];
    let item = match v["type"].as_str() {
        Some("events_api") => event(payload, me),
        Some("slash_commands") => command(payload),
        Some("interactive") => press(payload),
        _ => Item::Ignore("an envelope type the adapter does not use"),
    };
    Ok(Frame::Envelope {
        id: id.to_owned(),
        item: Box::new(item),
    })
}

fn kind_of(channel: &str, channel_type: Option<&str>) -> ChatKind {
    match channel_type {
        Some("im") => ChatKind::Direct,
        Some(_) => ChatKind::Group,
        None if channel.starts_with('D') => ChatKind::Direct,
        None => ChatKind::Group,
    }
}

fn origin(channel: &str, kind: ChatKind, thread: Option<&str>) -> Origin {
    Origin {
        channel: CHANNEL_ID.to_owned(),
        account: None,
        chat_id: channel.to_owned(),
        thread_id: thread.map(str::to_owned),
        kind,
        reply_handle: None,
    }
}

/// `event_callback` → a message (from `message` and `app_mention` events).
fn event(payload: &Value, me: Me<'_>) -> Item {
    let e = &payload["event"];
    let ty = e["type"].as_str();
    if !matches!(ty, Some("message" | "app_mention")) {
        return Item::Ignore("an event the adapter does not use");
    }
    match e["subtype"].as_str() {
        None | Some("thread_broadcast" | "file_share") => {}
        Some(_) => return Item::Ignore("a message subtype (an edit, a join, a bot message)"),
    }
    if !e["bot_id"].is_null() {
        return Item::Ignore("a bot's message");
    }
    let (Some(channel), Some(user), Some(ts)) = (
        id_of(&e["channel"], is_slack_id),
        id_of(&e["user"], is_slack_id),
        id_of(&e["ts"], is_ts),
    ) else {
        return Item::Ignore("a message without a valid channel, user or ts");
    };
    if user == me.user_id {
        return Item::Ignore("the bot's own message");
    }
    let raw = e["text"].as_str().unwrap_or_default();
    if raw.chars().count() > MAX_INBOUND_TEXT {
        return Item::Ignore("a message over Slack's length");
    }
    let thread_ts = id_of(&e["thread_ts"], is_ts).filter(|t| *t != ts);
    let kind = kind_of(channel, e["channel_type"].as_str());
    let mention = format!("<@{}", me.user_id);
    let mentioned = ty == Some("app_mention") || raw.contains(&mention);
    let text = plain(raw, me.user_id);
    // A file without text is a message too.
    let media = super::received::files_of(e);
    if text.is_empty() && media.is_empty() {
        return Item::Ignore("a message without text or files");
    }
    // A mention at the top of a channel opens a thread under it (its own session).
    let thread = match (thread_ts, kind) {
        (Some(t), _) => Some(t),
        (None, ChatKind::Group) if me.reply_in_thread && mentioned => Some(ts),
        _ => None,
    };
    let msg = InboundMessage {
        origin: origin(channel, kind, thread),
        sender_id: user.to_owned(),
        sender_name: None,
        sender_username: None,
        text,
        message_id: Some(format!("{channel}:{ts}")),
        addressed: kind == ChatKind::Direct || mentioned,
        press: None,
        media,
    };
    Item::Message {
        key: format!("msg:{channel}:{ts}"),
        msg,
        thread: thread_ts.map(|t| (channel.to_owned(), t.to_owned())),
    }
}

/// A slash command → its text, addressed.
fn command(p: &Value) -> Item {
    let (Some(channel), Some(user)) = (
        id_of(&p["channel_id"], is_slack_id),
        id_of(&p["user_id"], is_slack_id),
    ) else {
        return Item::Ignore("a command without a valid channel or user");
    };
    let Some(name) = p["command"]
        .as_str()
        .and_then(|c| c.strip_prefix('/'))
        .filter(|c| {
            !c.is_empty()
                && c.len() <= 32
                && c.chars()
                    .all(|ch| ch.is_alphanumeric() || ch == '-' || ch == '_')
        })
    else {
        return Item::Ignore("a command without a valid name");
    };
    let args = p["text"].as_str().unwrap_or_default();
    if args.chars().count() > MAX_INBOUND_TEXT {
        return Item::Ignore("a command over Slack's length");
    }
    let trigger = p["trigger_id"].as_str().filter(|t| is_token(t));
    let Some(trigger) = trigger else {
        return Item::Ignore("a command without a trigger id");
    };
    let text = format!("/{name} {}", plain(args, "")).trim().to_owned();
    let msg = InboundMessage {
        origin: origin(channel, kind_of(channel, None), None),
        sender_id: user.to_owned(),
        sender_name: p["user_name"]
            .as_str()
            .map(|n| n.chars().take(80).collect()),
        sender_username: None,
        text,
        message_id: Some(format!("cmd:{trigger}")),
        addressed: true,
        press: None,
        media: Vec::new(),
    };
    Item::Command {
        key: format!("cmd:{trigger}"),
        msg,
    }
}

/// `block_actions` → a press of the first action.
fn press(p: &Value) -> Item {
    if p["type"].as_str() != Some("block_actions") {
        return Item::Ignore("an interaction the adapter does not use");
    }
    let channel = id_of(&p["channel"]["id"], is_slack_id)
        .or_else(|| id_of(&p["container"]["channel_id"], is_slack_id));
    let ts =
        id_of(&p["container"]["message_ts"], is_ts).or_else(|| id_of(&p["message"]["ts"], is_ts));
    let (Some(channel), Some(user), Some(ts)) = (channel, id_of(&p["user"]["id"], is_slack_id), ts)
    else {
        return Item::Ignore("a press without a valid channel, user or message");
    };
    let Some(action) = p["actions"][0]["action_id"]
        .as_str()
        .filter(|a| !a.is_empty() && a.len() <= crate::MAX_ACTION_ID)
    else {
        return Item::Ignore("a press without an action id");
    };
    let Some(trigger) = p["trigger_id"].as_str().filter(|t| is_token(t)) else {
        return Item::Ignore("a press without a trigger id");
    };
    let thread = id_of(&p["message"]["thread_ts"], is_ts);
    let msg = InboundMessage {
        origin: origin(channel, kind_of(channel, None), thread),
        sender_id: user.to_owned(),
        sender_name: p["user"]["username"]
            .as_str()
            .map(|n| n.chars().take(80).collect()),
        sender_username: None,
        text: String::new(),
        message_id: Some(format!("press:{trigger}")),
        addressed: true,
        press: Some(Press {
            action: action.to_owned(),
            message_id: Some(ts.to_owned()),
        }),
        media: Vec::new(),
    };
    Item::Press {
        key: format!("press:{trigger}"),
        msg,
        at: PressAt {
            channel: channel.to_owned(),
            ts: ts.to_owned(),
            user: user.to_owned(),
        },
    }
}

/// Slack's message markup → plain text: the bot's own mention (`<@me>`) removed, other
/// mentions, channels and links spelled out, `&lt;` `&gt;` `&amp;` unescaped.
pub(super) fn plain(text: &str, me: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('<') {
        out.push_str(&unescape(&rest[..start]));
        let after = &rest[start + 1..];
        let Some(end) = after.find('>') else {
            out.push_str(&unescape(&rest[start..]));
            rest = "";
            break;
        };
        out.push_str(&token(&after[..end], me));
        rest = &after[end + 1..];
    }
    out.push_str(&unescape(rest));
    out.trim().to_owned()
}

/// One `<…>` token.
fn token(inner: &str, me: &str) -> String {
    let (target, label) = match inner.split_once('|') {
        Some((t, l)) => (t, Some(unescape(l))),
        None => (inner, None),
    };
    if let Some(user) = target.strip_prefix('@') {
        if !me.is_empty() && user == me {
            return String::new();
        }
        return format!("@{}", label.unwrap_or_else(|| user.to_owned()));
    }
    if let Some(channel) = target.strip_prefix('#') {
        return format!("#{}", label.unwrap_or_else(|| channel.to_owned()));
    }
    if let Some(special) = target.strip_prefix('!') {
        return match label {
            Some(l) => l,
            None => format!("@{}", special.split('^').next().unwrap_or_default()),
        };
    }
    let url = unescape(target);
    match label {
        Some(l) if l != url && !l.is_empty() => format!("{l} ({url})"),
        _ => url,
    }
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}
