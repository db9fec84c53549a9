//! Tests of the shell-command parser: examples, and property tests that no command can
//! hide from it (10,000 cases each).

use super::*;
use proptest::prelude::*;

fn cmds(line: &str) -> (Vec<String>, bool) {
    let p = parse(line);
    (p.commands, p.unsure.is_some())
}

fn sure(line: &str) -> Vec<String> {
    let p = parse(line);
    assert_eq!(p.unsure, None, "{line}");
    p.commands
}

#[test]
fn finds_every_command() {
    assert_eq!(sure("ls -la"), ["ls"]);
    assert_eq!(
        sure("cd src && cargo build; echo done"),
        ["cd", "cargo", "echo"]
    );
    assert_eq!(sure("cat a | grep x || true &"), ["cat", "grep", "true"]);
    assert_eq!(sure("echo $(whoami) \"`id -u`\""), ["echo", "whoami", "id"]);
    assert_eq!(sure("echo \"$(rm -rf x)\""), ["echo", "rm"]);
    assert_eq!(sure("FOO=1 BAR='x y' make -j2"), ["make"]);
    assert_eq!(sure("ls > out.txt 2>&1 < in"), ["ls"]);
    assert_eq!(sure("ls 2> err; cat <(sort x)"), ["ls", "cat", "sort"]);
    assert_eq!(sure("(cd a && make) | tee log"), ["cd", "make", "tee"]);
    assert_eq!(sure("if test -f x; then rm x; fi"), ["test", "rm"]);
    assert_eq!(sure("echo 'a;b|c' \"d && e\" f\\;g # ; rm -rf /"), ["echo"]);
    assert_eq!(sure("echo ${HOME:-$(pwd)}/x"), ["echo", "pwd"]);
    assert_eq!(sure("echo $((1 + $(nproc)))"), ["echo", "nproc"]);
    assert_eq!(sure("/bin/ls\nfoo"), ["/bin/ls", "foo"]);
    assert_eq!(sure("l\\s"), ["ls"]);
    assert_eq!(sure("x &>/dev/null"), ["x"]);
}

/// Output redirections to files are found (builtins writing files need approval).
/// Catches: `echo x > ~/.bashrc` passing as "only builtins".
#[test]
fn finds_output_redirections_to_files() {
    for (line, writes) in [
        ("echo x > f", true),
        ("echo x >> ~/.bashrc", true),
        ("echo x &> out", true),
        ("echo $(printf y > f)", true),
        ("echo `printf y > f`", true),
        ("cat > \"$F\"", true),
        ("ls 2>&1", false),
        ("ls > /dev/null 2>&1", false),
        ("sort < in", false),
        ("echo '>' \">\"", false),
    ] {
        assert_eq!(parse(line).writes, writes, "{line}");
    }
}

#[test]
fn is_unsure_when_it_cannot_follow() {
    for line in [
        "$CMD arg",
        "\"$(which rm)\" x",
        "eval \"$x\"",
        "sudo rm -rf /",
        "env X=1 rm",
        "for f in *; do rm $f; done",
        "cat <<EOF\nrm -rf /\nEOF",
        "echo 'unterminated",
        "echo \"unterminated",
        "echo $(unclosed",
        "echo `unclosed",
        "ls >",
        "ls )",
        "''",
    ] {
        assert!(cmds(line).1, "should be unsure: {line:?}");
    }
}

/// A command word the model could hide after any prefix: appending `\n\nzzq` to
/// arbitrary text, the parser either finds `zzq` or says it is unsure.
/// Catches: any tokenizer path that swallows the rest of the line (a quote, an
/// escape, a comment or a substitution not ended where the shell ends it).
fn hidden_command_property(prefix: &str) -> Result<(), TestCaseError> {
    let line = format!("{prefix}\n\nzzq");
    let p = parse(&line);
    prop_assert!(
        p.unsure.is_some() || p.commands.iter().any(|c| c == "zzq"),
        "{line:?} → {p:?}"
    );
    Ok(())
}

fn shell_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        any::<char>().prop_map(|c| c.to_string()),
        proptest::sample::select(vec![
            ";", "&&", "||", "|", "&", "\n", "(", ")", "$(", "${", "`", "'", "\"", "\\", "#", "<",
            ">", "<<", "2>&1", " ", "$x", "=", "{", "}", "for", "if", "then", "fi", "eval",
        ])
        .prop_map(str::to_string),
        "[a-z]{1,6}",
    ];
    proptest::collection::vec(piece, 0..24).prop_map(|v| v.concat())
}

