//! Checks of the `mcp` and `cron` sections: server names that make unambiguous tool
//! names, a command or a URL (not both), environment variable and header names, each
//! scheduled job (id, schedule, message, agent, delivery) and unique job ids. Ranges
//! (`timeout`, `maxConcurrent`) are in `limits.rs`.

use std::collections::BTreeSet;

use super::super::error::{Issue, KeyPath};
use super::super::Config;

/// Longest MCP server name (it is part of every tool name, at most 64 characters).
pub const MAX_SERVER_NAME: usize = 32;

pub(crate) fn mcp_cron(config: &Config, out: &mut Vec<Issue>) {
    for (name, server) in &config.mcp.servers {
        let at = KeyPath::dotted("mcp.servers").key(name);
        if let Some(why) = bad_server_name(name) {
            out.push(Issue::new(at.clone(), why));
        }
        match (&server.command, &server.url) {
            (Some(_), Some(_)) | (None, None) => out.push(Issue::new(
                at.clone(),
                "give either `command` (a stdio server) or `url` (a streamable HTTP server)",
            )),
            (Some(command), None) => {
                if command.trim().is_empty() {
                    out.push(Issue::new(at.key("command"), "must not be empty"));
                }
                if !server.headers.is_empty() {
                    out.push(Issue::new(at.key("headers"), "only for a `url` server"));
                }
            }
            (None, Some(url)) => {
                if !(url.starts_with("http://") || url.starts_with("https://"))
                    || reqwest::Url::parse(url).is_err()
                {
                    out.push(Issue::new(
                        at.key("url"),
                        format!("must be an http:// or https:// URL, got {url:?}"),
                    ));
                }
                for key in [
                    ("args", server.args.is_empty()),
                    ("env", server.env.is_empty()),
                    ("cwd", server.cwd.is_none()),
                ]
                .iter()
                .filter(|(_, empty)| !empty)
                .map(|(k, _)| *k)
                {
                    out.push(Issue::new(at.key(key), "only for a `command` server"));
                }
            }
        }
        for (k, v) in &server.env {
            if !super::valid_env_name(k) {
                out.push(Issue::new(
                    at.key("env").key(k),
                    format!("{k:?} is not a valid environment variable name (letters, digits and _, not starting with a digit)"),
                ));
            } else if v.contains('\0') {
                out.push(Issue::new(
                    at.key("env").key(k),
                    "must not contain a NUL character",
                ));
            }
        }
        for (k, v) in &server.headers {
            if reqwest::header::HeaderName::from_bytes(k.as_bytes()).is_err() {
                out.push(Issue::new(
                    at.key("headers").key(k),
                    format!("{k:?} is not a valid HTTP header name"),
                ));
            } else if reqwest::header::HeaderValue::from_str(v).is_err() {
                // The value is not quoted: it is often a secret.
                out.push(Issue::new(
                    at.key("headers").key(k),
                    "is not a valid header value (no line breaks or control characters)",
                ));
            }
        }
    }
    let mut ids = BTreeSet::new();
    for (i, job) in config.cron.jobs.iter().enumerate() {
        let at = KeyPath::dotted("cron.jobs").index(i);
        if let Err((key, message)) = crate::config::cron_job::check_field(job, config) {
            out.push(Issue::new(at.key(key), message));
        }
        if !ids.insert(job.id.as_str()) {
            out.push(Issue::new(
                at.key("id"),
                format!("another job has the id {:?}", job.id),
            ));
        }
    }
}

/// Why `name` cannot name a server: its tools are `mcp__<name>__<tool>`, so the name
/// is held to `[A-Za-z0-9_-]` without `__` or a `_` at either end (no two servers' tool
/// names can then run into each other).
fn bad_server_name(name: &str) -> Option<String> {
    let ok = !name.is_empty()
        && name.len() <= MAX_SERVER_NAME
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !name.contains("__")
        && !name.starts_with('_')
        && !name.ends_with('_');
    (!ok).then(|| {
        format!("a server name must be 1 to {MAX_SERVER_NAME} letters, digits, `-` or `_` (no `__`, no `_` at either end): its tools are named mcp__<name>__<tool>; got {name:?}")
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_errors as errors;

    /// Every bad `mcp` and `cron` key is an error naming its key path. Catches: a server
    /// or job accepted that can never work (both transports, a bad name, a bad schedule).
    #[test]
    fn bad_servers_and_jobs_are_errors_naming_the_key() {
        let errs = errors(serde_json::json!({
            "mcp": {"servers": {
                "a__b": {"command": "x"},
                "both": {"command": "x", "url": "http://h/mcp"},
                "web": {"url": "ftp://h", "env": {"A": "1"}, "headers": {"bad header": "v"}},
                "cmd": {"command": "x", "env": {"1X": "v"}, "timeout": "0s"}
            }},
            "cron": {"maxConcurrent": 0, "jobs": [
                {"id": "ok", "schedule": {"every": "30m"}, "message": "hi"},
                {"id": "ok", "schedule": {"cron": "0 9 * * 1-5", "tz": "Nowhere/Land"}, "message": "hi"},
                {"id": "bad id", "schedule": {"every": "1m"}, "message": "hi"},
                {"id": "x", "schedule": {"every": "1m"}, "message": "hi", "deliver": {"channel": "irc", "chatId": "1"}},
                {"id": "y", "schedule": {"at": "soon"}, "message": " "}
            ]}
        }));
        let paths: Vec<&str> = errs
            .iter()
            .map(|e| e.split(": ").next().unwrap_or(""))
            .collect();
        assert_eq!(
            paths,
            vec![
                "cron.jobs[1].id",
                "cron.jobs[1].schedule",
                "cron.jobs[2].id",
                "cron.jobs[3].deliver",
                "cron.jobs[4].message",
                "cron.maxConcurrent",
                "mcp.servers.a__b",
                "mcp.servers.both",
                "mcp.servers.cmd.env.1X",
                "mcp.servers.cmd.timeout",
                "mcp.servers.web.env",
                "mcp.servers.web.headers[\"bad header\"]",
                "mcp.servers.web.url",
            ],
            "{errs:#?}"
        );
    }

    #[test]
    fn the_readme_examples_are_valid() {
        let errs = errors(serde_json::json!({
            "mcp": {"servers": {
                "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_x"}},
                "docs": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}, "timeout": "30s"}
            }},
            "cron": {"jobs": [
                {"id": "morning", "name": "Morning brief", "schedule": {"cron": "0 9 * * 1-5", "tz": "Europe/Paris"},
                 "message": "Summarize my inbox", "deliver": {"channel": "telegram", "chatId": 123456789}},
                {"id": "once", "schedule": {"at": "2026-12-01T09:00:00Z"}, "message": "Remind me", "session": "main"}
            ]}
        }));
        assert_eq!(errs, Vec::<String>::new());
    }
}
