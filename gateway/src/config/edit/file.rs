//! A whole edit of the config file: read it, plan the edit, check that the result is a
//! valid config (an edit that would break it is refused and the file left as it was), and
//! write it atomically — a temporary file in the same directory, renamed over the old
//! one — keeping its permissions, so a watching daemon never reads half a file and
//! applies the edit as it would a hand edit.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::super::error::ConfigError;
use super::super::load::{is_unset_variable, parse_json5, read_bounded};
use super::super::source_map::SourceMap;
use super::super::{parse_config, plan_reload};
use super::{ops, remove, EditError, KeyPathArg};

/// What to do at a key path.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    Set(Value),
    Unset,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The file was written.
    Written,
    /// The file already said that; nothing was written.
    Unchanged,
    /// `unset` of a key the file does not have; nothing was written.
    NotSet,
}

/// A successful edit, with the problems the file has that the edit did not cause
/// (variables not set in this environment, errors that were already there).
#[derive(Debug, Clone, PartialEq)]
pub struct EditReport {
    pub outcome: Outcome,
    pub warnings: Vec<ConfigError>,
    /// The file that was read (and written): the target of a symlink.
    pub path: PathBuf,
    /// Keys the edit changed that a running daemon only takes up after a restart
    /// (`gateway.*`, `storage.*`).
    pub restart_required: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum FileEditError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} cannot be edited: {error}", path.display())]
    Unparsable { error: ConfigError, path: PathBuf },
    #[error(transparent)]
    Edit(#[from] EditError),
    /// The edit would make the config invalid: these are the problems it would cause,
    /// located in the edited text.
    #[error("the edit would make the config invalid")]
    Invalid(Vec<ConfigError>),
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Applies `change` at `key` to the config file at `path` (created, mode 0600, when it
/// does not exist). `env` resolves `${VAR}` for the validation: a variable this process
/// does not have is a warning (the daemon may have it), every other new problem refuses
/// the edit.
pub async fn edit_file(
    path: &Path,
    key: &KeyPathArg,
    change: &Change,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<EditReport, FileEditError> {
    // Edit the file a symlink points to, not the link (a rename would replace the link).
    let path = match tokio::fs::canonicalize(path).await {
        Ok(real) => real,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => path.to_path_buf(),
        Err(source) => {
            return Err(FileEditError::Read {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    let src = match read_bounded(&path).await {
        Ok(src) => src,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => return Err(FileEditError::Read { path, source }),
    };
    parse_json5(&src, &SourceMap::new(&src)).map_err(|error| FileEditError::Unparsable {
        error,
        path: path.clone(),
    })?;
    let edits = match change {
        Change::Set(value) => ops::plan_set(&src, &key.0, value)?.edits,
        Change::Unset => match remove::plan_unset(&src, &key.0)? {
            Some(edits) => edits,
            None => {
                return Ok(EditReport {
                    outcome: Outcome::NotSet,
                    warnings: Vec::new(),
                    path,
                    restart_required: Vec::new(),
                })
            }
        },
    };
    let new = ops::apply(&src, &edits);
    let before = parse_config(&src, env).err().unwrap_or_default();
    let after = parse_config(&new, env).err().unwrap_or_default();
    // What a running daemon would do with it: variables it may have and this process
    // does not are taken as set (to their own reference) for this comparison.
    let as_set = |name: &str| env(name).or_else(|| Some(format!("${{{name}}}")));
    let restart_required = match (parse_config(&src, &as_set), parse_config(&new, &as_set)) {
        (Ok(old), Ok(new)) => plan_reload(&old, &new).restart_required,
        _ => Vec::new(),
    };
    let (caused, warnings): (Vec<ConfigError>, Vec<ConfigError>) =
        after.into_iter().partition(|e| {
            !is_unset_variable(e)
                && !before
                    .iter()
                    .any(|b| b.path == e.path && b.message == e.message)
        });
    if !caused.is_empty() {
        return Err(FileEditError::Invalid(caused));
    }
    if new == src {
        return Ok(EditReport {
            outcome: Outcome::Unchanged,
            warnings,
            path,
            restart_required,
        });
    }
    write_atomic(&path, new.as_bytes())
        .await
        .map_err(|source| FileEditError::Write {
            path: path.clone(),
            source,
        })?;
    Ok(EditReport {
        outcome: Outcome::Written,
        warnings,
        path,
        restart_required,
    })
}

/// Mode of a config file this creates: it may hold tokens.
const NEW_FILE_MODE: u32 = 0o600;

/// Replaces `path` with `contents` atomically: a temporary file in the same directory
/// (same permissions and, where allowed, owner as the file it replaces; 0600 for a new
/// file), flushed to disk, then renamed over `path`.
pub async fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let path = path.to_path_buf();
    let contents = contents.to_vec();
    tokio::task::spawn_blocking(move || write_atomic_blocking(&path, &contents))
        .await
        .map_err(std::io::Error::other)?
}

fn write_atomic_blocking(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    #[cfg(unix)]
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};

    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "config".into());
    let tmp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    let existing = std::fs::metadata(path).ok();
    let result = (|| {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        options.mode(NEW_FILE_MODE);
        let mut file = options.open(&tmp)?;
        #[cfg(unix)]
        if let Some(meta) = &existing {
            file.set_permissions(std::fs::Permissions::from_mode(meta.mode() & 0o7777))?;
            // Keep the owner when running as someone else (root editing a service's
            // file); not allowed otherwise, and then the file is ours anyway.
            let _ = std::os::unix::fs::fchown(&file, Some(meta.uid()), Some(meta.gid()));
        }
        file.write_all(contents)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, path)?;
        // Make the rename itself durable (best effort: not every filesystem allows it).
        if let Ok(d) = std::fs::File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
