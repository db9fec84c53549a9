//! `ls`, `glob` and `grep` (`group:fs`): looking around the agent's workspace without
//! running commands, so without approvals. The starting path is confined like `read`'s
//! (`fs::check`: resolved, inside the workspace, the gateway's own files refused); the
//! walk (`walk`, on ripgrep's `ignore` crate) honours `.gitignore`, skips hidden files
//! unless asked, never follows a symlink and lists one only when it stays inside the
//! workspace, and leaves out the gateway's files. Results, output bytes and time are
//! bounded, and a search stops when the run is cancelled. `grep` (`grep`) searches with
//! ripgrep's searcher and regex engine.

mod grep;
mod walk;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::fs::guarded::{self, Own};
use super::{opt_arg, str_arg, Tool, ToolContext, ToolError};
use crate::agent::provider::ToolSpec;

/// Most entries `ls` and `glob` list; the rest are counted ("… N more").
pub(super) const MAX_ENTRIES: usize = 500;
/// Most matching lines `grep` shows; the rest are counted.
pub(super) const MAX_MATCHES: usize = 200;
/// Most bytes of one answer (the run keeps 64 KB of a tool result).
pub(super) const MAX_OUTPUT: usize = 32 * 1024;
/// Longest line `grep` shows, in characters (the rest is cut with "…").
pub(super) const MAX_LINE_CHARS: usize = 300;
/// Longest pattern (glob or regex) accepted, in bytes.
const MAX_PATTERN: usize = 1000;
/// How long one call may walk and search before it answers with what it has.
const SEARCH_TIME: Duration = Duration::from_secs(10);
/// Deepest `ls` goes (`depth`, default 1: the folder's own entries).
const MAX_LS_DEPTH: u64 = 5;

pub struct Ls;
pub struct Glob;
pub struct Grep;

/// Where and how one call looks: the confined starting folder and the bounds.
pub(super) struct Scope {
    /// The workspace, canonical.
    pub ws: PathBuf,
    /// The starting path, resolved (inside the workspace unless `workspaceOnly` is off).
    pub root: PathBuf,
    pub only: bool,
    pub own: Own,
    /// Include hidden files and folders (`.env`, `.github/`); `.git/` never.
    pub hidden: bool,
    pub deadline: Instant,
    pub cancel: CancellationToken,
}

/// Why a walk stopped early, for the answer's last line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stop {
    Time,
    Cancelled,
}

impl Scope {
    /// Whether the walk must stop now.
    pub fn stop(&self) -> Option<Stop> {
        if self.cancel.is_cancelled() {
            Some(Stop::Cancelled)
        } else if Instant::now() >= self.deadline {
            Some(Stop::Time)
        } else {
            None
        }
    }

    /// `path` as shown to the model: relative to the workspace.
    pub fn shown(&self, path: &std::path::Path) -> String {
        super::paths::shown(&self.ws, path)
    }
}

/// The note that ends a stopped answer.
pub(super) fn stop_note(stop: Option<Stop>) -> &'static str {
    match stop {
        Some(Stop::Time) => "\n[stopped at the time limit: narrow the path or the pattern]",
        Some(Stop::Cancelled) => "\n[stopped: the run was cancelled]",
        None => "",
    }
}

fn spec(name: &str, description: &str, parameters: Value) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        parameters,
    }
}

/// The call's `path` (default `.`) confined and cleared like `read`'s, and its scope.
async fn scope(ctx: &ToolContext<'_>, args: &Value) -> Result<Scope, ToolError> {
    let path = opt_arg(args, "path", "a string", Value::as_str)?
        .unwrap_or(".")
        .to_string();
    let hidden = opt_arg(args, "hidden", "true or false", Value::as_bool)?.unwrap_or(false);
    let checked = super::fs::check(ctx, "read", path).await?;
    Ok(Scope {
        ws: guarded::canonical(&checked.ws),
        root: checked.file,
        only: checked.only,
        own: Own::of(ctx.cfg, &ctx.rt.home.state_dir),
        hidden,
        deadline: Instant::now() + SEARCH_TIME,
        cancel: ctx.cancel.clone(),
    })
}