/// Built command lines: segments of a program word and arguments (some quoted, some
/// holding operator characters inside quotes), joined by operators, some wrapped in
/// `$(…)`: every program word is found, in order, and nothing else.
/// Catches: operators inside quotes taken as operators, or arguments taken as commands.
fn built_line() -> impl Strategy<Value = (String, Vec<String>)> {
    let program = "[a-z][a-z0-9_]{0,6}".prop_filter("not a keyword or wrapper", |w| {
        !LEADING_KEYWORDS.contains(&w.as_str())
            && !CLOSING_KEYWORDS.contains(&w.as_str())
            && !UNSURE_KEYWORDS.contains(&w.as_str())
            && !WRAPPERS.contains(&w.as_str())
    });
    let arg = prop_oneof![
        "[a-zA-Z0-9_./-]{1,8}",
        ".*".prop_map(|s: String| format!("'{}'", s.replace('\'', ""))),
        ".*".prop_map(|s: String| format!("\"{}\"", s.replace(['"', '\\', '$', '`'], ""))),
    ];
    let segment = (program, proptest::collection::vec(arg, 0..4), any::<bool>());
    let op = proptest::sample::select(vec![";", "&&", "||", "|", "&", "\n", " ; "]);
    (proptest::collection::vec((segment, op), 1..6)).prop_map(|parts| {
        let mut line = String::new();
        let mut want = Vec::new();
        for ((program, args, wrap), op) in parts {
            let text = format!("{program} {}", args.join(" "));
            want.push(program);
            if wrap {
                line.push_str(&format!("echo $({text})"));
                want.insert(want.len() - 1, "echo".into());
            } else {
                line.push_str(&text);
            }
            line.push_str(op);
        }
        (line, want)
    })
}

proptest! {
    #![proptest_config(crate::proptest_cases::config())]

    #[test]
    fn no_command_hides_after_any_prefix(prefix in shell_text()) {
        hidden_command_property(&prefix)?;
    }

    #[test]
    fn arbitrary_unicode_never_hides_a_command(prefix in ".*") {
        hidden_command_property(&prefix)?;
    }

    #[test]
    fn built_lines_are_parsed_exactly((line, want) in built_line()) {
        let p = parse(&line);
        prop_assert_eq!(p.unsure, None, "{:?}", line);
        prop_assert_eq!(p.commands, want, "{:?}", line);
    }
}

/// Lines that could run another program than the one the check resolves are unsure.
/// Catches: `export PATH=.; ls` (or `PATH=. ls`, `LD_PRELOAD=./x.so ls`, `cd sub && ./x`)
/// passing as "ls is allowed" while the shell runs a file from the workspace.
#[test]
fn is_unsure_when_the_line_moves_its_programs() {
    for line in [
        "PATH=. ls",
        "PATH=.\nls",
        "PATH=$PWD/bin ls",
        "export PATH=.:$PATH; ls",
        "export PATH; ls",
        "readonly PATH=.; ls",
        "local PATH=.",
        "unset PATH; ls",
        "read PATH < f; ls",
        "read -r a PATH < f",
        "getopts ab PATH",
        "printf -v PATH %s .; ls",
        "export $V=1; ls",
        "LD_PRELOAD=./x.so ls",
        "export LD_LIBRARY_PATH=.; ls",
        "BASH_ENV=./rc bash -c true",
        ": ${PATH:=.}; ls",
        ": ${LD_PRELOAD=./x.so}; ls",
        ": $((PATH = 1)); ls",
        "cd sub && ./x",
        "cd sub; sub2/x",
        "(cd sub; ./x)",
        "cd sub; echo `./x`",
        "pushd sub; ./x",
        "/bin/l? -la",
        "./*",
        "l[s] x",
    ] {
        assert!(
            cmds(line).1,
            "should be unsure: {line:?} → {:?}",
            parse(line)
        );
    }
}

/// What looks like those but moves nothing stays sure.
#[test]
fn lines_that_move_nothing_stay_sure() {
    assert_eq!(sure("FOO=$(pwd) make"), ["pwd", "make"]);
    assert_eq!(
        sure("export RUST_LOG=debug; cargo test"),
        ["export", "cargo"]
    );
    assert_eq!(sure("./x && cd y"), ["./x", "cd"]);
    assert_eq!(sure("cd /tmp && /bin/ls"), ["cd", "/bin/ls"]);
    assert_eq!(sure("[ -f x ] && ls *.rs"), ["[", "ls"]);
    assert_eq!(sure("echo ${PATH:-none} $((1 + 2))"), ["echo"]);
    assert_eq!(sure("echo PATH=. ls"), ["echo"]);
    assert_eq!(sure("read -r line < f"), ["read"]);
    assert_eq!(sure("printf '%s\\n' \"$PATH\" PATH"), ["printf"]);
    assert!(parse("cd sub && ls").changes_dir);
    assert!(!parse("ls && echo cd").changes_dir);
}

/// The real shell as the judge: a line built from program names, relative paths,
/// `cd`, `PATH` changes, quotes and substitutions runs under `sh -c` in a workspace where
/// every reachable program logs its path when it runs. Whenever the parser is sure and
/// every program it finds resolves, the programs that ran are among the ones it
/// resolved.
/// Catches: any construct by which the shell runs a program the check never looked at,
/// or finds one in another place than the check (the allowlist would then vouch for the
/// wrong file).
mod against_the_shell {
    use std::collections::BTreeSet;
    use std::path::{Path, PathBuf};
    use std::process::{Command, Stdio};

    use proptest::prelude::*;

    use super::super::parse;
    use crate::agent::tools::exec::resolve::{self, Program};

