//! The exec gate's second half: a parsed plan (`gate.rs`) checked against the folders it
//! may touch and its programs resolved. Every program word becomes an absolute path (or
//! one of a few builtins that cannot run code or read files), every `cd` stays inside the
//! workspace, every redirection reads or writes a regular file inside the workspace (or
//! `/dev/null`) from every working folder the line can be in. The checked plan renders
//! the line that runs: an argv when it is one program without redirections, else a
//! `sh -c` line with every word single-quoted — what was checked is what runs.

use std::path::{Path, PathBuf};

use super::gate::{parse, Command, Outside, Plan, Target};
use crate::config::lexical;

/// Builtins a line may use unasked: none runs code, reads a file or sets a variable.
/// (`printf -v` sets one in bash: `printf` may not start with an option.)
pub const BUILTINS: &[&str] = &["echo", "printf", "true", "false", "pwd", "cd", ":"];

/// Shell keywords and builtins that run code, read files or set variables: a line naming
/// one as its program is outside, even when a program of that name is on `PATH`.
const SHELL_WORDS: &[&str] = &[
    "if",
    "then",
    "else",
    "elif",
    "fi",
    "do",
    "done",
    "case",
    "esac",
    "while",
    "until",
    "for",
    "in",
    "function",
    "select",
    "time",
    "coproc",
    "eval",
    "exec",
    "command",
    "builtin",
    "source",
    ".",
    "trap",
    "alias",
    "unalias",
    "let",
    "set",
    "unset",
    "export",
    "readonly",
    "local",
    "declare",
    "typeset",
    "read",
    "mapfile",
    "readarray",
    "getopts",
    "hash",
    "enable",
    "shopt",
    "fc",
    "history",
    "jobs",
    "fg",
    "bg",
    "wait",
    "ulimit",
    "umask",
    "times",
    "test",
    "shift",
    "exit",
    "return",
    "break",
    "continue",
    "type",
    "kill",
    "caller",
    "compgen",
    "complete",
    "disown",
    "suspend",
    "logout",
    "dirs",
    "pushd",
    "popd",
];

/// What the gate knows of where a line runs.
pub struct Place<'a> {
    /// The workspace, canonical.
    pub workspace: &'a Path,
    /// The folder the line starts in (inside the workspace), canonical.
    pub workdir: &'a Path,
    /// The command's `PATH`.
    pub path_var: &'a str,
    /// Paths inside the workspace no redirection may touch (the gateway's config file and
    /// state dir, when they lie there), canonical.
    pub protected: &'a [PathBuf],
}

/// A program of a checked line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Program {
    Builtin(&'static str),
    /// An executable file, by its absolute path (as found, links not followed).
    Path(String),
    /// Not found on `PATH` (or not an executable file): named as written.
    Missing(String),
}

/// One command of a checked line: its program and its arguments (without the program).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub program: Program,
    pub args: Vec<String>,
}

/// A line inside the grammar, its programs resolved and its folders checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gated {
    plan: Plan,
    /// The commands in the order of the line, one per simple command.
    pub commands: Vec<Checked>,
    /// Rendered `cd` targets (absolute), by (pipeline, command) index.
    cd_targets: Vec<((usize, usize), String)>,
}

/// How a checked line is started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Run {
    /// The program and its arguments, without a shell.
    Argv(Vec<String>),
    /// A `sh -c` line rendered from the plan.
    Shell(String),
}

/// Parse and check `line` run at `place`.
pub fn gate(line: &str, place: &Place<'_>) -> Result<Gated, Outside> {
    let plan = parse(line)?;
    let mut cwds: Vec<PathBuf> = vec![place.workdir.to_path_buf()];
    let mut commands = Vec::new();
    let mut cd_targets = Vec::new();
    for (p, pipeline) in plan.pipelines.iter().enumerate() {
        for (c, command) in pipeline.commands.iter().enumerate() {
            let checked = check_command(command, place, &cwds)?;
            for r in &command.redirects {
                match &r.target {
                    Target::Dup(_) => {}
                    Target::Write { path, .. } => check_file(path, place, &cwds, true)?,
                    Target::Read(path) => check_file(path, place, &cwds, false)?,
                }
            }
            if checked.program == Program::Builtin("cd") {
                // Any folder the line may be in after a `cd` (it may fail, or run in a
                // pipeline's subshell: the folders before it stay possible too).
                let mut next = cwds.clone();
                let mut target = None;
                for cwd in &cwds {
                    let dir = checked_dir(&checked.args[0], cwd, place)?;
                    target.get_or_insert_with(|| dir.clone());
                    if !next.contains(&dir) {
                        next.push(dir);
                    }
                }
                // From several folders a relative target means several places: rendered
                // as written (with `./` so `CDPATH` plays no part); else as the one
                // absolute folder checked.
                let rendered = match (target, cwds.len()) {
                    (Some(t), 1) => t.display().to_string(),
                    _ => relative_cd(&checked.args[0]),
                };
                cd_targets.push(((p, c), rendered));
                cwds = next;
            }
            commands.push(checked);
        }
    }
    Ok(Gated {
        plan,
        commands,
        cd_targets,
    })
}

fn relative_cd(arg: &str) -> String {
    if arg.starts_with('/') || arg.starts_with("./") || arg.starts_with("../") {
        arg.to_string()
    } else {
        format!("./{arg}")
    }
}

