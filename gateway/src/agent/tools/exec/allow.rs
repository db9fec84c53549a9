//! What "allow always" stores and what a stored entry covers. A program that cannot run
//! other code is stored by its path (any arguments, later); one that can — shells and
//! interpreters, `env`, `xargs`, `find`, `git`, `make`, package managers, `awk`, `sed`,
//! `ssh`, `sudo`, … — only with its exact argument list, stored as a JSON array
//! (`["/usr/bin/git","status"]`), so allowing `git status` never allows `git -c
//! core.pager=sh …`. A bare path of such a program stored by an older version covers
//! nothing any more.

use std::path::Path;

/// Programs (by file name) that can run other code given as arguments, input or config.
const RUNS_CODE: &[&str] = &[
    "sh",
    "bash",
    "dash",
    "zsh",
    "ksh",
    "mksh",
    "csh",
    "tcsh",
    "fish",
    "busybox",
    "env",
    "xargs",
    "find",
    "git",
    "make",
    "gmake",
    "cmake",
    "ninja",
    "npm",
    "npx",
    "yarn",
    "pnpm",
    "bun",
    "deno",
    "node",
    "nodejs",
    "cargo",
    "rustc",
    "rustup",
    "go",
    "gcc",
    "cc",
    "c++",
    "g++",
    "clang",
    "clang++",
    "ld",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "sed",
    "perl",
    "ruby",
    "irb",
    "php",
    "lua",
    "tclsh",
    "wish",
    "ssh",
    "scp",
    "sftp",
    "rsync",
    "sudo",
    "doas",
    "su",
    "runuser",
    "pkexec",
    "nohup",
    "timeout",
    "nice",
    "ionice",
    "stdbuf",
    "chroot",
    "setsid",
    "strace",
    "ltrace",
    "gdb",
    "valgrind",
    "watch",
    "flock",
    "unbuffer",
    "expect",
    "script",
    "time",
    "parallel",
    "tmux",
    "screen",
    "vi",
    "vim",
    "nvim",
    "emacs",
    "nano",
    "ed",
    "ex",
    "less",
    "more",
    "man",
    "tar",
    "zip",
    "unzip",
    "sort",
    "docker",
    "podman",
    "kubectl",
    "systemctl",
    "systemd-run",
    "crontab",
    "at",
    "batch",
    "dpkg",
    "apt",
    "apt-get",
    "pip",
    "pip3",
    "pipx",
    "uv",
    "uvx",
    "poetry",
    "gem",
    "bundle",
    "rake",
    "mvn",
    "gradle",
    "java",
    "javac",
    "dotnet",
    "R",
    "Rscript",
    "julia",
    "osascript",
    "install",
    "patch",
    "openssl",
    "curl",
    "wget",
    "m4",
    "dc",
    "pdb",
    "nix",
    "nix-shell",
    "ssh-agent",
];
/// File-name prefixes of interpreters that come in versions (`python3.12`, `perl5.36`).
const RUNS_CODE_PREFIXES: &[&str] = &[
    "python", "pypy", "perl", "ruby", "node", "php", "lua", "pip", "tclsh", "guile", "ipython",
];

