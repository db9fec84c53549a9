//! `exec` under bubblewrap (docs/tools.md, Sandbox). A sandboxed command sees:
//! the system directories read-only (`/usr`, `/bin`, `/sbin`, `/lib*`, `/etc`), a private
//! `/tmp` (an empty tmpfs), a fresh `/proc` and a minimal `/dev`, its workspace read-write,
//! and nothing else of the host: not the gateway's state dir (so not its database), not
//! `$HOME`. Wherever they would otherwise show — inside the workspace, or under a system
//! directory — the gateway's state dir is hidden (an empty tmpfs), its config file reads as
//! empty, and so do the home folder's credential files (`.ssh`, `.aws`, …, when the home
//! folder lies in the workspace); `.git/hooks` stays read-only. Every namespace is
//! unshared (user, pid — the gateway's processes are invisible —, ipc, uts, cgroup, and
//! the network unless `sandbox.network`: then the host's network is shared).
//! `--die-with-parent` ties it to the gateway. No `--new-session`: the command stays in
//! the process group the job kills as a whole.
//!
//! Whether bubblewrap works on this host (it is installed, and may create namespaces) is
//! checked once per `bwrap` path by running `bwrap --unshare-all --ro-bind / / true`, and
//! the answer cached; a sandboxed command on a host where it does not is refused, never
//! run unsandboxed.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use crate::config::EffectiveSandbox;

/// How long the probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);
/// System directories bound read-only (when they exist).
const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc",
];

/// Credential files and folders of a home folder, hidden when the home folder lies inside
/// the workspace.
const HOME_SECRETS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".config/gh",
    ".config/gcloud",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".switchboard",
];

/// The gateway's config file, hidden from sandboxed commands (set once at start).
static CONFIG_FILE: OnceLock<PathBuf> = OnceLock::new();

/// Record the config file's path (called once by the app at start).
pub fn set_config_file(path: &Path) {
    let _ = CONFIG_FILE.set(path.to_path_buf());
}

/// Whether each `bwrap` program tried works here (`Err`: why not), probed once.
#[derive(Default)]
pub struct Probes {
    known: tokio::sync::Mutex<HashMap<PathBuf, Result<(), String>>>,
}

impl Probes {
    /// Whether `bwrap` can run a sandbox on this host (cached after the first call).
    pub async fn check(&self, bwrap: &Path) -> Result<(), String> {
        let mut known = self.known.lock().await;
        if let Some(answer) = known.get(bwrap) {
            return answer.clone();
        }
        let answer = probe(bwrap).await;
        // Said once at start (`announce`); here only for the record.
        tracing::debug!(bwrap = %bwrap.display(), works = answer.is_ok(), "sandbox probed");
        known.insert(bwrap.to_path_buf(), answer.clone());
        answer
    }
}

/// What the sandbox settings mean on this host, for the start-up log and `doctor`:
/// `Ok` when every agent's commands run as configured, `Err` when bubblewrap does not
/// work and that changes what happens (the text says what). `None`: the sandbox is off
/// for every agent.
pub async fn state(cfg: &crate::config::Config) -> Option<Result<String, String>> {
    let defaults = &cfg.agents.defaults.sandbox;
    let all: Vec<EffectiveSandbox> = std::iter::once(defaults.for_agent(None))
        .chain(
            cfg.agents
                .list
                .iter()
                .map(|a| defaults.for_agent(a.sandbox.as_ref())),
        )
        .filter(|s| s.mode != crate::config::SandboxMode::Off)
        .collect();
    let first = all.first()?;
    let unset = !first.explicit;
    let default_note = if unset {
        " (agents.defaults.sandbox.mode is not set: the default is \"auto\", which runs every command in bubblewrap; set \"off\" for commands on the host as before)"
    } else {
        ""
    };
    Some(match probe(&first.bwrap).await {
        Ok(()) => Ok(format!(
            "bubblewrap ({}) works: commands run sandboxed{default_note}",
            first.bwrap.display()
        )),
        Err(why) => {
            let auto = all
                .iter()
                .any(|s| s.mode == crate::config::SandboxMode::Auto);
            Err(format!(
                "bubblewrap does not work here: {why}. {}{default_note}",
                if auto {
                    "Under sandbox.mode \"auto\" commands run unsandboxed and every one is asked about (nothing runs from the allowlist unasked); sandbox.mode \"off\" runs them on the host without asking more"
                } else {
                    "Commands of the sandboxed sessions are refused"
                }
            ))
        }
    })
}

