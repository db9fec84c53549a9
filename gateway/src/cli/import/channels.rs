//! OpenClaw's Telegram section → Switchboard's (Discord's in `discord.rs`), and what both share: tokens, who may talk
//! (dmPolicy, allowFrom, groupPolicy, groupAllowFrom), groups and guilds with
//! requireMention and their own sender lists. OpenClaw starts a channel whose section
//! exists, so such a channel is enabled unless it says `enabled: false`.

use serde_json::{json, Map, Value};

use super::convert::{put, secret};
use super::source::{join, Ledger};

pub(super) const POLICIES: [&str; 4] = ["pairing", "allowlist", "open", "disabled"];
pub(super) const GROUP_POLICIES: [&str; 3] = ["allowlist", "open", "disabled"];

pub fn convert(input: &Value, l: &mut Ledger, out: &mut Value) {
    let default_group_policy = input["channels"]["defaults"]["groupPolicy"].as_str();
    if let Some(t) = input["channels"]["telegram"].as_object() {
        telegram(t, default_group_policy, l, out);
    }
    if let Some(d) = input["channels"]["discord"].as_object() {
        super::discord::convert(d, default_group_policy, l, out);
    }
    if input.get("accessGroups").is_some() {
        l.adapted(
            "accessGroups",
            "channels.<id>.allowFrom",
            "written into the Telegram and Discord allowlists that name them (other channels' members are not used)",
        );
    }
    if let Some(p) = default_group_policy {
        l.adapted(
            "channels.defaults.groupPolicy",
            "channels.<id>.groupPolicy",
            format!("\"{p}\" written to each channel that does not set its own"),
        );
    }
}

/// An allowlist entry as Switchboard reads it: ids as strings or numbers, `@username`,
/// `*`. OpenClaw's prefixes (`tg:`, `telegram:`, `user:`, `discord:`, `<@…>`) are
/// dropped; a bare Discord name becomes `@name`. `None`: not an entry at all.
pub(super) fn entry(v: &Value, channel: &str) -> Option<(Value, bool)> {
    if v.is_number() {
        return Some((v.clone(), false));
    }
    let s = v.as_str()?.trim();
    let prefixes: &[&str] = if channel == "telegram" {
        &["tg:", "telegram:"]
    } else {
        &["user:", "discord:"]
    };
    for p in prefixes {
        if let Some(rest) = s.strip_prefix(p) {
            return Some((json!(rest), true));
        }
    }
    if let Some(id) = s.strip_prefix("<@").and_then(|r| r.strip_suffix('>')) {
        return Some((json!(id.trim_start_matches('!')), true));
    }
    let is_id = s
        .trim_start_matches('-')
        .chars()
        .all(|c| c.is_ascii_digit())
        && !s.is_empty();
    if channel == "discord" && !is_id && s != "*" && !s.starts_with('@') {
        return Some((json!(format!("@{s}")), true));
    }
    Some((json!(s), false))
}

/// The entries an `accessGroup:<name>` reference stands for on `channel`: the group's
/// members for that channel and for every channel (`"*"`); `None` for an unknown group.
fn access_group(input: &Value, name: &str, channel: &str) -> Option<Vec<Value>> {
    let members = input["accessGroups"].get(name)?.get("members")?;
    Some(
        ["*", channel]
            .iter()
            .filter_map(|k| members.get(*k).and_then(Value::as_array))
            .flatten()
            .cloned()
            .collect(),
    )
}

/// An allowlist at `key` written to `to`.
pub(super) fn list(
    l: &mut Ledger,
    out: &mut Value,
    src: &Value,
    key: &str,
    to: &[&str],
    channel: &str,
) -> Option<Value> {
    let items = src.as_array()?;
    let mut changed = false;
    let mut notes = Vec::new();
    let mut ids: Vec<Value> = Vec::new();
    for item in items {
        let group = item
            .as_str()
            .and_then(|s| s.trim().strip_prefix("accessGroup:"));
        let expanded = match group {
            Some(name) => match access_group(l.input, name, channel) {
                Some(members) => {
                    notes.push(format!("accessGroup:{name} written as its members"));
                    members
                }
                None => {
                    notes.push(format!("accessGroup:{name} is not defined: left out"));
                    Vec::new()
                }
            },
            None => vec![item.clone()],
        };
        for v in &expanded {
            if let Some((v, c)) = entry(v, channel) {
                changed |= c;
                if !ids.contains(&v) {
                    ids.push(v);
                }
            }
        }
    }
    if ids.is_empty() && !items.is_empty() {
        // OpenClaw admits nobody here; Switchboard reads an empty list as everyone.
        l.refusals.push(format!(
            "{key}: {} — this list admits nobody, and Switchboard reads an empty list as \"everyone\"; define the group or remove the list",
            notes.join("; ")
        ));
    }
    let value = Value::Array(ids);
    put(out, to, value.clone());
    if changed {
        notes.push("ids without OpenClaw's prefixes; names as @username".into());
    }
    if notes.is_empty() {
        l.carried(key, &to.join("."));
    } else {
        l.adapted(key, &to.join("."), notes.join("; "));
    }
    Some(value)
}

