//! Where the config file and the state directory are (README, Configuration: Paths), and the
//! database URL derived from them.

use std::path::{Component, Path, PathBuf};

use super::Config;

/// `p` with `.` and `..` applied lexically, without touching the file system (links are
/// not resolved; `..` at the root stays at the root). The one rule behind every path the
/// gateway compares before or beside resolving it: the file tools' workspace check, the
/// exec gate's folders and programs, the workspace check of `config validate`.
pub fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The config file and state directory the daemon uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// `--config`, else `$SWITCHBOARD_CONFIG`, else `~/.switchboard/config.json5`.
    pub config: PathBuf,
    /// `$SWITCHBOARD_STATE_DIR`, else `~/.switchboard/`.
    pub state_dir: PathBuf,
}

impl Paths {
    /// Resolves both paths. Empty environment variables count as unset. Without `HOME`,
    /// `~/.switchboard` falls back to `.switchboard` in the working directory.
    pub fn resolve(cli_config: Option<PathBuf>, env: &dyn Fn(&str) -> Option<String>) -> Paths {
        let var = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let home_dir = var("HOME")
            .map(|home| home.join(".switchboard"))
            .unwrap_or_else(|| PathBuf::from(".switchboard"));
        Paths {
            config: cli_config
                .or_else(|| var("SWITCHBOARD_CONFIG"))
                .unwrap_or_else(|| home_dir.join("config.json5")),
            state_dir: var("SWITCHBOARD_STATE_DIR").unwrap_or(home_dir),
        }
    }
}

/// Where the database lives inside the state dir: a folder of its own, so the watcher of
/// a config file kept in the state dir is not woken by every database write.
pub const DATABASE_DIR: &str = "data";
pub const DATABASE_FILE: &str = "switchboard.db";

impl Config {
    /// `storage.url`, or `sqlite://<state_dir>/data/switchboard.db` when it is unset (or
    /// `<state_dir>/switchboard.db` where an earlier version left its database).
    pub fn database_url(&self, state_dir: &Path) -> String {
        match &self.storage.url {
            Some(url) => url.clone(),
            None => {
                let earlier = state_dir.join(DATABASE_FILE);
                let path = if earlier.exists() {
                    earlier
                } else {
                    state_dir.join(DATABASE_DIR).join(DATABASE_FILE)
                };
                format!("sqlite://{}", path.display())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_string())
        }
    }

    #[test]
    fn defaults_under_home() {
        let p = Paths::resolve(None, &env_of(&[("HOME", "/home/me")]));
        assert_eq!(
            p,
            Paths {
                config: "/home/me/.switchboard/config.json5".into(),
                state_dir: "/home/me/.switchboard".into(),
            }
        );
    }

    #[test]
    fn env_and_flag_take_precedence() {
        let env = env_of(&[
            ("HOME", "/home/me"),
            ("SWITCHBOARD_CONFIG", "/etc/sb.json5"),
            ("SWITCHBOARD_STATE_DIR", "/var/lib/sb"),
        ]);
        assert_eq!(
            Paths::resolve(None, &env),
            Paths {
                config: "/etc/sb.json5".into(),
                state_dir: "/var/lib/sb".into(),
            }
        );
        assert_eq!(
            Paths::resolve(Some("./my.json5".into()), &env).config,
            PathBuf::from("./my.json5")
        );
        let empty = env_of(&[("HOME", "/h"), ("SWITCHBOARD_CONFIG", "")]);
        assert_eq!(
            Paths::resolve(None, &empty).config,
            PathBuf::from("/h/.switchboard/config.json5")
        );
        assert_eq!(
            Paths::resolve(None, &env_of(&[])).state_dir,
            PathBuf::from(".switchboard")
        );
    }

    #[test]
    fn database_url() {
        let mut c = Config::default();
        assert_eq!(
            c.database_url(Path::new("/var/lib/sb")),
            "sqlite:///var/lib/sb/data/switchboard.db"
        );
        let earlier = tempfile::tempdir().expect("tempdir");
        std::fs::write(earlier.path().join("switchboard.db"), "").expect("write");
        assert_eq!(
            c.database_url(earlier.path()),
            format!("sqlite://{}/switchboard.db", earlier.path().display())
        );
        c.storage.url = Some("sqlite://:memory:".into());
        assert_eq!(c.database_url(Path::new("/x")), "sqlite://:memory:");
    }
}
