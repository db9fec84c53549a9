//! Checks of `agents.defaults.sandbox`: `bwrap` is an absolute path or a bare program name
//! (a relative path would depend on the directory the gateway was started in).

use super::super::error::{Issue, KeyPath};
use super::super::Config;

pub(crate) fn sandbox(config: &Config, out: &mut Vec<Issue>) {
    let Some(bwrap) = &config.agents.defaults.sandbox.bwrap else {
        return;
    };
    let text = bwrap.to_string_lossy();
    let bare = !text.is_empty() && !text.contains('/');
    if !(bwrap.is_absolute() || bare) || text.contains('\0') {
        out.push(Issue::new(
            KeyPath::dotted("agents.defaults.sandbox.bwrap"),
            format!("must be an absolute path or a program name on PATH, got {text:?}"),
        ));
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn issues(bwrap: &str) -> Vec<Issue> {
        let mut c = Config::default();
        c.agents.defaults.sandbox.bwrap = Some(PathBuf::from(bwrap));
        let mut out = Vec::new();
        sandbox(&c, &mut out);
        out
    }

    /// Catches: a relative `bwrap` path that works or not depending on where the gateway
    /// was started.
    #[test]
    fn bwrap_is_absolute_or_a_bare_name() {
        assert!(issues("/usr/bin/bwrap").is_empty());
        assert!(issues("bwrap").is_empty());
        assert_eq!(issues("bin/bwrap").len(), 1);
        assert_eq!(issues("").len(), 1);
    }
}
