//! From command words to executable paths, the way the shell finds them: a word with a
//! `/` is a path (relative to the working directory), anything else is looked up in the
//! command's `PATH`; a few shell builtins that only touch the shell's own state need no
//! approval.

use std::path::{Component, Path, PathBuf};

/// Builtins that run nothing else and change nothing outside the shell: allowed always.
const HARMLESS_BUILTINS: &[&str] = &[
    "cd", "pwd", "echo", "printf", "true", "false", "test", "[", ":", "export", "unset", "shift",
    "read", "wait", "set", "exit", "return", "break", "continue", "local", "type",
];

/// What one command word is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Program {
    Builtin(String),
    Found(String),
    /// Not found (or not executable): named as written.
    Missing(String),
}

pub fn resolve(word: &str, workdir: &Path, path_var: &str) -> Program {
    if HARMLESS_BUILTINS.contains(&word) {
        return Program::Builtin(word.to_string());
    }
    if word.contains('/') {
        let p = normalize(&workdir.join(word));
        return if is_executable(&p) {
            Program::Found(p.display().to_string())
        } else {
            Program::Missing(word.to_string())
        };
    }
    for dir in path_var.split(':').filter(|d| !d.is_empty()) {
        let p = Path::new(dir).join(word);
        if is_executable(&p) {
            return Program::Found(normalize(&p).display().to_string());
        }
    }
    Program::Missing(word.to_string())
}

/// `.` and `..` removed without touching the file system (symlinks are not resolved: the
/// allowlist names the path the shell runs).
fn normalize(p: &Path) -> PathBuf {
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

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_resolve_like_the_shell() {
        let dir = Path::new("/");
        assert_eq!(
            resolve("cd", dir, "/usr/bin:/bin"),
            Program::Builtin("cd".into())
        );
        assert!(
            matches!(resolve("sh", dir, "/nonexistent:/bin"), Program::Found(p) if p == "/bin/sh")
        );
        assert_eq!(
            resolve("sh", dir, "/nonexistent"),
            Program::Missing("sh".into())
        );
        assert!(matches!(resolve("./bin/../bin/sh", dir, ""), Program::Found(p) if p == "/bin/sh"));
        assert_eq!(
            resolve("no-such-prog-x", dir, "/bin"),
            Program::Missing("no-such-prog-x".into())
        );
    }
}
