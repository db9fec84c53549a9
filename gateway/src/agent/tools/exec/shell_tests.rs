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
