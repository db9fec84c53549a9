//! Where agent files are read from, and the registry kept fresh: `<stateDir>/agents/`,
//! `<workspace>/.claude/agents/`, `<workspace>/.switchboard/agents/` (in that order, later
//! winning). The folders are listed again at most once a second when the registry is asked
//! for; the files are read again only when a file's name, size or modification time changed
//! or the config did, and only then are bad files logged.
//!
//! The workspace folders are the agent's to write (its file tools work there), so their
//! files may add agents but never redefine one the operator defined: a built-in, an
//! `agents.list` entry, the default agent, or a file of `<stateDir>/agents/`. Such a file
//! is skipped as a bad file, with its path.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use parking_lot::Mutex;

use super::definition::{from_file, AgentDef, FileError, Source};
use super::registry::Registry;
use crate::config::{self, Config};

/// Largest agent file read, in bytes.
pub const MAX_FILE_BYTES: u64 = 256 * 1024;
/// Most `.md` files read from one folder (sorted by name).
pub const MAX_FILES_PER_DIR: usize = 500;
/// How long a listing of the folders serves before they are listed again.
pub const FRESH_FOR: Duration = Duration::from_secs(1);

/// The agent folders for `cfg`, in the order they are read.
pub fn dirs(cfg: &Config, state_dir: &Path) -> Vec<PathBuf> {
    let default = config::default_agent_id(cfg);
    let entry = config::agent_entry(cfg, &default);
    let workspace = config::workspace_for(cfg, entry.as_ref(), state_dir);
    vec![
        state_dir.join("agents"),
        workspace.join(".claude").join("agents"),
        workspace.join(".switchboard").join("agents"),
    ]
}

/// One file as listed: path, size, modification time.
type Stamp = (PathBuf, u64, Option<SystemTime>);

/// The `.md` files of the folders, in reading order. A missing folder has none.
fn list(dirs: &[PathBuf]) -> Vec<Stamp> {
    let mut out = Vec::new();
    for dir in dirs {
        let Ok(read) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut files: Vec<Stamp> = read
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
            .filter_map(|e| {
                let meta = std::fs::metadata(e.path()).ok()?;
                meta.is_file()
                    .then(|| (e.path(), meta.len(), meta.modified().ok()))
            })
            .collect();
        files.sort();
        files.truncate(MAX_FILES_PER_DIR);
        out.extend(files);
    }
    out
}

/// Reads every agent file of `dirs`: the good definitions in order, and the bad files.
pub fn load(dirs: &[PathBuf]) -> (Vec<AgentDef>, Vec<FileError>) {
    read_listed(&list(dirs))
}

fn read_listed(files: &[Stamp]) -> (Vec<AgentDef>, Vec<FileError>) {
    let mut defs = Vec::new();
    let mut errors = Vec::new();
    for (path, len, _) in files {
        let whole = |message: String| FileError {
            path: path.clone(),
            line: 1,
            field: None,
            message,
        };
        if *len > MAX_FILE_BYTES {
            errors.push(whole(format!(
                "the file is larger than {} KiB",
                MAX_FILE_BYTES / 1024
            )));
            continue;
        }
        let text = match std::fs::read(path) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(t) => t,
                Err(_) => {
                    errors.push(whole("the file is not UTF-8 text".into()));
                    continue;
                }
            },
            // Removed between the listing and the read: it is simply gone.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                errors.push(whole(format!("cannot read: {e}")));
                continue;
            }
        };
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        match from_file(path.clone(), &stem, &text) {
            Ok(def) => defs.push(def),
            Err(e) => errors.push(e),
        }
    }
    (defs, errors)
}

