//! The walk under a [`Scope`]: ripgrep's `ignore` walker (`.gitignore`, `.ignore` and
//! `.git/info/exclude` rules, also outside a git repository; hidden entries skipped unless
//! asked; `.git/` never entered; symlinks never followed), sorted by name so an answer is
//! the same every time, and every entry checked against the gateway's own files. `ls`
//! and `glob` are written here; `grep` walks with [`files`].

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use ignore::{DirEntry, WalkBuilder};

use super::guarded::Access;
use super::{stop_note, Scope, Stop, MAX_ENTRIES, MAX_OUTPUT};
use crate::agent::tools::ToolError;

/// A glob over paths relative to the search folder; one without `/` matches a file name
/// at any depth (as `*.rs` means in ripgrep's `-g`).
pub struct NameMatcher {
    glob: GlobMatcher,
    by_name: bool,
}

impl NameMatcher {
    pub fn new(pattern: &str) -> Result<NameMatcher, ToolError> {
        let glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| ToolError::Model(format!("bad glob `{pattern}`: {}", e.kind())))?
            .compile_matcher();
        Ok(NameMatcher {
            glob,
            by_name: !pattern.contains('/'),
        })
    }

    /// Whether the file at `rel` (relative to the search folder) matches.
    pub fn matches(&self, rel: &Path) -> bool {
        if self.by_name {
            rel.file_name().is_some_and(|n| self.glob.is_match(n))
        } else {
            self.glob.is_match(rel)
        }
    }
}

/// What an admitted entry is.
pub(super) enum Kind {
    Dir,
    File(u64),
    /// A symlink that stays inside the workspace, with where it leads (shown).
    Link(String),
}

/// The walker over `scope.root`, `max_depth` levels deep (`None`: all).
fn walker(scope: &Scope, max_depth: Option<usize>) -> ignore::Walk {
    let mut b = WalkBuilder::new(&scope.root);
    b.hidden(!scope.hidden)
        .follow_links(false)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .ignore(true)
        .parents(true)
        .require_git(false)
        .max_depth(max_depth)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|e| e.file_name() != ".git");
    b.build()
}

/// Whether `path` may be shown at all: not one of the gateway's own files.
fn allowed(scope: &Scope, path: &Path) -> bool {
    !matches!(scope.own.access(&scope.ws, path), Access::Refused(_))
}

/// An entry of the walk, if it is shown: not the root, not the gateway's, and a symlink
/// only when `links` and it resolves inside the workspace (outside of it when
/// `workspaceOnly` is off) to something not the gateway's.
fn admit(scope: &Scope, entry: &DirEntry, links: bool) -> Option<Kind> {
    if entry.depth() == 0 {
        return None;
    }
    let path = entry.path();
    if !allowed(scope, path) {
        return None;
    }
    let ft = entry.file_type()?;
    if ft.is_symlink() {
        if !links {
            return None;
        }
        let target = std::fs::canonicalize(path).ok()?;
        if (scope.only && !target.starts_with(&scope.ws)) || !allowed(scope, &target) {
            return None;
        }
        return Some(Kind::Link(scope.shown(&target)));
    }
    if ft.is_dir() {
        return Some(Kind::Dir);
    }
    if ft.is_file() {
        return Some(Kind::File(entry.metadata().map(|m| m.len()).unwrap_or(0)));
    }
    None
}

/// `bytes` as a short size.
fn size(bytes: u64) -> String {
    match bytes {
        b if b < 1024 => format!("{b} B"),
        b if b < 1024 * 1024 => format!("{:.1} KB", b as f64 / 1024.0),
        b => format!("{:.1} MB", b as f64 / (1024.0 * 1024.0)),
    }
}

/// Lines collected under the entry and byte bounds, with a count of the rest.
pub(super) struct Lines {
    out: String,
    shown: usize,
    max: usize,
    more: usize,
}

impl Lines {
    pub fn new(max: usize) -> Lines {
        Lines {
            out: String::new(),
            shown: 0,
            max,
            more: 0,
        }
    }

    /// Add `line`, or count it when the answer is full.
    pub fn push(&mut self, line: &str) {
        if self.shown < self.max && self.out.len() + line.len() < MAX_OUTPUT {
            self.out.push_str(line);
            self.out.push('\n');
            self.shown += 1;
        } else {
            self.more += 1;
        }
    }

    /// The answer: the lines, "… N more", and why the walk stopped, if it did.
    pub fn finish(mut self, empty: &str, what: &str, stop: Option<Stop>) -> String {
        if self.shown == 0 && self.more == 0 {
            self.out.push_str(empty);
        }
        if self.more > 0 {
            self.out.push_str(&format!(
                "… {} more {what} (narrow the path or the pattern)",
                self.more
            ));
        }
        let mut out = self.out.trim_end().to_string();
        out.push_str(stop_note(stop));
        out
    }
}

/// `ls`: the folder's entries, `depth` levels deep.
pub fn ls(scope: &Scope, depth: usize) -> Result<String, ToolError> {
    if !scope.root.is_dir() {
        return Err(ToolError::Model(format!(
            "{} is not a folder (use read for a file)",
            scope.shown(&scope.root)
        )));
    }
    let mut lines = Lines::new(MAX_ENTRIES);
    let mut stop = None;
    for entry in walker(scope, Some(depth)).flatten() {
        if let Some(s) = scope.stop() {
            stop = Some(s);
            break;
        }
        let Some(kind) = admit(scope, &entry, true) else {
            continue;
        };
        let rel = relative(&scope.root, entry.path());
        lines.push(&match kind {
            Kind::Dir => format!("{rel}/"),
            Kind::File(len) => format!("{rel}  {}", size(len)),
            Kind::Link(to) => format!("{rel} -> {to}"),
        });
    }
    let header = format!("{}:\n", scope.shown(&scope.root));
    Ok(header + &lines.finish("(empty)", "entries", stop))
}

/// `glob`: the files under the folder whose relative path matches.
pub fn glob(scope: &Scope, matcher: &NameMatcher) -> Result<String, ToolError> {
    let mut lines = Lines::new(MAX_ENTRIES);
    let stop = each_file(scope, |entry| {
        let rel = entry
            .path()
            .strip_prefix(&scope.root)
            .unwrap_or(entry.path());
        if matcher.matches(rel) {
            lines.push(&scope.shown(entry.path()));
        }
        true
    });
    Ok(lines.finish("no files match", "files", stop))
}

/// Call `f` on each regular file under `scope.root` (or the root itself when it is a
/// file), in order, until it returns false or the walk must stop (then why).
pub(super) fn each_file(scope: &Scope, mut f: impl FnMut(&DirEntry) -> bool) -> Option<Stop> {
    for entry in walker(scope, None).flatten() {
        if let Some(s) = scope.stop() {
            return Some(s);
        }
        let is_root_file = entry.depth() == 0 && entry.file_type().is_some_and(|t| t.is_file());
        let take = if is_root_file {
            allowed(scope, entry.path())
        } else {
            matches!(admit(scope, &entry, false), Some(Kind::File(_)))
        };
        if take && !f(&entry) {
            return None;
        }
    }
    None
}

/// `path` relative to `root`, as text.
fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| PathBuf::from(path))
        .display()
        .to_string()
}
