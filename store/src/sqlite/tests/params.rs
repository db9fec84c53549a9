//! Every write script binds exactly as many values as it has `?`: each script's parameter
//! struct is built with values present and absent, and its binds counted.

use std::sync::Arc;

use super::super::announces::{AskForAnnounce, CompleteAnnounce};
use super::super::inbox::{Accept, AcceptStart};
use super::super::runs::Finish;
use super::super::sessions::Ensure;
use super::super::starts::StartRun;
use super::super::subagents::Spawn;
use super::super::usage::{CallAnswer, CallUsed};
use super::super::writer::{placeholders, statements, Params};
use super::*;

thread_local! {
    /// A database with the store's schema, to prepare the scripts' statements on.
    static SCHEMA: rusqlite::Connection = {
        let c = rusqlite::Connection::open_in_memory().unwrap();
        for m in super::super::MIGRATOR.iter() {
            c.execute_batch(&m.sql).unwrap();
        }
        c
    };
}

/// `params` binds one value per placeholder of its script, and the script's statements,
/// as the writer splits them, are each exactly one statement that prepares on the schema,
/// with the script's placeholders between them.
fn check(name: &str, params: &impl Params) {
    let script = params.script();
    let bound: usize = SCHEMA.with(|c| {
        script
            .statements()
            .iter()
            .map(|sql| {
                let stmt = c
                    .prepare(sql)
                    .unwrap_or_else(|e| panic!("{name}: {e} in\n{sql}"));
                stmt.parameter_count()
            })
            .sum()
    });
    assert_eq!(bound, script.placeholders, "{name}: statements' binds");
    let args = params.args().unwrap();
    assert_eq!(
        args.len(),
        script.placeholders,
        "{name}: binds vs placeholders of\n{}",
        script.body
    );
    assert!(script.placeholders > 0, "{name}: a script without binds");
}

fn end(deliver: bool) -> RunEnd {
    RunEnd {
        status: RunStatus::Succeeded,
        error: deliver.then(|| "e".to_string()),
        model: Some("fake/m".into()),
        steps: 1,
        input_tokens: 2,
        output_tokens: 3,
        cost_usd: deliver.then_some(0.5),
        context_tokens: deliver.then_some(7),
        reply: Some("r".into()),
        deliver: deliver.then(|| "d".to_string()),
        archive_after_ms: deliver.then_some(60_000),
        drop_inbox: !deliver,
    }
}

/// Catches: a bind added to, or dropped from, one script's parameters but not its SQL
/// (or the other way round), for every script of the store.
#[test]
fn every_script_binds_one_value_per_placeholder() {
    let o = origin();
    let m = inbound("agent:main:main", &o, "hi", Some("m1"));
    let m_no_id = inbound("agent:main:main", &o, "hi", None);
    let r = run("r1", "agent:main:main", "s1", &o);
    let answer = NewMessage::assistant("done", vec![]);
    for (message, run) in [(&m, Some(&r)), (&m_no_id, None)] {
        check(
            "accept",
            &Accept {
                message,
                run,
                now: 1,
            },
        );
    }
    for claim in [Some(Claim::All), Some(Claim::Oldest), None] {
        let start = StartRun {
            id: "r1",
            session_key: "agent:main:main",
            session_id: "s1",
            model: Some("fake/m"),
            claim,
            cached: Arc::new(Vec::new()),
            now: 1,
        };
        check("start", &start);
        let accept = Accept {
            message: &m,
            run: Some(&r),
            now: 1,
        };
        check(
            "accept + start",
            &AcceptStart {
                accept,
                start: &start,
            },
        );
    }
    for deliver in [true, false] {
        let e = end(deliver);
        let last = deliver.then_some(("s1", &answer));
        check(
            "finish",
            &Finish {
                id: "r1",
                end: &e,
                last,
                now: 1,
            },
        );
    }
    let calls = vec![ToolCallRecord {
        id: "c1".into(),
        name: "exec".into(),
        arguments: "{}".into(),
    }];
    for answer in [NewMessage::assistant("", calls), answer.clone()] {
        check(
            "call answer",
            &CallAnswer {
                run_id: "r1",
                session_id: "s1",
                usage: &CallUsage::default(),
                answer: &answer,
                now: 1,
            },
        );
    }
    check(
        "call usage",
        &CallUsed {
            run_id: "r1",
            usage: &CallUsage::default(),
        },
    );
    let message = AnnounceMessage {
        text: "t",
        footer: "f",
    };
    for (message, step_answer) in [(Some(message), Some(("s1", &answer))), (None, None)] {
        let complete = CompleteAnnounce {
            run_id: "r1",
            message,
            archive_now: true,
            step_answer,
            fan_in: Some("from the child"),
            now: 1,
        };
        check("complete announce", &complete);
    }
    let ask = AskForAnnounce {
        run_id: "r1",
        session_id: "s1",
        text: "p",
        now: 1,
    };
    check("announce prompt", &ask);
    for origin in [Some(&o), None] {
        let ensure = Ensure {
            id: "s1",
            key: "agent:main:main",
            agent_id: "main",
            origin,
            now: 1,
        };
        check("ensure session", &ensure);
    }
    let s = NewSubagent::fixture("r2", "agent:main:subagent:x", "s2");
    for timeout_ms in [Some(1_000), None] {
        check(
            "spawn",
            &Spawn {
                spawn: &s,
                timeout_ms,
                now: 1,
            },
        );
    }
}

/// Catches: a `?` inside a quoted SQL string or identifier counted as a placeholder.
#[test]
fn placeholders_skip_quoted_question_marks() {
    assert_eq!(
        placeholders("SELECT ?, '?', \"a?\" WHERE x = ? AND y = '?''?'"),
        2
    );
    assert_eq!(placeholders("SELECT 1"), 0);
}

/// Catches: a script split inside a string, an identifier or a comment, or a statement
/// left out.
#[test]
fn scripts_split_at_semicolons_outside_quotes_and_comments() {
    assert_eq!(
        statements(
            "INSERT INTO t VALUES ('a;b', \"c;d\"); -- not; here\n SELECT ? ;\n\n UPDATE t SET x = 1;"
        ),
        vec![
            "INSERT INTO t VALUES ('a;b', \"c;d\");",
            "-- not; here\n SELECT ? ;",
            "UPDATE t SET x = 1;"
        ]
    );
    assert_eq!(statements("SELECT 1"), vec!["SELECT 1"]);
    assert!(statements(" ; \n").is_empty());
}
