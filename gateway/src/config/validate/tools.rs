//! Checks of the `tools` section and of `agents.list[].tools`: every tool name, glob and
//! group in a policy list is known (an unknown one is an error naming its key), the exec
//! allowlist globs compile, `tools.exec.env` names are valid, and the ranges.

use std::time::Duration;

use super::super::error::{Issue, KeyPath};
use super::super::{check_entry, Config};

/// Shortest and longest `tools.exec.approvalTimeout`.
const APPROVAL_TIMEOUT: (Duration, Duration) =
    (Duration::from_secs(1), Duration::from_secs(24 * 3600));

pub(crate) fn tools(config: &Config, out: &mut Vec<Issue>) {
    let t = &config.tools;
    let at = KeyPath::dotted("tools");
    names(out, &at.key("allow"), t.allow.as_deref());
    names(out, &at.key("deny"), Some(&t.deny));
    let sub = at.key("subagents").key("tools");
    names(out, &sub.key("allow"), t.subagents.tools.allow.as_deref());
    names(out, &sub.key("deny"), Some(&t.subagents.tools.deny));
    allowlist(out, &at.key("exec").key("allowlist"), &t.exec.allowlist);
    for (name, value) in &t.exec.env {
        let path = at.key("exec").key("env").key(name);
        if !super::valid_env_name(name) {
            out.push(Issue::new(
                path.clone(),
                format!("{name:?} is not a valid environment variable name (letters, digits and _, not starting with a digit)"),
            ));
        }
        if value.contains('\0') {
            out.push(Issue::new(path, "must not contain a NUL character"));
        }
    }
    let timeout = t.exec.approval_timeout;
    if timeout < APPROVAL_TIMEOUT.0 || timeout > APPROVAL_TIMEOUT.1 {
        out.push(Issue::new(
            at.key("exec").key("approvalTimeout"),
            format!(
                "must be between 1s and 24h, got {}",
                humantime::format_duration(timeout)
            ),
        ));
    }
    for (i, host) in t.web.fetch.allow_hosts.iter().enumerate() {
        let bad = host.is_empty()
            || host.len() > 253
            || host
                .chars()
                .any(|c| c.is_whitespace() || matches!(c, '/' | '@' | '?' | '#'));
        if bad {
            out.push(Issue::new(
                at.key("web").key("fetch").key("allowHosts").index(i),
                format!(
                    "must be a host name or IP address (no scheme, path or port), got {host:?}"
                ),
            ));
        }
    }
    for (i, agent) in config.agents.list.iter().enumerate() {
        let Some(tools) = &agent.tools else { continue };
        let at = KeyPath::dotted("agents.list").index(i).key("tools");
        names(out, &at.key("allow"), tools.allow.as_deref());
        names(out, &at.key("deny"), Some(&tools.deny));
        if let Some(list) = &tools.exec.allowlist {
            allowlist(out, &at.key("exec").key("allowlist"), list);
        }
    }
}

fn names(out: &mut Vec<Issue>, at: &KeyPath, list: Option<&[String]>) {
    for (i, entry) in list.unwrap_or_default().iter().enumerate() {
        if let Some(message) = check_entry(entry) {
            out.push(Issue::new(at.index(i), message));
        }
    }
}

fn allowlist(out: &mut Vec<Issue>, at: &KeyPath, list: &[String]) {
    for (i, pattern) in list.iter().enumerate() {
        if !pattern.starts_with('/') {
            out.push(Issue::new(
                at.index(i),
                format!("must be a glob of absolute executable paths such as \"/usr/bin/git\" or \"/usr/bin/*\", optionally followed by argument patterns (\"/usr/bin/git status *\"), got {pattern:?}"),
            ));
        } else if let Some(e) = pattern
            .split_whitespace()
            .find_map(|w| globset::Glob::new(w).err())
        {
            out.push(Issue::new(at.index(i), format!("invalid glob: {e}")));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_errors as errors;

    /// An unknown tool name in any policy list is a config error naming its key.
    /// Catches: policy lists accepted unchecked (a typo silently allows or denies nothing).
    #[test]
    fn unknown_tool_names_are_errors_naming_the_key() {
        let errs = errors(serde_json::json!({
            "tools": {
                "allow": ["read", "group:fs", "web_*", "cron"],
                "deny": ["reed"],
                "subagents": {"tools": {"deny": ["group:nope"]}},
                "exec": {"allowlist": ["git", "/usr/bin/[x"], "env": {"1X": "a"}, "approvalTimeout": "0s"},
                "web": {"fetch": {"allowHosts": ["http://x/"]}}
            },
            "agents": {"list": [{"id": "main", "tools": {"allow": ["zz*"], "exec": {"allowlist": ["/bin/*"]}}}]}
        }));
        let paths: Vec<&str> = errs
            .iter()
            .map(|e| e.split(": ").next().unwrap_or(""))
            .collect();
        assert_eq!(
            paths,
            vec![
                "agents.list[0].tools.allow[0]",
                "tools.deny[0]",
                "tools.exec.allowlist[0]",
                "tools.exec.allowlist[1]",
                "tools.exec.approvalTimeout",
                "tools.exec.env.1X",
                "tools.subagents.tools.deny[0]",
                "tools.web.fetch.allowHosts[0]",
            ],
            "{errs:#?}"
        );
        assert!(errs[1].contains("unknown tool \"reed\""), "{}", errs[1]);
    }

    #[test]
    fn the_defaults_and_the_reference_examples_are_valid() {
        assert_eq!(errors(serde_json::json!({})), Vec::<String>::new());
        let errs = errors(serde_json::json!({"tools": {
            "profile": "coding",
            "subagents": {"tools": {"allow": ["read", "exec", "process"], "deny": ["gateway", "cron"]}},
            "exec": {"security": "full", "ask": "always", "allowlist": ["/usr/bin/*"], "env": {"CI": "1"}}
        }}));
        assert_eq!(errs, Vec::<String>::new());
    }
}