/// A pattern argument, bounded in length.
fn pattern_arg<'a>(args: &'a Value, key: &str) -> Result<&'a str, ToolError> {
    let p = str_arg(args, key)?;
    if p.is_empty() {
        return Err(ToolError::Model(format!("`{key}` is empty")));
    }
    if p.len() > MAX_PATTERN {
        return Err(ToolError::Model(format!(
            "`{key}` is longer than {MAX_PATTERN} bytes"
        )));
    }
    Ok(p)
}

/// Run the walk off the async threads.
async fn blocking(
    f: impl FnOnce() -> Result<String, ToolError> + Send + 'static,
) -> Result<String, ToolError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ToolError::Fatal(format!("search task failed: {e}")))?
}

const HIDDEN_DOC: &str = "Include hidden files and folders (names starting with a dot); default false. .git/ is never searched.";

#[async_trait]
impl Tool for Ls {
    fn spec(&self) -> ToolSpec {
        spec(
            "ls",
            "List a folder of your workspace: folders end with /, files show their size. Skips what .gitignore ignores and hidden entries unless hidden is true.",
            json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "Folder relative to the workspace (default: the workspace)"},
                "depth": {"type": "integer", "minimum": 1, "maximum": MAX_LS_DEPTH, "description": "How many levels to list (default 1)"},
                "hidden": {"type": "boolean", "description": HIDDEN_DOC}
            }}),
        )
    }

    async fn call(&self, ctx: &ToolContext<'_>, args: Value) -> Result<String, ToolError> {
        let depth = opt_arg(&args, "depth", "a positive integer", Value::as_u64)?
            .unwrap_or(1)
            .clamp(1, MAX_LS_DEPTH) as usize;
        let scope = scope(ctx, &args).await?;
        blocking(move || walk::ls(&scope, depth)).await
    }
}

#[async_trait]
impl Tool for Glob {
    fn spec(&self) -> ToolSpec {
        spec(
            "glob",
            "Find files of your workspace by name pattern, e.g. **/*.rs or src/**/test_*.py (a pattern without / matches file names anywhere). Skips what .gitignore ignores and hidden files unless hidden is true.",
            json!({"type": "object", "properties": {
                "pattern": {"type": "string", "description": "Glob, matched against paths relative to `path`"},
                "path": {"type": "string", "description": "Folder to search, relative to the workspace (default: the workspace)"},
                "hidden": {"type": "boolean", "description": HIDDEN_DOC}
            }, "required": ["pattern"]}),
        )
    }

    async fn call(&self, ctx: &ToolContext<'_>, args: Value) -> Result<String, ToolError> {
        let matcher = walk::NameMatcher::new(pattern_arg(&args, "pattern")?)?;
        let scope = scope(ctx, &args).await?;
        blocking(move || walk::glob(&scope, &matcher)).await
    }
}

#[async_trait]
impl Tool for Grep {
    fn spec(&self) -> ToolSpec {
        spec(
            "grep",
            "Search the text files of your workspace for a regular expression (Rust regex syntax, one line at a time); answers path:line: text. Skips what .gitignore ignores, binary files and hidden files unless hidden is true.",
            json!({"type": "object", "properties": {
                "pattern": {"type": "string", "description": "Regular expression, e.g. fn\\s+main or TODO"},
                "path": {"type": "string", "description": "File or folder to search, relative to the workspace (default: the workspace)"},
                "glob": {"type": "string", "description": "Only files matching this glob, e.g. *.rs"},
                "ignoreCase": {"type": "boolean", "description": "Match case-insensitively; default false"},
                "hidden": {"type": "boolean", "description": HIDDEN_DOC}
            }, "required": ["pattern"]}),
        )
    }

    async fn call(&self, ctx: &ToolContext<'_>, args: Value) -> Result<String, ToolError> {
        let ignore_case =
            opt_arg(&args, "ignoreCase", "true or false", Value::as_bool)?.unwrap_or(false);
        let regex = grep::Regex::new(pattern_arg(&args, "pattern")?, ignore_case)?;
        let files = match opt_arg(&args, "glob", "a string", Value::as_str)? {
            Some(g) if !g.is_empty() => Some(walk::NameMatcher::new(g)?),
            _ => None,
        };
        let scope = scope(ctx, &args).await?;
        blocking(move || grep::grep(&scope, &regex, files.as_ref())).await
    }
}

#[cfg(test)]
mod tests;