/// Say once at start what the sandbox settings do on this host.
pub async fn announce(cfg: &crate::config::Config) {
    match state(cfg).await {
        None => {}
        Some(Ok(text)) => tracing::info!("sandbox: {text}"),
        Some(Err(text)) => tracing::warn!("sandbox: {text}"),
    }
}

async fn probe(bwrap: &Path) -> Result<(), String> {
    let run = tokio::process::Command::new(bwrap)
        .args(["--unshare-all", "--ro-bind", "/", "/", "true"])
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    match tokio::time::timeout(PROBE_TIMEOUT, run).await {
        Err(_) => Err(format!(
            "`{}` did not finish within {PROBE_TIMEOUT:?}",
            bwrap.display()
        )),
        Ok(Err(e)) => Err(format!(
            "`{}` cannot be started ({e}); install bubblewrap (Debian: apt-get install bubblewrap)",
            bwrap.display()
        )),
        Ok(Ok(out)) if out.status.success() => Ok(()),
        Ok(Ok(out)) => Err(format!(
            "`{}` cannot create a sandbox on this host ({}): {}",
            bwrap.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}

/// A sandbox for one command: the program and the arguments that come before `sh -c`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    pub program: PathBuf,
    pub args: Vec<OsString>,
}

/// What the sandbox is built around.
pub struct Layout<'a> {
    pub workspace: &'a Path,
    pub workdir: &'a Path,
    pub state_dir: &'a Path,
    /// The database's directory (hidden when inside the workspace).
    pub database_dir: Option<&'a Path>,
    pub config_file: Option<&'a Path>,
    /// The gateway's home folder.
    pub home: Option<&'a Path>,
    pub network: bool,
}

impl Sandbox {
    /// The sandbox for `settings` around `layout` (paths are taken as given: callers pass
    /// canonical ones).
    pub fn new(settings: &EffectiveSandbox, layout: &Layout<'_>) -> Sandbox {
        Sandbox {
            program: settings.bwrap.clone(),
            args: args(layout, &|p| p.metadata().ok().map(|m| m.is_dir())),
        }
    }

    /// The config file recorded at start, if any.
    pub fn config_file() -> Option<&'static Path> {
        CONFIG_FILE.get().map(PathBuf::as_path)
    }
}

/// bubblewrap's arguments (later mounts cover earlier ones). `exists` says which host
/// paths exist and whether they are folders (a parameter, for tests).
fn args(l: &Layout<'_>, exists: &dyn Fn(&Path) -> Option<bool>) -> Vec<OsString> {
    let mut a: Vec<OsString> = vec!["--unshare-all".into()];
    if l.network {
        a.push("--share-net".into());
    }
    a.push("--die-with-parent".into());
    for dir in SYSTEM_DIRS {
        push(&mut a, &["--ro-bind-try", dir, dir]);
    }
    push(
        &mut a,
        &["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"],
    );
    bind(&mut a, "--bind", l.workspace);
    // Read-only islands inside the writable workspace.
    let mut hooks: Vec<PathBuf> = l
        .workdir
        .ancestors()
        .filter(|d| d.starts_with(l.workspace))
        .map(|d| d.join(".git").join("hooks"))
        .collect();
    hooks.reverse();
    for h in hooks.iter().filter(|h| exists(h).is_some()) {
        bind(&mut a, "--ro-bind", h);
    }
    let shown =
        |p: &Path| p.starts_with(l.workspace) || SYSTEM_DIRS.iter().any(|d| p.starts_with(d));
    let mut hidden: Vec<PathBuf> = vec![l.state_dir.to_path_buf()];
    hidden.extend(l.database_dir.map(Path::to_path_buf));
    hidden.extend(l.config_file.map(Path::to_path_buf));
    if let Some(home) = l.home.filter(|h| h.starts_with(l.workspace)) {
        hidden.extend(HOME_SECRETS.iter().map(|s| home.join(s)));
    }
    for p in hidden.iter().filter(|p| shown(p)) {
        // The workspace itself stays: hiding it would hide the command's files.
        if p == l.workspace || l.workspace.starts_with(p) {
            continue;
        }
        let Some(dir) = exists(p) else { continue };
        if dir {
            a.push("--tmpfs".into());
            a.push(p.as_os_str().to_owned());
        } else {
            a.push("--ro-bind".into());
            a.push("/dev/null".into());
            a.push(p.as_os_str().to_owned());
        }
    }
    a.push("--chdir".into());
    a.push(l.workdir.as_os_str().to_owned());
    a.push("--".into());
    a
}

