//! An agent's workspace must not contain the gateway's state dir or its config file: the
//! agent's commands and file tools work throughout the workspace, and from there they
//! could read the database or rewrite the policy that binds them.

use std::path::{Path, PathBuf};

use super::super::error::{Issue, KeyPath};
use super::super::{Config, Paths};

/// Checks every configured workspace against the state dir and the config file of
/// `paths`.
pub(crate) fn workspaces(config: &Config, paths: &Paths, out: &mut Vec<Issue>) {
    let state = resolved(&paths.state_dir);
    let config_file = resolved(&paths.config);
    let mut check = |at: KeyPath, ws: &Path| {
        let w = resolved(ws);
        let holds = if state.starts_with(&w) {
            Some(format!(
                "the gateway's state dir ({})",
                paths.state_dir.display()
            ))
        } else if config_file.starts_with(&w) {
            Some(format!(
                "the gateway's config file ({})",
                paths.config.display()
            ))
        } else {
            None
        };
        if let Some(what) = holds {
            out.push(Issue::new(
                at,
                format!(
                    "the workspace {} contains {what}: agents could read or change it; use a folder of its own (the default is the state dir's workspace/)",
                    ws.display()
                ),
            ));
        }
    };
    if let Some(ws) = &config.agents.defaults.workspace {
        check(KeyPath::dotted("agents.defaults.workspace"), ws);
    }
    for (i, agent) in config.agents.list.iter().enumerate() {
        if let Some(ws) = &agent.workspace {
            check(KeyPath::dotted("agents.list").index(i).key("workspace"), ws);
        }
    }
}

/// `p` absolute, `.` and `..` applied, and the longest part that exists resolved through
/// its symlinks.
fn resolved(p: &Path) -> PathBuf {
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let lexical = crate::config::lexical(&abs);
    let mut existing = lexical.as_path();
    loop {
        if let Ok(canon) = existing.canonicalize() {
            return match lexical.strip_prefix(existing) {
                Ok(rest) if !rest.as_os_str().is_empty() => canon.join(rest),
                _ => canon,
            };
        }
        match existing.parent() {
            Some(parent) => existing = parent,
            None => return lexical,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn issues(defaults: Option<&str>, listed: Option<&str>) -> Vec<(String, String)> {
        let mut c = Config::default();
        c.agents.defaults.workspace = defaults.map(PathBuf::from);
        if let Some(ws) = listed {
            c.agents.list.push(crate::config::AgentEntry {
                id: "a".into(),
                workspace: Some(ws.into()),
                ..Default::default()
            });
        }
        let paths = Paths {
            config: "/etc/sb/config.json5".into(),
            state_dir: "/var/lib/sb".into(),
        };
        let mut out = Vec::new();
        workspaces(&c, &paths, &mut out);
        out.into_iter()
            .map(|i| (i.path.to_string(), i.message))
            .collect()
    }

    /// Catches: a workspace that holds the state dir or the config, from which
    /// `edit config.json5` rewrote the policy live.
    #[test]
    fn a_workspace_holding_the_state_dir_or_the_config_is_refused() {
        for ws in ["/", "/var", "/var/lib/sb", "/var/lib/../lib/sb", "/etc/sb"] {
            let found = issues(Some(ws), None);
            assert_eq!(found.len(), 1, "{ws}: {found:?}");
            assert_eq!(found[0].0, "agents.defaults.workspace");
        }
        let found = issues(None, Some("/etc"));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, "agents.list[0].workspace");
        assert!(
            found[0]
                .1
                .contains("contains the gateway's config file (/etc/sb/config.json5)"),
            "{}",
            found[0].1
        );
        assert!(issues(Some("/var/lib/sb/workspace"), Some("/srv/agent")).is_empty());
        assert!(issues(Some("/var/lib/sbx"), None).is_empty());
    }
}
