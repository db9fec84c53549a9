//! Tests of the gate's checks: the reported attacks, programs, `cd` targets and
//! redirection targets against a real folder tree (with links out of the workspace), and
//! the rendered line.

use std::path::{Path, PathBuf};

use super::*;

/// The lines of the security report that ran a program (or wrote a file, or read the
/// config) with no approval on the default config, and their bash-only cousins.
/// Catches: any of them being inside the grammar again.
pub(crate) const ATTACKS: &[&str] = &[
    ": `: \\`touch F\\``",
    "echo \"${x:-'$(touch F)'}\"",
    "echo $(( '$(touch F)' ))",
    "> F",
    "test -v 'a[$(touch F)]'",
    "unset 'a[$(touch F)]'",
    "read 'a[$(touch F)]' < /dev/null",
    "PS4='$(touch F)'; set -x; true",
    "echo $'\\x41'; $'touch' F",
    "while IFS= read -r l; do echo \"$l\"; done < ~/.switchboard/config.json5",
    "printf -v 'a[$(touch F)]' x",
    "printf -v x y",
    "cd; touch F",
    "echo x >F&",
    "{ touch F; }",
    "f() { touch F; }; f",
    "eval touch F",
    "exec touch F",
    "command touch F",
    ". ./F",
    "source ./F",
    "X=1 touch F",
    "cat <<EOF\nx\nEOF",
    "echo x &> F",
    "echo x >| F",
    "echo x >& F",
    "echo \\`touch F\\`",
    "echo ~/F",
    "ls *",
    "t?uch F",
    "echo x # comment",
    "(touch F)",
    "! true",
    "echo 'a\\b'",
    "echo 'a\nb'",
    "echo 'unterminated",
    "",
    "; ls",
    "ls;; ls",
    "ls |& cat",
    "echo x 3> F",
    "echo x 1< F",
    "cat 0> F",
    "ls > > F",
    "ls >",
];

/// A tree: `bin/tool` on PATH; the workspace `ws/` with `sub/`, a file `in`, programs
/// `prog` and `sub/prog`, `.git/hooks/`, the protected `state/`, and links out of it
/// (`link` → `out/`, `flink` → `out/secret`, `dangling` → `out/nothing`).
struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
    ws: PathBuf,
    path_var: String,
    protected: Vec<PathBuf>,
}

fn executable(p: &Path) {
    std::fs::write(p, "#!/bin/sh\n").expect("write");
    std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
}

fn tree() -> Tree {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    let ws = root.join("ws");
    for d in ["bin", "out", "ws/sub", "ws/.git/hooks", "ws/state"] {
        std::fs::create_dir_all(root.join(d)).expect("mkdir");
    }
    executable(&root.join("bin/tool"));
    executable(&ws.join("prog"));
    executable(&ws.join("sub/prog"));
    std::fs::write(ws.join("in"), "x").expect("write");
    std::fs::write(root.join("out/secret"), "x").expect("write");
    for (link, to) in [
        ("link", "../out"),
        ("flink", "../out/secret"),
        ("dangling", "../out/nothing"),
    ] {
        std::os::unix::fs::symlink(to, ws.join(link)).expect("symlink");
    }
    Tree {
        _dir: dir,
        path_var: format!("{}:/usr/bin:/bin", root.join("bin").display()),
        protected: vec![ws.join("state")],
        root,
        ws,
    }
}

impl Tree {
    fn gate(&self, line: &str) -> Result<Gated, Outside> {
        gate(
            line,
            &Place {
                workspace: &self.ws,
                workdir: &self.ws,
                path_var: &self.path_var,
                protected: &self.protected,
            },
        )
    }

    fn outside(&self, line: &str) -> String {
        match self.gate(line) {
            Err(o) => o.0,
            Ok(g) => panic!("{line:?} should be outside: {g:?}"),
        }
    }

    fn render(&self, line: &str) -> String {
        match self.gate(line) {
            Ok(g) => g.render().replace(&self.root.display().to_string(), "ROOT"),
            Err(o) => panic!("{line:?} should be inside: {o}"),
        }
    }
}

/// Catches: any reported attack running unasked again.
#[test]
fn the_reported_attacks_are_outside() {
    let t = tree();
    for line in ATTACKS {
        t.outside(line);
    }
}

