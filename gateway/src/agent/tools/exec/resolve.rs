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
    for dir in path_var.split(':') {
        // An empty entry is the working directory, a relative one is taken from it.
        let p = workdir.join(dir).join(word);
        if is_executable(&p) {
            return Program::Found(normalize(&p).display().to_string());
        }
    }
    Program::Missing(word.to_string())
}

/// Whether `PATH` has an entry that names a folder relative to the working directory
/// (relative, or empty: the working directory itself).
pub fn path_is_relative(path_var: &str) -> bool {
    path_var.split(':').any(|d| !d.starts_with('/'))
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

    /// Catches: an empty or relative `PATH` entry skipped or taken from the daemon's own
    /// folder, while the shell searches the command's working directory there.
    #[test]
    fn relative_path_entries_are_searched_from_the_working_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).expect("mkdir");
        for p in [dir.path().join("tool"), bin.join("tool")] {
            std::fs::write(&p, "#!/bin/sh\n").expect("write");
            std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .expect("chmod");
        }
        let found = |path_var: &str| match resolve("tool", dir.path(), path_var) {
            Program::Found(p) => p,
            other => panic!("{path_var:?}: {other:?}"),
        };
        let top = dir.path().join("tool").display().to_string();
        assert_eq!(found(":/usr/bin"), top);
        assert_eq!(found("/nonexistent::/usr/bin"), top);
        assert_eq!(found("."), top);
        assert_eq!(found("bin"), bin.join("tool").display().to_string());
        assert!(path_is_relative("/usr/bin:"));
        assert!(path_is_relative("bin:/usr/bin"));
        assert!(!path_is_relative("/usr/bin:/bin"));
    }
}
