//! An agent definition (docs/subagents.md, Agents): what a Markdown agent file, a built-in or a config
//! entry says about an agent — id, description, aliases, model, tool list, step and time
//! limits, instructions — and the reading of a file's front matter into one, every problem
//! named by its line and field.

use std::path::PathBuf;
use std::time::Duration;

use thiserror::Error;

use super::front_matter::{self, Entry, Value};
use crate::config::limits::{MAX_RUN_TIMEOUT, MAX_STEPS};
use crate::config::thinking::Thinking;
use crate::config::{check_entry, duration, entry_matches};

/// Longest id or alias, in characters.
pub const MAX_ID_CHARS: usize = 64;
/// Most aliases of one agent.
pub const MAX_ALIASES: usize = 32;
/// Longest description kept, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;

/// Where a definition comes from (later sources win by id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Builtin,
    File(PathBuf),
    /// `agents.list` in the config (or the implied default agent).
    Config,
}

/// The tools a definition allows; it only narrows the config's tool policy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolSet {
    /// Names, groups or `*` globs; `None`: every tool the policy allows.
    pub allow: Option<Vec<String>>,
    /// Names, groups or globs taken away.
    pub deny: Vec<String>,
}

impl ToolSet {
    /// Whether `tool` passes this set (the config's policy is checked separately).
    pub fn permits(&self, tool: &str) -> bool {
        !self.deny.iter().any(|d| entry_matches(d, tool))
            && self
                .allow
                .as_ref()
                .is_none_or(|a| a.iter().any(|e| entry_matches(e, tool)))
    }
}

/// Whether a child works in the workspace or in its own git worktree
/// (`subagents::worktree`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    None,
    Worktree,
}

/// One agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentDef {
    pub id: String,
    pub description: Option<String>,
    pub aliases: Vec<String>,
    /// `provider/model`; `None` (or `inherit` in a file): the usual precedence.
    pub model: Option<String>,
    pub tools: ToolSet,
    pub allow_agents: Option<Vec<String>>,
    pub max_steps: Option<u32>,
    pub timeout: Option<Duration>,
    pub thinking: Option<String>,
    pub isolation: Option<Isolation>,
    /// Added to the system prompt of the agent's runs.
    pub instructions: Option<String>,
    pub source: Source,
}

impl AgentDef {
    /// A definition with only an id (config entries and the implied default agent).
    pub fn bare(id: &str, source: Source) -> AgentDef {
        AgentDef {
            id: id.to_string(),
            description: None,
            aliases: Vec::new(),
            model: None,
            tools: ToolSet::default(),
            allow_agents: None,
            max_steps: None,
            timeout: None,
            thinking: None,
            isolation: None,
            instructions: None,
            source,
        }
    }
}

/// Why an agent file was skipped: its path, the line and (when one is at fault) the field.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{}:{line}: {}{message}", path.display(), field.as_ref().map(|f| format!("`{f}`: ")).unwrap_or_default())]
pub struct FileError {
    pub path: PathBuf,
    pub line: usize,
    pub field: Option<String>,
    pub message: String,
}

/// Whether `s` may be an alias: 1 to 64 of `A-Z a-z 0-9 _ - .`, starting with a letter or
/// digit.
pub fn valid_alias(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && s.chars().count() <= MAX_ID_CHARS
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// Whether `s` may be an agent id: as in `agents.list`, 1 to 64 lowercase letters, digits,
/// `_` or `-`, starting with a letter or digit (ids become part of session keys).
pub fn valid_id(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && s.chars().count() <= MAX_ID_CHARS
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '-'))
}