pub(super) fn enabled(
    src: &Map<String, Value>,
    key: &str,
    l: &mut Ledger,
    out: &mut Value,
    channel: &str,
) {
    let on = src.get("enabled").and_then(Value::as_bool).unwrap_or(true);
    put(out, &["channels", channel, "enabled"], json!(on));
    if src.contains_key("enabled") {
        l.carried(
            &join(key, "enabled"),
            &format!("channels.{channel}.enabled"),
        );
    } else {
        l.adapted(
            &join(key, "enabled"),
            &format!("channels.{channel}.enabled"),
            "not set: true, as OpenClaw starts a channel whose section exists",
        );
    }
}

pub(super) fn token(
    src: &Map<String, Value>,
    field: &str,
    key: &str,
    l: &mut Ledger,
    out: &mut Value,
    channel: &str,
) {
    let Some(v) = src.get(field) else {
        return;
    };
    let to = format!("channels.{channel}.{field}");
    match secret(v) {
        Ok((t, how)) => {
            put(out, &["channels", channel, field], json!(t));
            match how {
                Some(how) => l.adapted(&join(key, field), &to, how),
                None => l.carried(&join(key, field), &to),
            }
        }
        Err(why) => l.dropped(&join(key, field), why),
    }
}

/// Whether the channel serves groups it does not list (`groupPolicy: "open"`, its own
/// or `channels.defaults`'; OpenClaw's default is "allowlist").
pub(super) fn groups_open(src: &Map<String, Value>, default: Option<&str>) -> bool {
    src.get("groupPolicy").and_then(Value::as_str).or(default) == Some("open")
}

/// A group or guild left out of the result. Under an open group policy Switchboard
/// would serve it anyway, to everyone: that stops the import.
pub(super) fn leave_out(l: &mut Ledger, key: &str, why: &str, open: bool) {
    if open {
        l.refusals.push(format!(
            "{key}: {why}; under groupPolicy \"open\" Switchboard would serve it to everyone. Set groupPolicy \"allowlist\" (listing the groups to serve) and import again"
        ));
    }
    l.dropped(key, why);
}

/// The bot's token: `field`, else the default account's (OpenClaw's multi-account form;
/// Switchboard runs one bot per channel, so other accounts are listed as not carried).
pub(super) fn bot_token(
    src: &Map<String, Value>,
    field: &str,
    key: &str,
    l: &mut Ledger,
    out: &mut Value,
    channel: &str,
) {
    let default = src
        .get("accounts")
        .and_then(|a| a.get("default"))
        .and_then(|d| d.get(field));
    let mut used_default = false;
    match (src.contains_key(field), default) {
        (true, _) => token(src, field, key, l, out, channel),
        (false, Some(tok)) => {
            let from = format!("{key}.accounts.default.{field}");
            match secret(tok) {
                Ok((tok, _)) => {
                    put(out, &["channels", channel, field], json!(tok));
                    l.adapted(
                        &from,
                        &format!("channels.{channel}.{field}"),
                        "the default account's token: Switchboard runs one bot per channel",
                    );
                    used_default = true;
                }
                Err(why) => l.dropped(&from, why),
            }
        }
        (false, None) => {}
    }
    if src.contains_key("accounts") {
        let why = if used_default {
            "Switchboard runs one bot per channel (the default account's token is used)"
        } else {
            "Switchboard runs one bot per channel"
        };
        l.dropped(&join(key, "accounts"), why);
    }
}

pub(super) fn policy(
    value: Option<&Value>,
    allowed: &[&str],
    key: &str,
    to: &[&str],
    l: &mut Ledger,
    out: &mut Value,
) {
    let Some(v) = value else {
        return;
    };
    match v.as_str().filter(|p| allowed.contains(p)) {
        Some(p) => {
            put(out, to, json!(p));
            l.carried(key, &to.join("."));
        }
        None => l.dropped(key, format!("unknown policy {v}")),
    }
}