/// Catches: a redirection writing or reading outside the workspace — by `..`, an absolute
/// path, a link out of it, from a folder a `cd` moved to — or into `.git` or the
/// gateway's own state.
#[test]
fn redirections_stay_in_the_workspace() {
    let t = tree();
    for line in [
        "echo x > ../out/f",
        &format!("echo x > {}/out/f", t.root.display()),
        "echo x > link/f",
        "echo x > flink",
        "echo x >> dangling",
        "echo x > .git/hooks/pre-commit",
        "echo x > sub/../.git/config",
        "echo x > state/x",
        "echo x > sub",
        "echo x > nowhere/f",
        "cat < ../out/secret",
        "cat < link/secret",
        "cat < missing",
        "cd sub && echo x > ../../out/f",
        "cd sub; echo x > ../in",
        "echo x > .",
        "echo x > ''",
    ] {
        t.outside(line);
    }
    assert_eq!(
        t.render("echo x > f 2>/dev/null; cat < in >> sub/f 2>&1"),
        format!(
            "echo 'x' 1>'f' 2>'/dev/null'; {} 0<'in' 1>>'sub/f' 2>&1",
            quote_cat()
        )
    );
}

/// `cat`'s rendering on this host (wherever PATH finds it).
fn quote_cat() -> String {
    ["/usr/bin/cat", "/bin/cat"]
        .iter()
        .find(|p| Path::new(p).exists())
        .map(|p| format!("'{p}'"))
        .unwrap_or_default()
}

/// Catches: `cd` out of the workspace (by `..`, a link, no argument, `-`), or a relative
/// program found in another folder than the one a `cd` left the line in.
#[test]
fn cd_stays_in_the_workspace_and_programs_resolve_once() {
    let t = tree();
    for line in [
        "cd ..",
        "cd link",
        "cd",
        "cd -",
        "cd sub sub",
        "cd /",
        "cd missing",
        "cd sub && ./prog",
    ] {
        t.outside(line);
    }
    assert_eq!(t.render("cd sub && pwd"), "cd 'ROOT/ws/sub' && pwd");
    // From the workspace (the first `cd` may have failed) `..` leaves it.
    t.outside("cd sub; cd ..; pwd");
    assert_eq!(t.render("./prog x"), "'ROOT/ws/prog' 'x'");
    assert_eq!(t.render("sub/prog"), "'ROOT/ws/sub/prog'");
    assert_eq!(
        t.render("cd sub && tool"),
        "cd 'ROOT/ws/sub' && 'ROOT/bin/tool'"
    );
}

/// Catches: a builtin that runs code or sets variables treated as harmless, or a program
/// named like a builtin run as the builtin.
#[test]
fn only_harmless_builtins_and_resolved_programs() {
    let t = tree();
    for line in [
        "printf",
        "printf -v x y",
        "printf -- x",
        "test -f x",
        "[ -f x ]",
        "set -x",
        "read x",
        "unset x",
        "export X=1",
        "eval ls",
        "exec ls",
        "command ls",
        ". x",
        "source x",
        "trap ls EXIT",
        "alias x=ls",
        "X=1 tool",
        "X=1",
        "time tool",
        "while",
        "kill 1",
    ] {
        t.outside(line);
    }
    assert_eq!(
        t.render("echo -n 'a b' && printf '%s' x || true; false | : x"),
        "echo '-n' 'a b' && printf '%s' 'x' || true; false | : 'x'"
    );
    let g = t.gate("tool -x 'a b'").expect("inside");
    let tool = t.root.join("bin/tool").display().to_string();
    assert_eq!(
        g.commands,
        vec![Checked {
            program: Program::Path(tool.clone()),
            args: vec!["-x".into(), "a b".into()],
        }]
    );
    assert_eq!(g.run(), Run::Argv(vec![tool, "-x".into(), "a b".into()]));
    let g = t.gate("no-such-program x").expect("inside");
    assert_eq!(
        g.commands[0].program,
        Program::Missing("no-such-program".into())
    );
    assert!(matches!(
        t.gate("tool > f").expect("inside").run(),
        Run::Shell(_)
    ));
    assert!(matches!(
        t.gate("echo x").expect("inside").run(),
        Run::Shell(_)
    ));
}
