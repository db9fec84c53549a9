//! Tests of the gate's grammar: what parses into which plan, and what is outside. The
//! checks of programs and folders, and the reported attacks, are `gate_check_tests.rs`;
//! the differential test against dash and bash is `gate_shell_tests.rs`.

use super::*;

fn inside(line: &str) -> Plan {
    parse(line).unwrap_or_else(|e| panic!("{line:?} should be inside the grammar: {e}"))
}

fn cmd(argv: &[&str]) -> Command {
    Command {
        argv: argv.iter().map(|s| s.to_string()).collect(),
        redirects: vec![],
    }
}

#[test]
fn plain_lines_parse_into_plans() {
    assert_eq!(
        inside("ls -la"),
        Plan {
            pipelines: vec![Pipeline {
                join: Join::First,
                commands: vec![cmd(&["ls", "-la"])],
            }]
        }
    );
    assert_eq!(
        inside("cd sub && make -j2 'a b'c || echo failed; pwd\n"),
        Plan {
            pipelines: vec![
                Pipeline {
                    join: Join::First,
                    commands: vec![cmd(&["cd", "sub"])],
                },
                Pipeline {
                    join: Join::And,
                    commands: vec![cmd(&["make", "-j2", "a bc"])],
                },
                Pipeline {
                    join: Join::Or,
                    commands: vec![cmd(&["echo", "failed"])],
                },
                Pipeline {
                    join: Join::Then,
                    commands: vec![cmd(&["pwd"])],
                },
            ]
        }
    );
    let p = inside("grep -n x 'a;b|c' | sort 2>&1 > out.txt 2>>err < in");
    let pipe = &p.pipelines[0].commands;
    assert_eq!(pipe[0], cmd(&["grep", "-n", "x", "a;b|c"]));
    assert_eq!(pipe[1].argv, ["sort"]);
    assert_eq!(
        pipe[1].redirects,
        vec![
            Redirect {
                fd: 2,
                target: Target::Dup(1)
            },
            Redirect {
                fd: 1,
                target: Target::Write {
                    path: "out.txt".into(),
                    append: false
                }
            },
            Redirect {
                fd: 2,
                target: Target::Write {
                    path: "err".into(),
                    append: true
                }
            },
            Redirect {
                fd: 0,
                target: Target::Read("in".into())
            },
        ]
    );
    // A quoted digit is an argument, not an fd.
    let p = inside("echo '2'>f a2>g");
    assert_eq!(p.pipelines[0].commands[0].argv, ["echo", "2", "a2"]);
    assert_eq!(
        inside("x@y %1 a,b:c=d+e ''").pipelines[0].commands[0].argv,
        ["x@y", "%1", "a,b:c=d+e", ""]
    );
    assert_eq!(
        inside("echo 'héllo wörld;|&<>(){}*?~#!\"'").pipelines[0].commands[0].argv,
        ["echo", "héllo wörld;|&<>(){}*?~#!\""]
    );
}

#[test]
fn what_the_grammar_does_not_know_is_outside() {
    for line in [
        "echo $x",
        "echo `id`",
        "echo \\x",
        "echo \"x\"",
        "ls *",
        "echo ~",
        "echo x # c",
        "(ls)",
        "{ ls; }",
        "! ls",
        "ls &",
        "cat <<EOF",
        "ls <> f",
        "ls >| f",
        "ls &> f",
        "ls |& cat",
        "ls 3> f",
        "ls 1< f",
        "ls >& f",
        "ls > > f",
        "ls >",
        "",
        " ",
        "; ls",
        "ls;; ls",
        "ls && ",
        "| ls",
        "ls ||| x",
        "echo 'a",
        "echo 'a$b'",
        "echo 'a`b'",
        "echo 'a\\b'",
        "echo 'a\nb'",
        "echo 'a\tb'",
        "echo 'a\u{7f}b'",
        "> f",
        "2>&1",
        "ls\u{0}x",
        "é",
    ] {
        assert!(parse(line).is_err(), "{line:?} → {:?}", parse(line));
    }
}