    const NAMES: &[&str] = &["pa", "pb", "pc"];

    struct World {
        _dir: tempfile::TempDir,
        bin: PathBuf,
        ws: PathBuf,
        log: PathBuf,
    }

    /// `bin/` on PATH, and a workspace holding programs of the same names at its top, in
    /// `sub/` and in `sub/sub/`, each appending its own resolved path to the log.
    fn world() -> World {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        let (bin, ws, log) = (root.join("bin"), root.join("ws"), root.join("log"));
        for d in [&bin, &ws, &ws.join("sub"), &ws.join("sub/sub")] {
            std::fs::create_dir_all(d).expect("mkdir");
            for name in NAMES {
                let p = d.join(name);
                std::fs::write(
                    &p,
                    format!("#!/bin/sh\necho {} >> {}\n", p.display(), log.display()),
                )
                .expect("write");
                std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                    .expect("chmod");
            }
        }
        World {
            _dir: dir,
            bin,
            ws,
            log,
        }
    }

    fn program() -> impl Strategy<Value = String> {
        let name = proptest::sample::select(NAMES.to_vec());
        (
            name,
            proptest::sample::select(vec!["", "./", "sub/", "sub/sub/", "../ws/", "/"]),
            proptest::sample::select(vec!["plain", "'", "\"", "\\"]),
        )
            .prop_map(|(name, dir, quote)| {
                let word = if dir == "/" {
                    // An absolute path: the PATH folder's own copy.
                    "BIN/".to_string() + name
                } else {
                    format!("{dir}{name}")
                };
                match quote {
                    "'" => format!("'{word}'"),
                    "\"" => format!("\"{word}\""),
                    "\\" => format!("\\{word}"),
                    _ => word,
                }
            })
    }

    fn segment() -> impl Strategy<Value = String> {
        let dir = proptest::sample::select(vec![".", "sub", "", "$PWD/sub", "BIN", "sub:BIN"]);
        prop_oneof![
            4 => program(),
            1 => Just("cd sub".to_string()),
            1 => Just("cd ..".to_string()),
            1 => (dir.clone(), program()).prop_map(|(d, p)| format!("PATH={d} {p}")),
            1 => dir.clone().prop_map(|d| format!("PATH={d}")),
            1 => dir.clone().prop_map(|d| format!("export PATH={d}")),
            1 => Just("unset PATH".to_string()),
            1 => dir.prop_map(|d| format!(": ${{PATH:={d}}}")),
            1 => (program(), program()).prop_map(|(a, b)| format!("FOO=$({a}) {b}")),
            1 => program().prop_map(|p| format!("echo $({p})")),
            1 => program().prop_map(|p| format!("echo `{p}`")),
            1 => (program(), program()).prop_map(|(a, b)| format!("({a}; {b})")),
        ]
    }

    fn line() -> impl Strategy<Value = String> {
        let op = proptest::sample::select(vec!["; ", " && ", " || ", " | ", "\n"]);
        proptest::collection::vec((segment(), op), 1..5)
            .prop_map(|parts| parts.into_iter().map(|(s, o)| s + o).collect::<String>())
    }

    /// What the check would vouch for: `None` when it would ask.
    fn vouched(line: &str, w: &World, path_var: &str) -> Option<BTreeSet<PathBuf>> {
        let parsed = parse(line);
        if parsed.unsure.is_some() {
            return None;
        }
        if parsed.changes_dir && resolve::path_is_relative(path_var) {
            return None;
        }
        let mut found = BTreeSet::new();
        for word in &parsed.commands {
            match resolve::resolve(word, &w.ws, path_var) {
                Program::Builtin(_) => {}
                Program::Found(p) => {
                    found.insert(Path::new(&p).canonicalize().ok()?);
                }
                Program::Missing(_) => return None,
            }
        }
        Some(found)
    }

    fn ran(line: &str, w: &World, path_var: &str) -> BTreeSet<PathBuf> {
        let _ = std::fs::remove_file(&w.log);
        let status = Command::new("/bin/sh")
            .arg("-c")
            .arg(line)
            .current_dir(&w.ws)
            .env_clear()
            .env("PATH", path_var)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("sh runs");
        let _ = status;
        std::fs::read_to_string(&w.log)
            .unwrap_or_default()
            .lines()
            .map(PathBuf::from)
            .collect()
    }

    proptest! {
        #![proptest_config(proptest::test_runner::Config {
            cases: (crate::proptest_cases::cases() / 20).max(50),
            failure_persistence: None,
            ..proptest::test_runner::Config::default()
        })]

        #[test]
        fn what_the_shell_runs_is_what_the_check_resolved(template in line()) {
            let w = world();
            let bin = w.bin.display().to_string();
            let line = template.replace("BIN", &bin);
            let path_var = format!("{bin}:/usr/bin:/bin");
            if let Some(vouched) = vouched(&line, &w, &path_var) {
                let ran = ran(&line, &w, &path_var);
                prop_assert!(
                    ran.is_subset(&vouched),
                    "{line:?}: the shell ran {ran:?}, the check resolved {vouched:?}"
                );
            }
        }
    }
}