/// Reads an agent file's text. `stem` (the file name without `.md`) is the id when the
/// front matter has no `name`. Unknown keys (other tools' settings, e.g. `color`) are
/// ignored.
pub fn from_file(path: PathBuf, stem: &str, text: &str) -> Result<AgentDef, FileError> {
    let doc = front_matter::parse(text).map_err(|e| FileError {
        path: path.clone(),
        line: e.line,
        field: None,
        message: e.message,
    })?;
    let mut def = AgentDef::bare(stem, Source::File(path.clone()));
    let fail = |e: &Entry, message: String| FileError {
        path: path.clone(),
        line: e.line,
        field: Some(e.key.clone()),
        message,
    };
    let mut named = false;
    for e in &doc.entries {
        match e.key.as_str() {
            "name" => {
                def.id = id(e).map_err(|m| fail(e, m))?;
                named = true;
            }
            "description" => {
                def.description = opt_scalar(e)
                    .map_err(|m| fail(e, m))?
                    .map(|d| d.chars().take(MAX_DESCRIPTION_CHARS).collect())
            }
            "model" => {
                def.model = opt_scalar(e)
                    .map_err(|m| fail(e, m))?
                    .filter(|m| m != "inherit")
            }
            "tools" => {
                let tools: Vec<String> = list(e).iter().filter_map(|t| tool_name(t)).collect();
                for t in &tools {
                    if let Some(why) = check_entry(t) {
                        return Err(fail(e, why));
                    }
                }
                // An empty `tools:` means no list (every tool the policy allows), as other
                // agent tools read it, not "no tools at all".
                def.tools.allow = Some(tools).filter(|t| !t.is_empty());
            }
            "allowAgents" => def.allow_agents = Some(list(e)),
            "aliases" => {
                let aliases = list(e);
                if aliases.len() > MAX_ALIASES {
                    return Err(fail(e, format!("at most {MAX_ALIASES} aliases")));
                }
                if let Some(bad) = aliases.iter().find(|a| !valid_alias(a)) {
                    return Err(fail(e, format!("{bad:?} is not a valid alias (1 to {MAX_ID_CHARS} letters, digits, `_`, `-`, `.`)")));
                }
                def.aliases = aliases;
            }
            "maxSteps" => {
                def.max_steps = opt_scalar(e)
                    .map_err(|m| fail(e, m))?
                    .map(|s| {
                        s.parse::<u32>()
                            .ok()
                            .filter(|n| (1..=MAX_STEPS).contains(n))
                            .ok_or_else(|| {
                                fail(
                                    e,
                                    format!(
                                        "must be a whole number from 1 to {MAX_STEPS}, got {s:?}"
                                    ),
                                )
                            })
                    })
                    .transpose()?
            }
            "timeout" => {
                def.timeout = opt_scalar(e).map_err(|m| fail(e, m))?.map(|s| {
                    // With a unit, as in the config file: a bare number is refused.
                    duration::parse(&s)
                        .ok()
                        .filter(|d| *d >= Duration::from_secs(1) && *d <= MAX_RUN_TIMEOUT)
                        .ok_or_else(|| fail(e, format!("must be a duration from 1s to 7days (e.g. \"10m\"), got {s:?}")))
                }).transpose()?
            }
            "thinking" => {
                def.thinking = opt_scalar(e)
                    .map_err(|m| fail(e, m))?
                    .map(|s| {
                        s.parse::<Thinking>()
                            .map(|t| t.to_string())
                            .map_err(|err| fail(e, err.to_string()))
                    })
                    .transpose()?
            }
            "isolation" => {
                def.isolation = match opt_scalar(e).map_err(|m| fail(e, m))?.as_deref() {
                    None | Some("none") => Some(Isolation::None),
                    Some("worktree") => Some(Isolation::Worktree),
                    Some(other) => {
                        return Err(fail(
                            e,
                            format!("must be \"none\" or \"worktree\", got {other:?}"),
                        ))
                    }
                }
            }
            _ => {}
        }
    }
    if !named && !valid_id(&def.id) {
        return Err(FileError {
            path: path.clone(),
            line: 1,
            field: Some("name".into()),
            message: format!("no `name`, and the file name {stem:?} is not a valid id"),
        });
    }
    def.instructions = Some(doc.body).filter(|b| !b.is_empty());
    Ok(def)
}

fn id(e: &Entry) -> Result<String, String> {
    match &e.value {
        Value::Scalar(s) if valid_id(s) => Ok(s.clone()),
        Value::Scalar(s) => Err(format!(
            "{s:?} is not a valid id (1 to {MAX_ID_CHARS} lowercase letters, digits, `_` or `-`, starting with a letter or digit)"
        )),
        Value::List(_) => Err("must be a single value, not a list".into()),
    }
}

/// A scalar; an empty one is unset.
fn opt_scalar(e: &Entry) -> Result<Option<String>, String> {
    match &e.value {
        Value::Scalar(s) if s.trim().is_empty() => Ok(None),
        Value::Scalar(s) => Ok(Some(s.trim().to_string())),
        Value::List(_) => Err("must be a single value, not a list".into()),
    }
}

/// Other agent tools' names for our tools (their files say `tools: Read, Grep, Bash`);
/// `None` in the second place: a tool with no counterpart here, dropped.
const FOREIGN_TOOLS: &[(&str, Option<&str>)] = &[
    ("Read", Some("read")),
    ("Grep", Some("read")),
    ("Glob", Some("read")),
    ("LS", Some("read")),
    ("NotebookRead", Some("read")),
    ("Write", Some("write")),
    ("Edit", Some("edit")),
    ("MultiEdit", Some("edit")),
    ("NotebookEdit", Some("edit")),
    ("Bash", Some("exec")),
    ("BashOutput", Some("process")),
    ("KillShell", Some("process")),
    ("WebFetch", Some("web_fetch")),
    ("WebSearch", Some("web_search")),
    ("Task", Some("task")),
    ("TodoWrite", None),
];

/// A `tools` entry in our vocabulary (foreign names mapped, see [`FOREIGN_TOOLS`]).
fn tool_name(t: &str) -> Option<String> {
    match FOREIGN_TOOLS.iter().find(|(f, _)| *f == t) {
        Some((_, ours)) => ours.map(str::to_string),
        None => Some(t.to_string()),
    }
}

/// A list, or a comma-separated scalar (as other agent tools write `tools: Read, Grep`).
fn list(e: &Entry) -> Vec<String> {
    match &e.value {
        Value::List(items) => items
            .iter()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        Value::Scalar(s) => s
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
    }
}

#[cfg(test)]
#[path = "definition_tests.rs"]
mod tests;
