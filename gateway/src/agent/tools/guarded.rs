//! What the file tools may not touch freely, by resolved path: the gateway's own files
//! (the config file, the database and its journal files, the state dir outside the
//! agent's workspace) are refused to `read`, `write` and `edit` even when a workspace
//! contains them; the workspace's control files (`.switchboard/`, `.claude/agents/`,
//! `.git/config`, `.git/hooks/`), which change what the gateway, the agents or git run,
//! are free to read but a write there is asked about, like a command.

use std::path::{Path, PathBuf};

/// Workspace paths (relative, by component) whose writes are asked about, and why.
const CONTROL: &[(&[&str], &str)] = &[
    (
        &[".switchboard"],
        "the gateway reads this workspace's settings from .switchboard/",
    ),
    (
        &[".claude", "agents"],
        "agent definitions in .claude/agents/ decide what agents run and with which tools",
    ),
    (
        &[".git", "config"],
        "git runs the programs .git/config names (hooks path, pagers, filters)",
    ),
    (&[".git", "hooks"], "git runs the scripts in .git/hooks/"),
];

/// The gateway's own files, as canonical paths.
#[derive(Debug, Clone, Default)]
pub struct Own {
    pub config_file: Option<PathBuf>,
    pub state_dir: Option<PathBuf>,
    /// The SQLite database file (its `-wal`, `-shm` and `-journal` files go with it).
    pub database: Option<PathBuf>,
}

/// How a file tool may use a resolved path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    Free,
    /// A write is asked about first (reads stay free), for this reason.
    AskToWrite(&'static str),
    /// Refused to every file tool, for this reason.
    Refused(String),
}

/// `path` as canonical as it can be: its longest existing part resolved.
pub fn canonical(path: &Path) -> PathBuf {
    if let Ok(c) = path.canonicalize() {
        return c;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => canonical(parent).join(name),
        _ => path.to_path_buf(),
    }
}

impl Own {
    /// The gateway's files under `cfg`, from the config file recorded at start.
    pub fn of(cfg: &crate::config::Config, state_dir: &Path) -> Own {
        let url = cfg.database_url(state_dir);
        let database = url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))
            .map(|p| p.split('?').next().unwrap_or_default())
            .filter(|p| !p.is_empty() && *p != ":memory:")
            .map(|p| canonical(Path::new(p)));
        Own {
            config_file: crate::agent::tools::exec::sandbox::Sandbox::config_file().map(canonical),
            state_dir: Some(canonical(state_dir)),
            database,
        }
    }

    /// How the file tools may use `path` (resolved, as `paths::confine` returns it) of an
    /// agent whose workspace is `workspace` (canonical).
    pub fn access(&self, workspace: &Path, path: &Path) -> Access {
        if self.config_file.as_deref() == Some(path) {
            return Access::Refused("it is the gateway's config file".into());
        }
        if let Some(db) = &self.database {
            let is_db = ["", "-wal", "-shm", "-journal"].iter().any(|suffix| {
                let mut side = db.as_os_str().to_owned();
                side.push(suffix);
                Path::new(&side) == path
            });
            if is_db {
                return Access::Refused("it is the gateway's database".into());
            }
        }
        if let Some(state) = &self.state_dir {
            // A workspace inside the state dir (the default, `<state>/workspace`) is the
            // agent's own; the rest of the state dir is the gateway's.
            let own_workspace =
                workspace.starts_with(state) && workspace != state && path.starts_with(workspace);
            if path.starts_with(state) && !own_workspace {
                return Access::Refused(format!(
                    "it is inside the gateway's state dir ({})",
                    state.display()
                ));
            }
        }
        match path.strip_prefix(workspace) {
            Ok(rel) => control(rel).map_or(Access::Free, Access::AskToWrite),
            Err(_) => Access::Free,
        }
    }
}

/// Why a write to `rel` (relative to the workspace) is asked about, if it is.
fn control(rel: &Path) -> Option<&'static str> {
    let parts: Vec<&std::ffi::OsStr> = rel.iter().collect();
    CONTROL
        .iter()
        .find(|(prefix, _)| {
            parts.len() >= prefix.len() && prefix.iter().zip(&parts).all(|(p, c)| **c == **p)
        })
        .map(|(_, why)| *why)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn own() -> Own {
        Own {
            config_file: Some("/srv/sb/config.json5".into()),
            state_dir: Some("/srv/sb".into()),
            database: Some("/var/db/sb.db".into()),
        }
    }

    fn access(ws: &str, path: &str) -> Access {
        own().access(Path::new(ws), Path::new(path))
    }

    /// Catches: the gateway's config, database or state reachable by the file tools
    /// through a workspace that contains them.
    #[test]
    fn the_gateways_files_are_refused_even_inside_a_workspace() {
        for (ws, path) in [
            ("/srv", "/srv/sb/config.json5"),
            ("/srv", "/srv/sb/data/switchboard.db"),
            ("/srv", "/srv/sb/agents/x.md"),
            ("/srv/sb", "/srv/sb/notes.txt"),
            ("/var", "/var/db/sb.db"),
            ("/var", "/var/db/sb.db-wal"),
            ("/var", "/var/db/sb.db-shm"),
            ("/var", "/var/db/sb.db-journal"),
            ("/srv/sb/workspace", "/srv/sb/workspace-other/f"),
        ] {
            assert!(
                matches!(access(ws, path), Access::Refused(_)),
                "{ws} {path}"
            );
        }
    }

    /// Catches: the default workspace (inside the state dir) made unusable, or control
    /// files written without asking.
    #[test]
    fn the_own_workspace_is_free_and_its_control_files_ask() {
        assert_eq!(
            access("/srv/sb/workspace", "/srv/sb/workspace/a.txt"),
            Access::Free
        );
        assert_eq!(
            access("/srv/sb/workspace", "/srv/sb/workspace/.git/HEAD"),
            Access::Free
        );
        assert_eq!(access("/w", "/w/.gitignore"), Access::Free);
        assert_eq!(access("/w", "/w/.git/configx"), Access::Free);
        assert_eq!(access("/w", "/w/.claude/settings.json"), Access::Free);
        assert_eq!(access("/w", "/var/db/other.db"), Access::Free);
        for path in [
            "/w/.switchboard/x.json",
            "/w/.switchboard",
            "/w/.claude/agents/a.md",
            "/w/.git/config",
            "/w/.git/hooks/pre-commit",
        ] {
            assert!(
                matches!(access("/w", path), Access::AskToWrite(_)),
                "{path}"
            );
        }
    }
}
