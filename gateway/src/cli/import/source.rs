//! Reading an OpenClaw config: JSON5 with `$include` files merged in (relative to the
//! including file, kept inside the config's folder, at most 10 levels, no cycles), and
//! the ledger of what the import did with every key, so that nothing is dropped without
//! a row saying so.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::config;

/// Top-level sections both configs have.
const SHARED_SECTIONS: [&str; 7] = [
    "gateway", "session", "messages", "tools", "channels", "agents", "models",
];

/// Deepest `$include` nesting OpenClaw allows.
const MAX_INCLUDE_DEPTH: usize = 10;

/// Why an OpenClaw config could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {error}", path.display())]
    Syntax {
        path: PathBuf,
        error: config::ConfigError,
    },
    #[error("{}: {message}", path.display())]
    Include { path: PathBuf, message: String },
    #[error("{}: not imported (nothing written):\n  {}", path.display(), reasons.join("\n  "))]
    Refused { path: PathBuf, reasons: Vec<String> },
}

/// A config read whole, and the `$include` files that went into it (by the key path they
/// filled).
pub struct Source {
    pub value: Value,
    pub includes: Vec<(String, PathBuf)>,
}

pub async fn read(path: &Path) -> Result<Source, SourceError> {
    let root = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut includes = Vec::new();
    let mut stack = vec![path.to_path_buf()];
    let value = read_file(path, &root, "", &mut stack, &mut includes).await?;
    Ok(Source { value, includes })
}

async fn parse(path: &Path) -> Result<Value, SourceError> {
    let src = config::load::read_bounded(path)
        .await
        .map_err(|source| SourceError::Read {
            path: path.to_path_buf(),
            source,
        })?;
    config::load::parse_json5(&src, &config::source_map::SourceMap::new(&src)).map_err(|error| {
        SourceError::Syntax {
            path: path.to_path_buf(),
            error,
        }
    })
}

fn read_file<'a>(
    path: &'a Path,
    root: &'a Path,
    at: &'a str,
    stack: &'a mut Vec<PathBuf>,
    includes: &'a mut Vec<(String, PathBuf)>,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Value, SourceError>> + Send + 'a>> {
    Box::pin(async move {
        let mut value = parse(path).await?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        resolve(&mut value, &dir, root, at, stack, includes).await?;
        Ok(value)
    })
}

