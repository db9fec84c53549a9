//! The names MCP tools get: `mcp__<server>__<tool>`, characters outside `[A-Za-z0-9_-]`
//! replaced by `_`, at most 64 characters (what model APIs accept), and made unique within
//! a server when two tool names become the same after that (`_2`, `_3`, …). Server names
//! are held by the config to `[A-Za-z0-9_-]`, without `__` and without a `_` at either end,
//! so two servers' prefixes never run into each other (see `validate/mcp_cron.rs`).

use std::collections::BTreeSet;

use crate::config::MCP_PREFIX;

/// Longest tool name model APIs take.
pub const MAX_NAME: usize = 64;

/// `mcp__<server>__`.
pub fn prefix(server: &str) -> String {
    format!("{MCP_PREFIX}{}__", sanitize(server))
}

/// `s` with every character outside `[A-Za-z0-9_-]` replaced by `_` (`_` for an empty `s`).
pub fn sanitize(s: &str) -> String {
    let out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() {
        "_".into()
    } else {
        out
    }
}

/// The names offered for a server's tools, in the order given: each starts with
/// [`prefix`], is at most [`MAX_NAME`] characters of `[A-Za-z0-9_-]`, and no two are equal.
pub fn offered(server: &str, tools: &[&str]) -> Vec<String> {
    let prefix = prefix(server);
    let room = MAX_NAME.saturating_sub(prefix.len()).max(1);
    let mut taken = BTreeSet::new();
    let mut out = Vec::with_capacity(tools.len());
    for tool in tools {
        let base: String = sanitize(tool).chars().take(room).collect();
        let mut name = format!("{prefix}{base}");
        let mut n = 2u32;
        while taken.contains(&name) {
            let suffix = format!("_{n}");
            let keep = room.saturating_sub(suffix.len());
            let cut: String = base.chars().take(keep).collect();
            name = format!("{prefix}{cut}{suffix}");
            n += 1;
        }
        taken.insert(name.clone());
        out.push(name);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn names_are_prefixed_sanitized_cut_and_unique() {
        assert_eq!(
            offered("github", &["create_issue", "list.repos", "a b", "a_b", ""]),
            vec![
                "mcp__github__create_issue",
                "mcp__github__list_repos",
                "mcp__github__a_b",
                "mcp__github__a_b_2",
                "mcp__github___",
            ]
        );
        let long = "x".repeat(100);
        let got = offered("fs", &[&long, &long]);
        assert_eq!(got[0].len(), 64);
        assert_eq!(got[1], format!("mcp__fs__{}_2", "x".repeat(64 - 9 - 2)));
        assert_eq!(offered("s", &["é"]), vec!["mcp__s___"]);
    }

    proptest! {
        #![proptest_config(crate::proptest_cases::config())]

        /// Any tool names (arbitrary Unicode, dots, spaces, long ones, repeats) give valid,
        /// distinct, prefixed names. Catches: a name over 64 characters, a character a
        /// model API refuses, or two tools offered under one name.
        #[test]
        fn offered_names_are_valid_and_distinct(
            server in "[A-Za-z0-9-]{1,32}",
            tools in proptest::collection::vec("(.*|[a-z._ ]{0,80})", 0..12),
        ) {
            let refs: Vec<&str> = tools.iter().map(String::as_str).collect();
            let names = offered(&server, &refs);
            prop_assert_eq!(names.len(), tools.len());
            let set: BTreeSet<&String> = names.iter().collect();
            prop_assert_eq!(set.len(), names.len());
            for n in &names {
                prop_assert!(n.len() <= MAX_NAME, "{}", n);
                prop_assert!(n.starts_with(&prefix(&server)));
                prop_assert!(n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'));
            }
        }
    }
}
