//! OpenClaw's Discord section → Switchboard's: the token, who may talk (dmPolicy or the
//! older `dm.policy`/`dm.allowFrom`, allowFrom, groupPolicy, groupAllowFrom) and guilds
//! by id with requireMention, their users and the channel ids they allow.

use serde_json::{json, Map, Value};

use super::channels::{
    bot_token, chunk_limit, enabled, group_policy, groups_open, leave_out, list, policy, POLICIES,
};
use super::convert::put;
use super::source::{join, Ledger};

fn is_id(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_digit())
}

pub(super) fn convert(
    d: &Map<String, Value>,
    default_group_policy: Option<&str>,
    l: &mut Ledger,
    out: &mut Value,
) {
    let key = "channels.discord";
    enabled(d, key, l, out, "discord");
    bot_token(d, "token", key, l, out, "discord");
    let dm = d.get("dm").and_then(Value::as_object);
    match (d.get("dmPolicy"), dm.and_then(|m| m.get("policy"))) {
        (Some(v), _) => policy(
            Some(v),
            &POLICIES,
            "channels.discord.dmPolicy",
            &["channels", "discord", "dmPolicy"],
            l,
            out,
        ),
        (None, Some(v)) => {
            if let Some(p) = v.as_str().filter(|p| POLICIES.contains(p)) {
                put(out, &["channels", "discord", "dmPolicy"], json!(p));
                l.adapted(
                    "channels.discord.dm.policy",
                    "channels.discord.dmPolicy",
                    "the older key of dmPolicy",
                );
            }
        }
        _ => {}
    }
    if let Some(dm) = dm {
        if dm.get("enabled").and_then(Value::as_bool) == Some(false) {
            put(out, &["channels", "discord", "dmPolicy"], json!("disabled"));
            l.adapted(
                "channels.discord.dm.enabled",
                "channels.discord.dmPolicy",
                "false → \"disabled\"",
            );
        } else if dm.contains_key("enabled") {
            l.carried("channels.discord.dm.enabled", "channels.discord.dmPolicy");
        }
    }
    match (d.get("allowFrom"), dm.and_then(|m| m.get("allowFrom"))) {
        (Some(v), _) => {
            list(
                l,
                out,
                v,
                "channels.discord.allowFrom",
                &["channels", "discord", "allowFrom"],
                "discord",
            );
        }
        (None, Some(v)) => {
            list(
                l,
                out,
                v,
                "channels.discord.dm.allowFrom",
                &["channels", "discord", "allowFrom"],
                "discord",
            );
        }
        _ => {}
    }
    group_policy(d, default_group_policy, key, l, out, "discord");
    if let Some(v) = d.get("groupAllowFrom") {
        list(
            l,
            out,
            v,
            "channels.discord.groupAllowFrom",
            &["channels", "discord", "groupAllowFrom"],
            "discord",
        );
    }
    for (id, g) in d
        .get("guilds")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        guild(id, g, groups_open(d, default_group_policy), l, out);
    }
    chunk_limit(d, key, 2000, l, out, "discord");
}

fn guild(id: &str, g: &Value, open: bool, l: &mut Ledger, out: &mut Value) {
    let gkey = join("channels.discord.guilds", id);
    if !is_id(id) && id != "*" {
        l.dropped(
            &gkey,
            "a guild named by its slug: Switchboard needs the guild id",
        );
        return;
    }
    let mut channels = Vec::new();
    let mut named = Vec::new();
    let listed = g.get("channels").and_then(Value::as_object);
    for (ch, settings) in listed.into_iter().flatten() {
        let allowed = settings.get("allow").and_then(Value::as_bool) != Some(false);
        if !is_id(ch) {
            named.push(ch.clone());
        } else if allowed {
            channels.push(json!(ch));
        }
    }
    if listed.is_some() && channels.is_empty() {
        // An empty list would serve every channel of the guild: more than OpenClaw did.
        // Under "open" OpenClaw bypasses channel lists too; only a sender list is lost.
        let senders = g.get("users").is_some() || g.get("roles").is_some();
        leave_out(
            l,
            &gkey,
            "its channels are listed by name only; Switchboard lists channels by id, and without them would serve every channel of the guild",
            open && senders,
        );
        return;
    }
    let roles = g
        .get("roles")
        .and_then(Value::as_array)
        .is_some_and(|r| !r.is_empty());
    if roles && g.get("users").is_none() {
        leave_out(
            l,
            &gkey,
            "restricted by roles only: Switchboard has no role allowlists and would admit every member; list user ids under users to carry it",
            open,
        );
        return;
    }
    if roles {
        l.dropped(
            &join(&gkey, "roles"),
            "Switchboard has no role allowlists: only the users listed may address the bot",
        );
    }
    let to = format!("channels.discord.guilds.{id}");
    put(out, &["channels", "discord", "guilds", id], json!({}));
    if let Some(m) = g.get("requireMention").and_then(Value::as_bool) {
        put(
            out,
            &["channels", "discord", "guilds", id, "requireMention"],
            json!(m),
        );
        l.carried(
            &join(&gkey, "requireMention"),
            &format!("{to}.requireMention"),
        );
    }
    if let Some(v) = g.get("users") {
        list(
            l,
            out,
            v,
            &join(&gkey, "users"),
            &["channels", "discord", "guilds", id, "allowFrom"],
            "discord",
        );
    }
    if listed.is_some() {
        put(
            out,
            &["channels", "discord", "guilds", id, "channels"],
            Value::Array(channels),
        );
        l.adapted(
            &join(&gkey, "channels"),
            &format!("{to}.channels"),
            "the allowed channel ids (per-channel settings are not supported)",
        );
        for name in named {
            l.dropped(
                &join(&join(&gkey, "channels"), &name),
                "a channel named, not by id: Switchboard lists channels by id",
            );
        }
    }
}
