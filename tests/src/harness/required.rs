//! The tools a test needs from the machine (npm, curl, chromium, bwrap, postgres, bash):
//! under CI (`CI=true`) a missing one fails the test, so the suite cannot pass on silence;
//! on a developer's machine it is skipped, said loudly on stderr.

use std::path::{Path, PathBuf};

/// Whether the suite runs under CI: `CI` set to anything but `false`, `0` or empty (as
/// GitHub Actions, GitLab and most runners set `CI=true`).
pub fn in_ci() -> bool {
    ci_value(std::env::var("CI").ok().as_deref())
}

fn ci_value(v: Option<&str>) -> bool {
    v.is_some_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// The path of `tool` on `PATH` (an executable file), if any.
pub fn which(tool: &str) -> Option<PathBuf> {
    if tool.contains('/') {
        return is_executable(Path::new(tool)).then(|| PathBuf::from(tool));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(tool))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether the test may go on: `true` when every tool in `tools` is installed. A missing
/// one panics under CI (naming the tool and `tests/setup.sh`), else prints `SKIPPED` and
/// returns `false`: the test returns at once.
pub fn require(tools: &[&str], why: &str) -> bool {
    let missing: Vec<&str> = tools
        .iter()
        .copied()
        .filter(|t| which(t).is_none())
        .collect();
    decide(&missing, why, in_ci())
}

fn decide(missing: &[&str], why: &str, ci: bool) -> bool {
    if missing.is_empty() {
        return true;
    }
    let what = missing.join(", ");
    if ci {
        panic!("{what} missing ({why}): CI=true, so this test fails instead of skipping; run tests/setup.sh");
    }
    eprintln!("\n!!! SKIPPED: {what} missing ({why}); run tests/setup.sh (under CI=true this fails) !!!\n");
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Catches: a missing tool passing silently under CI, or CI read from the wrong value.
    #[test]
    fn ci_turns_a_skip_into_a_failure() {
        assert!(ci_value(Some("true")) && ci_value(Some("1")) && ci_value(Some("yes")));
        assert!(
            !ci_value(None)
                && !ci_value(Some(""))
                && !ci_value(Some("false"))
                && !ci_value(Some("0"))
        );
        assert!(decide(&[], "x", true));
        assert!(!decide(&["no-such-tool"], "x", false));
        let failed = std::panic::catch_unwind(|| decide(&["no-such-tool"], "x", true));
        assert!(failed.is_err());
        assert!(which("sh").is_some());
        assert!(which("no-such-tool-anywhere").is_none());
    }
}