/// The directory of the gateway's SQLite database (`storage.url`, else the state dir's).
pub fn database_dir(cfg: &crate::config::Config, state_dir: &Path) -> Option<PathBuf> {
    let url = cfg.database_url(state_dir);
    let path = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    let path = path.split('?').next().unwrap_or_default();
    Path::new(path).parent().map(Path::to_path_buf)
}

fn push(a: &mut Vec<OsString>, items: &[&str]) {
    a.extend(items.iter().map(OsString::from));
}

fn bind(a: &mut Vec<OsString>, how: &str, p: &Path) {
    a.push(how.into());
    a.push(p.as_os_str().to_owned());
    a.push(p.as_os_str().to_owned());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(a: &[OsString]) -> String {
        a.iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn the_workspace_is_writable_and_the_rest_read_only_without_network() {
        let ws = Path::new("/srv/ws");
        let l = Layout {
            workspace: ws,
            workdir: &ws.join("repo/src"),
            state_dir: Path::new("/var/lib/sb"),
            database_dir: Some(Path::new("/var/lib/sb/data")),
            config_file: Some(Path::new("/etc/sb.json5")),
            home: Some(Path::new("/home/u")),
            network: false,
        };
        let exists = |p: &Path| {
            (p == Path::new("/srv/ws/repo/.git/hooks"))
                .then_some(true)
                .or((p == Path::new("/etc/sb.json5")).then_some(false))
        };
        let a = shown(&args(&l, &exists));
        assert!(a.starts_with("--unshare-all --die-with-parent "), "{a}");
        assert!(!a.contains("--share-net"), "{a}");
        assert!(a.contains("--ro-bind-try /usr /usr"), "{a}");
        assert!(a.contains("--ro-bind-try /etc /etc"), "{a}");
        assert!(a.contains("--tmpfs /tmp --bind /srv/ws /srv/ws"), "{a}");
        assert!(
            a.contains("--ro-bind /srv/ws/repo/.git/hooks /srv/ws/repo/.git/hooks"),
            "{a}"
        );
        assert!(
            !a.contains("/var/lib/sb"),
            "the state dir is not mounted: {a}"
        );
        assert!(
            a.contains("--ro-bind /dev/null /etc/sb.json5"),
            "a config file under /etc reads as empty: {a}"
        );
        assert!(
            !a.contains("/home/u"),
            "the home folder is not mounted: {a}"
        );
        assert!(a.ends_with("--chdir /srv/ws/repo/src --"), "{a}");
    }

    #[test]
    fn state_config_and_home_secrets_inside_the_workspace_are_hidden() {
        let ws = Path::new("/home/u");
        let l = Layout {
            workspace: ws,
            workdir: ws,
            state_dir: Path::new("/home/u/.switchboard"),
            database_dir: Some(Path::new("/home/u/.switchboard/data")),
            config_file: Some(Path::new("/home/u/.switchboard/config.json5")),
            home: Some(Path::new("/home/u")),
            network: true,
        };
        let a = shown(&args(&l, &|p: &Path| {
            Some(p.extension().is_none() && !p.ends_with(".netrc"))
        }));
        assert!(a.starts_with("--unshare-all --share-net "), "{a}");
        assert!(
            a.contains("--ro-bind /home/u/.git/hooks /home/u/.git/hooks"),
            "{a}"
        );
        assert!(a.contains("--tmpfs /home/u/.switchboard "), "{a}");
        assert!(
            a.contains("--ro-bind /dev/null /home/u/.switchboard/config.json5"),
            "{a}"
        );
        assert!(a.contains("--tmpfs /home/u/.switchboard/data"), "{a}");
        assert!(a.contains("--tmpfs /home/u/.ssh "), "{a}");
        assert!(a.contains("--ro-bind /dev/null /home/u/.netrc "), "{a}");
    }
}