/// Whether the program at `path` can run other code.
pub fn runs_code(path: &str) -> bool {
    let name = Path::new(path)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(path);
    RUNS_CODE.contains(&name) || RUNS_CODE_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// The entry "allow always" stores for `path` run with `args`.
pub fn entry(path: &str, args: &[String]) -> String {
    if !runs_code(path) {
        return path.to_string();
    }
    let mut argv = vec![path.to_string()];
    argv.extend(args.iter().cloned());
    serde_json::to_string(&argv).unwrap_or_default()
}

/// Whether the stored entries cover `path` run with `args`.
pub fn stored_covers(stored: &[String], path: &str, args: &[String]) -> bool {
    stored.iter().any(|s| {
        if s.starts_with('[') {
            serde_json::from_str::<Vec<String>>(s).is_ok_and(|argv| {
                argv.split_first()
                    .is_some_and(|(p, a)| p == path && a == args)
            })
        } else {
            s == path && !runs_code(path)
        }
    })
}

/// Whether a config allowlist entry covers `path` run with `args`: the first word is a
/// glob of the program's path; each further word a glob of one argument, and a last `*`
/// any number of further arguments (`"/usr/bin/git status *"`). An entry without
/// arguments allows the program with any arguments.
pub fn config_entry_covers(entry: &str, path: &str, args: &[String]) -> bool {
    let mut words = entry.split_whitespace();
    let Some(program) = words.next() else {
        return false;
    };
    if !glob(program, path) {
        return false;
    }
    let patterns: Vec<&str> = words.collect();
    if patterns.is_empty() {
        return true;
    }
    let (rest, fixed) = match patterns.split_last() {
        Some((&"*", fixed)) => (true, fixed),
        _ => (false, patterns.as_slice()),
    };
    if args.len() < fixed.len() || (!rest && args.len() != fixed.len()) {
        return false;
    }
    fixed.iter().zip(args).all(|(p, a)| glob(p, a))
}

fn glob(pattern: &str, text: &str) -> bool {
    globset::Glob::new(pattern)
        .map(|g| g.compile_matcher().is_match(text))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    /// Catches: allow-always storing `/usr/bin/git` bare (then `git -c core.pager=…`
    /// runs anything), or an old bare entry of such a program still covering it.
    #[test]
    fn programs_that_run_code_are_stored_with_their_exact_arguments() {
        assert_eq!(entry("/usr/bin/ls", &args(&["-la"])), "/usr/bin/ls");
        let git = entry("/usr/bin/git", &args(&["status", "--short"]));
        assert_eq!(git, r#"["/usr/bin/git","status","--short"]"#);
        assert_eq!(
            entry("/usr/bin/python3.12", &args(&[])),
            r#"["/usr/bin/python3.12"]"#
        );
        let stored = vec![git, "/usr/bin/ls".to_string(), "/usr/bin/env".to_string()];
        assert!(stored_covers(
            &stored,
            "/usr/bin/git",
            &args(&["status", "--short"])
        ));
        assert!(!stored_covers(&stored, "/usr/bin/git", &args(&["status"])));
        assert!(!stored_covers(
            &stored,
            "/usr/bin/git",
            &args(&["-c", "x", "status", "--short"])
        ));
        assert!(stored_covers(&stored, "/usr/bin/ls", &args(&["x"])));
        assert!(
            !stored_covers(&stored, "/usr/bin/env", &args(&["sh"])),
            "old bare entry"
        );
        for p in [
            "/bin/sh",
            "/usr/bin/bash",
            "/usr/bin/env",
            "/usr/bin/xargs",
            "/usr/bin/find",
            "/usr/bin/make",
            "/usr/bin/npx",
            "/usr/bin/awk",
            "/bin/sed",
            "/usr/bin/ssh",
            "/usr/bin/sudo",
            "/usr/local/bin/cargo",
            "/usr/bin/perl5.36",
            "/usr/bin/node",
        ] {
            assert!(runs_code(p), "{p}");
        }
        assert!(!runs_code("/usr/bin/ls") && !runs_code("/usr/bin/cat"));
    }

    /// Catches: an entry's argument patterns ignored (any arguments allowed), or an old
    /// entry without arguments no longer allowing the program.
    #[test]
    fn config_entries_name_argument_patterns() {
        let table = [
            (
                "/usr/bin/git",
                "/usr/bin/git",
                &["push", "--force"][..],
                true,
            ),
            ("/usr/bin/*", "/usr/bin/git", &[][..], true),
            (
                "/usr/bin/git status *",
                "/usr/bin/git",
                &["status"][..],
                true,
            ),
            (
                "/usr/bin/git status *",
                "/usr/bin/git",
                &["status", "-s", "x"][..],
                true,
            ),
            (
                "/usr/bin/git status *",
                "/usr/bin/git",
                &["push"][..],
                false,
            ),
            ("/usr/bin/git status *", "/usr/bin/git", &[][..], false),
            (
                "/usr/bin/git status",
                "/usr/bin/git",
                &["status", "-s"][..],
                false,
            ),
            (
                "/usr/bin/git log -n* *",
                "/usr/bin/git",
                &["log", "-n5"][..],
                true,
            ),
            ("/usr/bin/git status *", "/bin/git", &["status"][..], false),
        ];
        for (entry, path, a, want) in table {
            assert_eq!(
                config_entry_covers(entry, path, &args(a)),
                want,
                "{entry} vs {path} {a:?}"
            );
        }
    }
}