/// Replaces every `$include` in `value` (found at key path `at`) by what it names.
fn resolve<'a>(
    value: &'a mut Value,
    dir: &'a Path,
    root: &'a Path,
    at: &'a str,
    stack: &'a mut Vec<PathBuf>,
    includes: &'a mut Vec<(String, PathBuf)>,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), SourceError>> + Send + 'a>> {
    Box::pin(async move {
        match value {
            Value::Object(map) => {
                if let Some(spec) = map.remove("$include") {
                    let files: Vec<String> = match &spec {
                        Value::String(s) => vec![s.clone()],
                        Value::Array(items) => items
                            .iter()
                            .filter_map(|i| i.as_str().map(str::to_string))
                            .collect(),
                        _ => Vec::new(),
                    };
                    let mut merged = Value::Object(Map::new());
                    for file in files {
                        let target = include_path(dir, root, &file, stack)?;
                        if stack.len() > MAX_INCLUDE_DEPTH {
                            return Err(SourceError::Include {
                                path: target,
                                message: format!(
                                    "$include nested more than {MAX_INCLUDE_DEPTH} levels"
                                ),
                            });
                        }
                        stack.push(target.clone());
                        let included = read_file(&target, root, at, stack, includes).await?;
                        stack.pop();
                        includes.push((at.to_string(), target));
                        deep_merge(&mut merged, included);
                    }
                    // Sibling keys override what the files say.
                    let siblings = std::mem::take(map);
                    deep_merge(&mut merged, Value::Object(siblings));
                    *value = merged;
                    return Box::pin(resolve(value, dir, root, at, stack, includes)).await;
                }
                for (k, v) in map.iter_mut() {
                    let here = join(at, k);
                    resolve(v, dir, root, &here, stack, includes).await?;
                }
                Ok(())
            }
            Value::Array(items) => {
                for (i, v) in items.iter_mut().enumerate() {
                    let here = format!("{at}[{i}]");
                    resolve(v, dir, root, &here, stack, includes).await?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    })
}

/// The file an `$include` names: relative to the including file, inside the top-level
/// config's folder, not already being read.
fn include_path(
    dir: &Path,
    root: &Path,
    file: &str,
    stack: &[PathBuf],
) -> Result<PathBuf, SourceError> {
    let target = normalize(&dir.join(file));
    if !target.starts_with(normalize(root)) {
        return Err(SourceError::Include {
            path: target,
            message: "an $include must stay inside the config's folder".into(),
        });
    }
    if stack.contains(&target) {
        return Err(SourceError::Include {
            path: target,
            message: "circular $include".into(),
        });
    }
    Ok(target)
}

/// `a/./b/../c` → `a/c`, without touching the filesystem.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Merges `over` into `base`: objects key by key, anything else replaced.
pub fn deep_merge(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(existing) => deep_merge(existing, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (b, o) => *b = o,
    }
}

/// `a.b` from `a` and `b`; keys that are not plain are quoted: `a["x.y"]`.
pub fn join(at: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    match (at.is_empty(), plain) {
        (true, true) => key.to_string(),
        (false, true) => format!("{at}.{key}"),
        (_, false) => format!("{at}[{}]", serde_json::Value::String(key.to_string())),
    }
}

/// What the import did with one OpenClaw key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "result", rename_all = "kebab-case")]
pub enum Outcome {
    /// Carried over as it was, to this Switchboard key.
    Carried { to: String },
    /// Carried over changed: to this key, and how.
    Adapted { to: String, how: String },
    /// Left out, and why.
    NotCarried { why: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    /// The OpenClaw key path.
    pub key: String,
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// The input and the rows written about it so far. A key with a row counts as handled,
/// with everything under it.
pub struct Ledger<'a> {
    pub input: &'a Value,
    pub rows: Vec<Row>,
    /// Settings that cannot be written without letting in more than OpenClaw did: any
    /// of them stops the import.
    pub refusals: Vec<String>,
}

impl<'a> Ledger<'a> {
    pub fn new(input: &'a Value) -> Self {
        Ledger {
            input,
            rows: Vec::new(),
            refusals: Vec::new(),
        }
    }

    pub fn carried(&mut self, key: &str, to: &str) {
        self.push(key, Outcome::Carried { to: to.into() });
    }

    pub fn adapted(&mut self, key: &str, to: &str, how: impl Into<String>) {
        self.push(
            key,
            Outcome::Adapted {
                to: to.into(),
                how: how.into(),
            },
        );
    }

    pub fn dropped(&mut self, key: &str, why: impl Into<String>) {
        self.push(key, Outcome::NotCarried { why: why.into() });
    }

    fn push(&mut self, key: &str, outcome: Outcome) {
        self.rows.push(Row {
            key: key.to_string(),
            outcome,
        });
    }

    fn handled(&self, key: &str) -> bool {
        self.rows.iter().any(|r| {
            r.key == key
                || key
                    .strip_prefix(r.key.as_str())
                    .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
        })
    }

    fn has_handled_below(&self, key: &str) -> bool {
        self.rows.iter().any(|r| {
            r.key
                .strip_prefix(key)
                .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
        })
    }

    /// A row for every key nothing was said about yet: the highest key of each unhandled
    /// subtree, with `why` (from the key path) as the reason.
    pub fn leftovers(&mut self, why: impl Fn(&str) -> String) {
        let mut out = Vec::new();
        self.collect(self.input, "", &mut out);
        for key in out {
            let reason = why(&key);
            self.dropped(&key, reason);
        }
    }

    fn collect(&self, v: &Value, at: &str, out: &mut Vec<String>) {
        if !at.is_empty() && self.handled(at) {
            return;
        }
        match v {
            // Sections Switchboard also has are listed key by key, so the report names
            // `messages.ackReactionScope`, not all of `messages`.
            Value::Object(map)
                if at.is_empty() || SHARED_SECTIONS.contains(&at) || self.has_handled_below(at) =>
            {
                for (k, child) in map {
                    self.collect(child, &join(at, k), out);
                }
            }
            Value::Array(items) if self.has_handled_below(at) => {
                for (i, child) in items.iter().enumerate() {
                    self.collect(child, &format!("{at}[{i}]"), out);
                }
            }
            _ if at.is_empty() => {}
            _ => out.push(at.to_string()),
        }
    }
}
