//! Doctor's security review of a valid config: who can reach the HTTP API, and who can
//! talk to the agents (open DM or group policies, several DM senders sharing one
//! session). Each finding is a warning: it may be intended, but it should be known.

use std::path::Path;

use super::{Report, Status};
use crate::config::{AuthMode, Config, DmPolicy, GroupPolicy, ANY_GROUP};
use crate::routing;
use crate::server::token_file;

/// Who can reach the HTTP API, and the token that guards it: the configured one, or the
/// generated `<state_dir>/gateway.token` (present, a regular file, 0600), or none at all
/// with `gateway.auth.mode: "none"` (flagged).
fn http_api(cfg: &Config, env: &dyn Fn(&str) -> Option<String>, state_dir: &Path, r: &mut Report) {
    let g = &cfg.gateway;
    let loopback = g
        .bind
        .parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_loopback());
    let reach = if loopback {
        format!("listens on {} only", g.bind)
    } else {
        format!("listens on {} (put TLS in front of it)", g.bind)
    };
    const OPEN: &str = "`switchboard status` prints the web chat's link";
    if g.auth.mode == AuthMode::None {
        let status = if loopback { Status::Warn } else { Status::Fail };
        r.add(
            "http api",
            status,
            format!("{reach} with gateway.auth.mode \"none\": every local user and process (a command the agents run too) can read every transcript, drive the agents and answer approvals; remove the key to use a token"),
        );
        return;
    }
    if g.auth.effective_token(env).is_some() {
        r.add(
            "http api",
            Status::Ok,
            format!("{reach}; requires the configured token; {OPEN}"),
        );
        return;
    }
    if !loopback {
        r.add(
            "http api",
            Status::Fail,
            format!("listens on {} without gateway.auth.token: the daemon refuses to start; set a token", g.bind),
        );
        return;
    }
    let path = token_file::path_in(state_dir);
    match token_file::read(state_dir) {
        Ok(Some(_)) => r.add(
            "http api",
            Status::Ok,
            format!(
                "{reach}; requires the token in {} (0600); {OPEN}",
                path.display()
            ),
        ),
        Ok(None) => r.add(
            "http api",
            Status::Ok,
            format!(
                "{reach}; the daemon makes its token in {} at its first start; {OPEN}",
                path.display()
            ),
        ),
        Err(e) => r.add("http api", Status::Fail, e.to_string()),
    }
}

pub fn warnings(
    cfg: &Config,
    env: &dyn Fn(&str) -> Option<String>,
    state_dir: &Path,
    approved: &[(String, String)],
    r: &mut Report,
) {
    http_api(cfg, env, state_dir, r);

    let t = &cfg.channels.telegram;
    let d = &cfg.channels.discord;
    let s = &cfg.channels.slack;
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
        (
            "slack",
            s.enabled,
            s.dm_policy,
            &s.allow_from,
            s.group_policy,
            None,
            s.channels.get(ANY_GROUP).map(|c| c.allow_from.as_ref()),
            "channels",
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    fn http_line(cfg: &Config, state_dir: &Path) -> (Status, String) {
        let mut r = Report::default();
        http_api(cfg, &|_| None, state_dir, &mut r);
        let c = r.checks.pop().unwrap();
        (c.status, c.detail)
    }

    /// Catches: doctor calling a daemon without a token OK, passing a token file others
    /// can read, or not flagging `mode: "none"`.
    #[test]
    fn the_http_api_line_checks_the_token() {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = Config::default();
        let (status, detail) = http_line(&cfg, dir.path());
        assert_eq!(status, Status::Ok);
        assert!(detail.contains("makes its token"), "{detail}");
        let made = token_file::load_or_create(dir.path()).unwrap();
        let (status, detail) = http_line(&cfg, dir.path());
        assert_eq!(status, Status::Ok);
        assert!(
            detail.contains("(0600)") && detail.contains("switchboard status"),
            "{detail}"
        );
        std::fs::set_permissions(&made.path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let (status, detail) = http_line(&cfg, dir.path());
        assert_eq!(status, Status::Fail);
        assert!(detail.contains("chmod 600"), "{detail}");
        cfg.gateway.auth.mode = AuthMode::None;
        let (status, detail) = http_line(&cfg, dir.path());
        assert_eq!(status, Status::Warn);
        assert!(detail.contains("mode \"none\""), "{detail}");
        assert!(!detail.contains(&made.token));
    }
}
