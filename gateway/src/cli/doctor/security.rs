//! Doctor's security review of a valid config: who can reach the HTTP API, and who can
//! talk to the agents (open DM or group policies, several DM senders sharing one
//! session). Each finding is a warning: it may be intended, but it should be known.

use super::{Report, Status};
use crate::config::{Config, DmPolicy, GroupPolicy, ANY_GROUP};
use crate::routing;

pub fn warnings(
    cfg: &Config,
    env: &dyn Fn(&str) -> Option<String>,
    approved: &[(String, String)],
    r: &mut Report,
) {
    let g = &cfg.gateway;
    let loopback = g
        .bind
        .parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_loopback());
    let token = g.auth.effective_token(env).is_some();
    match (loopback, token) {
        (true, _) => r.add("http api", Status::Ok, format!("listens on {} only", g.bind)),
        (false, true) => r.add(
            "http api",
            Status::Ok,
            format!("listens on {} and requires the token (put TLS in front of it)", g.bind),
        ),
        (false, false) => r.add(
            "http api",
            Status::Fail,
            format!("listens on {} without gateway.auth.token: anyone who reaches it controls the agents", g.bind),
        ),
    }

    let t = &cfg.channels.telegram;
    let d = &cfg.channels.discord;
    let channels = [
        (
            "telegram",
            t.enabled,
            t.dm_policy,
            &t.allow_from,
            t.group_policy,
            t.group_allow_from.as_ref(),
            t.groups.get(ANY_GROUP).map(|g| g.allow_from.as_ref()),
            "groups",
        ),
        (
            "discord",
            d.enabled,
            d.dm_policy,
            &d.allow_from,
            d.group_policy,
            d.group_allow_from.as_ref(),
            d.guilds.get(ANY_GROUP).map(|g| g.allow_from.as_ref()),
            "guilds",
        ),
    ];
    for (id, enabled, dm, allow_from, group, group_allow_from, any_group, groups_key) in channels {
        if !enabled {
            continue;
        }
        let check = format!("{id} access");
        let mut findings = Vec::new();
        if dm == DmPolicy::Open {
            findings.push("dmPolicy \"open\": anyone can DM the bot".to_string());
        } else if allow_from.iter().any(|a| a == "*") && dm != DmPolicy::Disabled {
            findings.push("allowFrom has \"*\": anyone can DM the bot".to_string());
        }
        // Groups served beyond those listed by id, and who may address the bot there.
        let every_group =
            group == GroupPolicy::Open || (group == GroupPolicy::Allowlist && any_group.is_some());
        if group != GroupPolicy::Disabled && every_group {
            let senders = any_group
                .flatten()
                .or(group_allow_from)
                .unwrap_or(allow_from);
            if senders.is_empty() || senders.iter().any(|s| s == "*") {
                let why = if group == GroupPolicy::Open {
                    "groupPolicy \"open\"".to_string()
                } else {
                    format!("{groups_key}.\"*\"")
                };
                findings.push(format!(
                    "{why}: anyone in any group the bot is added to can use it"
                ));
            }
        }
        if findings.is_empty() {
            r.add(check, Status::Ok, "only listed senders and groups");
        } else {
            r.add(check, Status::Warn, findings.join("; "));
        }
    }

    match routing::shared_dm_warning(cfg, approved) {
        Some(w) => r.add("dm sessions", Status::Warn, w),
        None => r.add(
            "dm sessions",
            Status::Ok,
            "no two DM senders share a session",
        ),
    }
}