pub(super) fn chunk_limit(
    src: &Map<String, Value>,
    key: &str,
    max: u64,
    l: &mut Ledger,
    out: &mut Value,
    channel: &str,
) {
    let Some(n) = src.get("textChunkLimit").and_then(Value::as_u64) else {
        return;
    };
    let to = format!("channels.{channel}.textChunkLimit");
    put(
        out,
        &["channels", channel, "textChunkLimit"],
        json!(n.clamp(1, max)),
    );
    if n > max {
        l.adapted(
            &join(key, "textChunkLimit"),
            &to,
            format!("{n} → {max}, the platform's limit"),
        );
    } else {
        l.carried(&join(key, "textChunkLimit"), &to);
    }
}

fn telegram(
    t: &Map<String, Value>,
    default_group_policy: Option<&str>,
    l: &mut Ledger,
    out: &mut Value,
) {
    let key = "channels.telegram";
    enabled(t, key, l, out, "telegram");
    bot_token(t, "botToken", key, l, out, "telegram");
    if t.contains_key("tokenFile") {
        l.dropped(
            "channels.telegram.tokenFile",
            "set botToken (or TELEGRAM_BOT_TOKEN) instead of a token file",
        );
    }
    policy(
        t.get("dmPolicy"),
        &POLICIES,
        "channels.telegram.dmPolicy",
        &["channels", "telegram", "dmPolicy"],
        l,
        out,
    );
    if let Some(v) = t.get("allowFrom") {
        list(
            l,
            out,
            v,
            "channels.telegram.allowFrom",
            &["channels", "telegram", "allowFrom"],
            "telegram",
        );
    }
    group_policy(t, default_group_policy, key, l, out, "telegram");
    if let Some(v) = t.get("groupAllowFrom") {
        list(
            l,
            out,
            v,
            "channels.telegram.groupAllowFrom",
            &["channels", "telegram", "groupAllowFrom"],
            "telegram",
        );
    }
    for (id, g) in t
        .get("groups")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let gkey = join("channels.telegram.groups", id);
        if g.get("enabled").and_then(Value::as_bool) == Some(false) {
            let open = groups_open(t, default_group_policy);
            leave_out(l, &gkey, "a disabled group: left out (not served)", open);
            continue;
        }
        put(out, &["channels", "telegram", "groups", id], json!({}));
        if let Some(m) = g.get("requireMention").and_then(Value::as_bool) {
            put(
                out,
                &["channels", "telegram", "groups", id, "requireMention"],
                json!(m),
            );
            l.carried(
                &join(&gkey, "requireMention"),
                &format!("{gkey}.requireMention"),
            );
        }
        if let Some(v) = g.get("allowFrom") {
            list(
                l,
                out,
                v,
                &join(&gkey, "allowFrom"),
                &["channels", "telegram", "groups", id, "allowFrom"],
                "telegram",
            );
        }
        if g.get("enabled").is_some() {
            l.carried(&join(&gkey, "enabled"), &gkey);
        }
        for (k, _) in g.as_object().into_iter().flatten() {
            if !["requireMention", "allowFrom", "enabled"].contains(&k.as_str()) {
                l.dropped(
                    &join(&gkey, k),
                    "per-group settings beyond requireMention and allowFrom are not supported",
                );
            }
        }
    }
    if let Some(url) = t.get("webhookUrl").and_then(Value::as_str) {
        put(out, &["channels", "telegram", "mode"], json!("webhook"));
        put(out, &["channels", "telegram", "webhookUrl"], json!(url));
        l.adapted(
            "channels.telegram.webhookUrl",
            "channels.telegram.webhookUrl",
            "mode \"webhook\"; the URL must reach this daemon's POST /telegram/webhook",
        );
    }
    token(t, "webhookSecret", key, l, out, "telegram");
    if t.contains_key("webhookPath") {
        l.dropped(
            "channels.telegram.webhookPath",
            "Switchboard serves the webhook at /telegram/webhook",
        );
    }
    chunk_limit(t, key, 4096, l, out, "telegram");
}

pub(super) fn group_policy(
    src: &Map<String, Value>,
    default: Option<&str>,
    key: &str,
    l: &mut Ledger,
    out: &mut Value,
    channel: &str,
) {
    match src.get("groupPolicy") {
        Some(v) => policy(
            Some(v),
            &GROUP_POLICIES,
            &join(key, "groupPolicy"),
            &["channels", channel, "groupPolicy"],
            l,
            out,
        ),
        None => {
            if let Some(p) = default.filter(|p| GROUP_POLICIES.contains(p)) {
                put(out, &["channels", channel, "groupPolicy"], json!(p));
            }
        }
    }
}