/// `defs` without the workspace files that redefine an operator's agent (see the module
/// doc); those become errors beside `errors`.
pub fn guard(
    cfg: &Config,
    state_dir: &Path,
    defs: Vec<AgentDef>,
    mut errors: Vec<FileError>,
) -> (Vec<AgentDef>, Vec<FileError>) {
    let operator_dir = state_dir.join("agents");
    let by_operator = |d: &AgentDef| match &d.source {
        Source::File(p) => p.parent() == Some(operator_dir.as_path()),
        Source::Builtin | Source::Config => true,
    };
    let mut reserved: Vec<String> = super::registry::builtins()
        .iter()
        .map(|d| d.id.clone())
        .chain(cfg.agents.list.iter().map(|a| a.id.clone()))
        .chain(std::iter::once(config::default_agent_id(cfg)))
        .chain(defs.iter().filter(|d| by_operator(d)).map(|d| d.id.clone()))
        .collect();
    reserved.iter_mut().for_each(|id| id.make_ascii_lowercase());
    let mut kept = Vec::with_capacity(defs.len());
    for def in defs {
        if !by_operator(&def) && reserved.contains(&def.id.to_ascii_lowercase()) {
            if let Source::File(path) = &def.source {
                errors.push(FileError {
                    path: path.clone(),
                    line: 1,
                    field: None,
                    message: format!(
                        "an agent file in the workspace may add agents, not redefine `{}` (defined by the operator: a built-in, agents.list, the default agent or <stateDir>/agents/)",
                        def.id
                    ),
                });
            }
            continue;
        }
        kept.push(def);
    }
    (kept, errors)
}

/// `switchboard config validate`: checks the agent files `cfg` makes the daemon read,
/// prints each folder's count and every bad file (path, line, field); exit 64 when one is
/// bad.
pub fn report(cfg: &Config, state_dir: &Path) -> std::process::ExitCode {
    let dirs = dirs(cfg, state_dir);
    let (defs, errors) = load(&dirs);
    let (defs, errors) = guard(cfg, state_dir, defs, errors);
    for dir in dirs.iter().filter(|d| d.is_dir()) {
        let n = defs
            .iter()
            .filter(|d| matches!(&d.source, super::Source::File(p) if p.parent() == Some(dir.as_path())))
            .count();
        println!(
            "{}: {n} agent file{} ok",
            dir.display(),
            if n == 1 { "" } else { "s" }
        );
    }
    for e in &errors {
        eprintln!("{e}");
    }
    if errors.is_empty() {
        std::process::ExitCode::SUCCESS
    } else {
        eprintln!(
            "{} agent file{} would be skipped",
            errors.len(),
            if errors.len() == 1 { "" } else { "s" }
        );
        std::process::ExitCode::from(64)
    }
}

/// The registry as last built, and what it was built from.
struct Built {
    checked: Instant,
    cfg: Arc<Config>,
    files: Vec<Stamp>,
    registry: Arc<Registry>,
}

/// The registry in force, rebuilt when the config or an agent file changes.
pub struct Catalog {
    state_dir: PathBuf,
    fresh_for: Duration,
    built: Mutex<Option<Built>>,
}

impl Catalog {
    pub fn new(state_dir: PathBuf, fresh_for: Duration) -> Catalog {
        Catalog {
            state_dir,
            fresh_for,
            built: Mutex::new(None),
        }
    }

    /// The registry for the config in force, `cfg`.
    pub fn registry(&self, cfg: &Arc<Config>) -> Arc<Registry> {
        if let Some(b) = &*self.built.lock() {
            if Arc::ptr_eq(&b.cfg, cfg) && b.checked.elapsed() < self.fresh_for {
                return b.registry.clone();
            }
        }
        // List (and maybe read) outside the lock: a few small local files.
        let files = list(&dirs(cfg, &self.state_dir));
        let mut built = self.built.lock();
        if let Some(b) = built.as_mut() {
            if b.files == files && (Arc::ptr_eq(&b.cfg, cfg) || *b.cfg == **cfg) {
                b.checked = Instant::now();
                b.cfg = cfg.clone();
                return b.registry.clone();
            }
        }
        let (defs, errors) = read_listed(&files);
        let (defs, errors) = guard(cfg, &self.state_dir, defs, errors);
        for e in &errors {
            tracing::error!(path = %e.path.display(), line = e.line, field = e.field.as_deref().unwrap_or(""), "agent file skipped: {e}");
        }
        let registry = Arc::new(Registry::build(cfg, defs, errors));
        tracing::info!(
            agents = registry.all().len(),
            skipped = registry.errors.len(),
            "agents loaded"
        );
        *built = Some(Built {
            checked: Instant::now(),
            cfg: cfg.clone(),
            files,
            registry: registry.clone(),
        });
        registry
    }
}

#[cfg(test)]
#[path = "sources_tests.rs"]
mod tests;
