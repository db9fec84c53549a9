//! Checks of the `hooks` section: each entry is a command or a URL (not both, not
//! neither), URLs are http(s), header names are valid, timeouts are in range.

use super::super::error::{Issue, KeyPath};
use super::super::hooks::{HookEntry, MAX_HOOK_TIMEOUT, MIN_HOOK_TIMEOUT};
use super::super::Config;

pub(super) fn hooks(config: &Config, out: &mut Vec<Issue>) {
    let lists = [
        ("SubagentStart", &config.hooks.subagent_start),
        ("SubagentStop", &config.hooks.subagent_stop),
    ];
    for (event, list) in lists {
        for (i, entry) in list.iter().enumerate() {
            entry_issues(KeyPath::dotted("hooks").key(event).index(i), entry, out);
        }
    }
}

fn entry_issues(at: KeyPath, e: &HookEntry, out: &mut Vec<Issue>) {
    match (&e.command, &e.url) {
        (Some(_), Some(_)) => out.push(Issue::new(at.clone(), "give `command` or `url`, not both")),
        (None, None) => out.push(Issue::new(at.clone(), "needs a `command` or a `url`")),
        (Some(c), None) if c.trim().is_empty() => {
            out.push(Issue::new(at.key("command"), "must not be empty"))
        }
        (None, Some(u)) if !(u.starts_with("http://") || u.starts_with("https://")) => {
            out.push(Issue::new(
                at.key("url"),
                format!("must start with http:// or https://, got {u:?}"),
            ))
        }
        _ => {}
    }
    if e.command.is_some() && !e.headers.is_empty() {
        out.push(Issue::new(
            at.key("headers"),
            "only a `url` hook sends headers",
        ));
    }
    for (name, value) in &e.headers {
        if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err()
            || reqwest::header::HeaderValue::from_str(value).is_err()
        {
            out.push(Issue::new(
                at.key("headers").key(name),
                "is not a valid HTTP header",
            ));
        }
    }
    if !(MIN_HOOK_TIMEOUT..=MAX_HOOK_TIMEOUT).contains(&e.timeout) {
        out.push(Issue::new(
            at.key("timeout"),
            format!(
                "must be 1s to 10m, got {}",
                humantime::format_duration(e.timeout)
            ),
        ));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use crate::config::parse_config;

    fn issues(json: &str) -> Vec<String> {
        match parse_config(json, &|_| None) {
            Ok(_) => vec![],
            Err(errs) => errs
                .into_iter()
                .map(|e| format!("{}: {}", e.path, e.message))
                .collect(),
        }
    }

    /// Catches: a hook entry that can never run (or runs twice: both kinds) accepted, or
    /// an error that does not name the entry.
    #[test]
    fn bad_hook_entries_are_reported_with_their_key_path() {
        assert!(issues(r#"{hooks: {SubagentStart: [{command: "true"}], SubagentStop: [{url: "http://127.0.0.1:9/x", headers: {"X-Key": "v"}, timeout: "2s"}]}}"#).is_empty());
        let got = issues(
            r#"{hooks: {SubagentStart: [{command: "a", url: "http://x"}, {}, {command: " "}],
                SubagentStop: [{url: "ftp://x"}, {command: "x", timeout: "1h"}, {url: "http://x", headers: {"bad name": "v"}}]}}"#,
        )
        .join("\n");
        for want in [
            "hooks.SubagentStart[0]: give `command` or `url`, not both",
            "hooks.SubagentStart[1]: needs a `command` or a `url`",
            "hooks.SubagentStart[2].command: must not be empty",
            "hooks.SubagentStop[0].url: must start with http:// or https://",
            "hooks.SubagentStop[1].timeout: must be 1s to 10m, got 1h",
            "hooks.SubagentStop[2].headers[\"bad name\"]: is not a valid HTTP header",
        ] {
            assert!(got.contains(want), "missing {want:?} in:\n{got}");
        }
        assert!(issues(r#"{hooks: {SubagentEnd: []}}"#)
            .join("\n")
            .contains("SubagentEnd"));
    }
}
