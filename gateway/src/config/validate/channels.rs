//! The `channels.*` checks: API URLs, text limits, Telegram's webhook settings, and the
//! allowlists (sender ids, @usernames, group and guild keys).

use super::range;
use crate::config::error::{Issue, KeyPath};
use crate::config::Config;

pub(super) fn discord(config: &Config, out: &mut Vec<Issue>) {
    let d = &config.channels.discord;
    if !(d.api_url.starts_with("http://") || d.api_url.starts_with("https://")) {
        out.push(Issue::new(
            KeyPath::dotted("channels.discord.apiUrl"),
            format!("must start with http:// or https://, got {:?}", d.api_url),
        ));
    }
    range(
        out,
        "channels.discord.textChunkLimit",
        d.text_chunk_limit as u64,
        200,
        2000,
        "",
    );
    let at = KeyPath::dotted("channels.discord");
    senders(out, &at.key("allowFrom"), &d.allow_from, Platform::Discord);
    if let Some(list) = &d.group_allow_from {
        senders(out, &at.key("groupAllowFrom"), list, Platform::Discord);
    }
    for (guild, g) in &d.guilds {
        let at = at.key("guilds").key(guild);
        if guild != crate::config::ANY_GROUP && !snowflake(guild) {
            out.push(Issue::new(
                at.clone(),
                format!("guild keys must be numeric guild ids or \"*\", got {guild:?}"),
            ));
        }
        for (i, ch) in g.channels.iter().enumerate() {
            if !snowflake(ch) {
                out.push(Issue::new(
                    at.key("channels").index(i),
                    format!("must be a numeric channel id, got {ch:?}"),
                ));
            }
        }
        if let Some(list) = &g.allow_from {
            senders(out, &at.key("allowFrom"), list, Platform::Discord);
        }
    }
}

/// A Discord id (user, guild, channel): a snowflake of up to 20 digits.
fn snowflake(s: &str) -> bool {
    !s.is_empty() && s.len() <= 20 && s.chars().all(|c| c.is_ascii_digit())
}

#[derive(Clone, Copy)]
enum Platform {
    Telegram,
    Discord,
}

/// Checks an allowlist of senders: platform user ids, `@username`s, or `"*"` (anyone).
fn senders(out: &mut Vec<Issue>, at: &KeyPath, list: &[String], platform: Platform) {
    for (i, who) in list.iter().enumerate() {
        let username = who.strip_prefix('@').is_some_and(|u| {
            !u.is_empty()
                && u.len() <= 64
                && u.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        });
        let id = match platform {
            Platform::Telegram => who.parse::<i64>().is_ok_and(|n| n > 0),
            Platform::Discord => snowflake(who),
        };
        if !(username || id || who == "*") {
            let what = match platform {
                Platform::Telegram => "a numeric Telegram user id",
                Platform::Discord => "a numeric Discord user id",
            };
            out.push(Issue::new(
                at.clone().index(i),
                format!("must be {what}, an @username or \"*\", got {who:?}"),
            ));
        }
    }
}

pub(super) fn telegram(config: &Config, out: &mut Vec<Issue>) {
    let t = &config.channels.telegram;
    if !(t.api_url.starts_with("http://") || t.api_url.starts_with("https://")) {
        out.push(Issue::new(
            KeyPath::dotted("channels.telegram.apiUrl"),
            format!("must start with http:// or https://, got {:?}", t.api_url),
        ));
    }
    range(
        out,
        "channels.telegram.textChunkLimit",
        t.text_chunk_limit as u64,
        64,
        4096,
        "",
    );
    range(
        out,
        "channels.telegram.pollTimeoutSeconds",
        t.poll_timeout_seconds,
        1,
        50,
        "",
    );
    if t.mode == crate::config::TelegramMode::Webhook {
        match &t.webhook_url {
            Some(u) if u.starts_with("https://") || u.starts_with("http://") => {}
            _ => out.push(Issue::new(
                KeyPath::dotted("channels.telegram.webhookUrl"),
                "webhook mode needs webhookUrl (the public URL of POST /telegram/webhook)",
            )),
        }
        match &t.webhook_secret {
            Some(s)
                if s.len() >= 8
                    && s.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') => {}
            _ => out.push(Issue::new(
                KeyPath::dotted("channels.telegram.webhookSecret"),
                "webhook mode needs webhookSecret: 8-256 characters of A-Z, a-z, 0-9, _ and -",
            )),
        }
    }
    let at = KeyPath::dotted("channels.telegram");
    senders(out, &at.key("allowFrom"), &t.allow_from, Platform::Telegram);
    if let Some(list) = &t.group_allow_from {
        senders(out, &at.key("groupAllowFrom"), list, Platform::Telegram);
    }
    for (chat, g) in &t.groups {
        let at = at.key("groups").key(chat);
        if chat != crate::config::ANY_GROUP && chat.parse::<i64>().is_err() {
            out.push(Issue::new(
                at.clone(),
                format!(
                    "group keys must be numeric chat ids (e.g. \"-1001234567890\") or \"*\", got {chat:?}"
                ),
            ));
        }
        if let Some(list) = &g.allow_from {
            senders(out, &at.key("allowFrom"), list, Platform::Telegram);
        }
    }
}