fn check_command(cmd: &Command, place: &Place<'_>, cwds: &[PathBuf]) -> Result<Checked, Outside> {
    let (word, args) = cmd
        .argv
        .split_first()
        .ok_or_else(|| Outside("an empty command".into()))?;
    let args = args.to_vec();
    if let Some(b) = BUILTINS.iter().find(|b| **b == word) {
        match *b {
            "printf" if args.first().is_none_or(|a| a.starts_with('-')) => {
                return Err(Outside(
                    "`printf` with an option or no format (bash's `printf -v` sets a variable)"
                        .into(),
                ))
            }
            "cd" if args.len() != 1 || args[0].starts_with('-') || args[0].is_empty() => {
                return Err(Outside("`cd` without exactly one folder".into()))
            }
            _ => {}
        }
        return Ok(Checked {
            program: Program::Builtin(b),
            args,
        });
    }
    if SHELL_WORDS.contains(&word.as_str()) {
        return Err(Outside(format!(
            "`{word}` is a shell keyword or a builtin that can run code, read files or set variables"
        )));
    }
    if word.contains('=') && !word.contains('/') {
        return Err(Outside(format!("`{word}` (a variable assignment)")));
    }
    if word.is_empty() {
        return Err(Outside("an empty command name".into()));
    }
    let program = resolve(word, place.path_var, cwds)?;
    Ok(Checked { program, args })
}

/// The executable `word` names, found the way the shell finds it, from every folder the
/// line may be in: one answer, or the line is outside.
fn resolve(word: &str, path_var: &str, cwds: &[PathBuf]) -> Result<Program, Outside> {
    let mut found: Option<Program> = None;
    for cwd in cwds {
        let p = resolve_from(word, path_var, cwd);
        match &found {
            Some(f) if *f != p => {
                return Err(Outside(format!(
                    "`{word}` names another program depending on the folder a `cd` left the line in"
                )))
            }
            _ => found = Some(p),
        }
    }
    Ok(found.unwrap_or_else(|| Program::Missing(word.to_string())))
}

fn resolve_from(word: &str, path_var: &str, cwd: &Path) -> Program {
    if word.contains('/') {
        let p = lexical(&cwd.join(word));
        return if is_executable(&p) {
            Program::Path(p.display().to_string())
        } else {
            Program::Missing(word.to_string())
        };
    }
    for dir in path_var.split(':') {
        // An empty entry is the working folder, a relative one is taken from it.
        let p = cwd.join(dir).join(word);
        if is_executable(&p) {
            return Program::Path(lexical(&p).display().to_string());
        }
    }
    Program::Missing(word.to_string())
}

/// The folder `cd arg` enters from `cwd`, canonical: it must exist and lie inside the
/// workspace both as written and once links are followed.
fn checked_dir(arg: &str, cwd: &Path, place: &Place<'_>) -> Result<PathBuf, Outside> {
    let lexical = lexical(&cwd.join(arg));
    if !lexical.starts_with(place.workspace) {
        return Err(Outside(format!("`cd {arg}` leaves the workspace")));
    }
    let canonical = lexical
        .canonicalize()
        .map_err(|_| Outside(format!("`cd {arg}`: no such folder")))?;
    if !canonical.starts_with(place.workspace) || !canonical.is_dir() {
        return Err(Outside(format!(
            "`cd {arg}` leaves the workspace (or is not a folder)"
        )));
    }
    Ok(canonical)
}

/// A redirection's file, from every folder the line may be in: `/dev/null`, or a regular
/// file (or, for writes, a new file in an existing folder) inside the workspace, both as
/// written and once links are followed, not in a `.git` folder and not protected.
fn check_file(path: &str, place: &Place<'_>, cwds: &[PathBuf], write: bool) -> Result<(), Outside> {
    if path == "/dev/null" {
        return Ok(());
    }
    let what = if write { ">" } else { "<" };
    let refuse = |why: &str| Err(Outside(format!("the redirection `{what} {path}` {why}")));
    for cwd in cwds {
        let lexical = lexical(&cwd.join(path));
        if !lexical.starts_with(place.workspace) || lexical == place.workspace {
            return refuse("is outside the workspace");
        }
        let canonical = match lexical.canonicalize() {
            Ok(c) => {
                if !c.is_file() {
                    return refuse("is not a regular file");
                }
                c
            }
            Err(_) if write => {
                let (Some(parent), Some(name)) = (lexical.parent(), lexical.file_name()) else {
                    return refuse("has no folder");
                };
                // A dangling link would be followed to wherever it points.
                if lexical.symlink_metadata().is_ok() {
                    return refuse("is a link to nowhere");
                }
                match parent.canonicalize() {
                    Ok(p) => p.join(name),
                    Err(_) => return refuse("is in a folder that does not exist"),
                }
            }
            Err(_) => return refuse("names no file"),
        };
        if !canonical.starts_with(place.workspace) {
            return refuse("leads outside the workspace");
        }
        for p in [&lexical, &canonical] {
            let inner = p.strip_prefix(place.workspace).unwrap_or(p);
            if inner.components().any(|c| c.as_os_str() == ".git") {
                return refuse("is inside a `.git` folder");
            }
            if place.protected.iter().any(|x| p.starts_with(x)) {
                return refuse("is the gateway's own config or state");
            }
        }
    }
    Ok(())
}

#[path = "gate_render.rs"]
mod render;

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
#[path = "gate_check_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "gate_shell_tests.rs"]
mod shell_tests;
