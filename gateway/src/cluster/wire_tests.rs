//! The bus's wire form: every event there and back, the bounds of a payload, and any
//! payload taken or refused without a panic (properties).

#![allow(clippy::unwrap_used)]

use proptest::prelude::*;

use super::*;
use crate::events::{ApprovalRequested, ApprovalResolved, RunEnded, ToolFinished};
use crate::store::{ApprovalStatus, RunStatus};

const ME: &str = "host:1:abc";

fn seq() -> impl FnMut() -> u64 {
    let mut n = 0;
    move || {
        n += 1;
        n
    }
}

/// What the other processes take from `payloads`, in order.
fn received(payloads: &[String]) -> Vec<Received> {
    payloads
        .iter()
        .map(|p| {
            assert!(p.len() <= MAX_PAYLOAD, "{} bytes", p.len());
            let env = decode(p).unwrap();
            assert_eq!(env.from, ME);
            match env.msg {
                Msg::Event(e) => e.into_received(),
                Msg::Stop(s) => panic!("a stop: {s:?}"),
            }
        })
        .collect()
}

fn ended(run_id: Option<&str>, reply: Option<String>, claimed: Vec<i64>) -> RunEnded {
    RunEnded {
        session_key: "agent:main:main".into(),
        run_id: run_id.map(str::to_string),
        status: RunStatus::Succeeded,
        error: Some("an error".into()),
        reply,
        claimed,
    }
}

fn every_variant() -> Vec<Event> {
    let key = || "agent:main:main".to_string();
    vec![
        Event::RunStarted {
            session_key: key(),
            run_id: "r1".into(),
        },
        Event::RunStep {
            session_key: key(),
            run_id: "r1".into(),
            step: 3,
        },
        Event::RunDelta {
            session_key: key(),
            run_id: "r1".into(),
            reset: true,
            text: "Hel\"lo\n\u{1}é".into(),
        },
        Event::RunTool(ToolFinished {
            session_key: key(),
            run_id: "r1".into(),
            tool: "exec".into(),
            call_id: "c1".into(),
            duration_ms: 12,
            error: Some("exit 1".into()),
        }),
        Event::RunEnded(ended(Some("r1"), Some("done".into()), vec![1, 2])),
        Event::RunEnded(RunEnded {
            status: RunStatus::Interrupted,
            error: None,
            reply: None,
            ..ended(None, None, vec![])
        }),
        Event::SubagentSpawned {
            requester: key(),
            child_session_key: "agent:main:subagent:c".into(),
            run_id: "c".into(),
        },
        Event::SubagentAnnounced {
            child_session_key: "agent:main:subagent:c".into(),
            run_id: "c".into(),
        },
        Event::SubagentArchived {
            child_session_key: "agent:main:subagent:c".into(),
        },
        Event::OutboxSent {
            channel: "telegram".into(),
            chat_id: "42".into(),
            key: "run:r1:reply".into(),
        },
        Event::ApprovalRequested(ApprovalRequested {
            session_key: key(),
            id: "a1".into(),
            run_id: "r1".into(),
            tool_call_id: "c1".into(),
            agent_id: "main".into(),
            label: Some("child".into()),
            workdir: "/w".into(),
            command: "rm -rf build".into(),
            executables: vec!["rm".into()],
            expires_at: 1_700_000_000_000,
            channel: "telegram".into(),
            chat_id: "42".into(),
        }),
        Event::ApprovalResolved(ApprovalResolved {
            session_key: key(),
            id: "a1".into(),
            run_id: "r1".into(),
            decision: ApprovalStatus::Denied,
            by: None,
        }),
    ]
}

/// Catches: a field lost or renamed between an event and its wire form (the compiler
/// checks that every variant is converted, not that each field lands where it came from).
#[test]
fn every_event_goes_over_the_wire_and_back_whole() {
    for event in every_variant() {
        let payloads = encode_event(ME, seq(), &event);
        assert_eq!(payloads.len(), 1, "{event:?}");
        let got = received(&payloads);
        assert_eq!(
            got,
            vec![Received {
                event: event.clone(),
                reply_in_store: false,
                waiters_only: false
            }]
        );
    }
}

/// Catches: a `NOTIFY` refused by PostgreSQL (8000 bytes) for a long streamed piece: the
/// text is cut, marked, and the event still goes.
#[test]
fn a_long_delta_is_cut_to_a_preview() {
    let text = "\u{1}x".repeat(20_000);
    let event = Event::RunDelta {
        session_key: "agent:main:main".into(),
        run_id: "r1".into(),
        reset: false,
        text: text.clone(),
    };
    let got = received(&encode_event(ME, seq(), &event));
    assert_eq!(got.len(), 1);
    let Event::RunDelta { text: cut, .. } = &got[0].event else {
        panic!("{got:?}")
    };
    let kept = cut.strip_suffix('…').unwrap();
    assert!(text.starts_with(kept) && !kept.is_empty());
    assert!(serde_json::to_string(cut).unwrap().len() <= PREVIEW + 2);
}

/// Catches: a long reply cut (a `wait: true` caller on another process would get half an
/// answer): it goes by reference, read from the run's row.
#[test]
fn a_long_reply_goes_by_reference() {
    let event = Event::RunEnded(ended(Some("r1"), Some("y".repeat(9_000)), vec![5]));
    let got = received(&encode_event(ME, seq(), &event));
    assert_eq!(
        got,
        vec![Received {
            event: Event::RunEnded(RunEnded {
                reply: None,
                error: None,
                ..ended(Some("r1"), None, vec![5])
            }),
            reply_in_store: true,
            waiters_only: false,
        }]
    );
}

/// Catches: the waiters of a run that took very many messages left waiting on other
/// processes: every claimed id goes, in parts; only the first is the event.
#[test]
fn many_claimed_ids_go_in_parts() {
    let claimed: Vec<i64> = (0..1000).map(|i| i64::MAX - i).collect();
    let event = Event::RunEnded(ended(Some("r1"), Some("ok".into()), claimed.clone()));
    let got = received(&encode_event(ME, seq(), &event));
    assert_eq!(got.len(), 1000_usize.div_ceil(CLAIMED_PER_PART));
    let firsts: Vec<bool> = got.iter().map(|r| r.waiters_only).collect();
    assert_eq!(firsts, [false, true, true, true, true]);
    let mut all = Vec::new();
    for r in &got {
        assert!(r.reply_in_store);
        let Event::RunEnded(e) = &r.event else {
            panic!()
        };
        all.extend(e.claimed.iter().copied());
    }
    assert_eq!(all, claimed);
}

/// Catches: an event whose identifiers alone exceed the limit sent anyway (PostgreSQL
/// refuses the whole statement, losing the batch's other events).
#[test]
fn an_event_that_cannot_fit_is_not_sent() {
    let event = Event::RunStarted {
        session_key: "k".repeat(8_000),
        run_id: "r1".into(),
    };
    assert_eq!(encode_event(ME, seq(), &event), Vec::<String>::new());
    let stop = Stop {
        session_key: "k".repeat(8_000),
        runs: vec![],
    };
    assert_eq!(encode_stop(ME, 1, &stop), None);
}

#[test]
fn a_stop_goes_over_the_wire_and_back() {
    let stop = Stop {
        session_key: "agent:main:main".into(),
        runs: vec!["r1".into(), "r2".into()],
    };
    let env = decode(&encode_stop(ME, 7, &stop).unwrap()).unwrap();
    assert_eq!(
        env,
        Envelope {
            v: VERSION,
            from: ME.into(),
            seq: 7,
            msg: Msg::Stop(stop)
        }
    );
}

/// Catches: two identical events of one batch folded into one by PostgreSQL (it delivers
/// one of several identical payloads of a transaction): each payload has its own number.
#[test]
fn identical_events_make_distinct_payloads() {
    let event = every_variant().remove(0);
    let mut n = seq();
    let a = encode_event(ME, &mut n, &event);
    let b = encode_event(ME, &mut n, &event);
    assert_ne!(a, b);
}

/// Catches: the wire form changed without its version (a process of the other build would
/// misread it): the bytes of one envelope, the event in the JSON clients read.
#[test]
fn the_wire_form_is_pinned() {
    let event = every_variant().remove(3);
    assert_eq!(
        encode_event(ME, seq(), &event),
        vec![
            r#"{"v":2,"from":"host:1:abc","seq":1,"msg":{"event":{"event":{"type":"run.tool","sessionKey":"agent:main:main","runId":"r1","tool":"exec","callId":"c1","durationMs":12,"error":"exit 1","ok":false}}}}"#
        ]
    );
    // The whole event was tried first (seq 1) and did not fit.
    let parts = encode_event(
        ME,
        seq(),
        &Event::RunEnded(ended(Some("r1"), Some("y".repeat(9_000)), vec![5])),
    );
    assert_eq!(
        parts,
        vec![
            r#"{"v":2,"from":"host:1:abc","seq":2,"msg":{"event":{"event":{"type":"run.ended","sessionKey":"agent:main:main","runId":"r1","status":"succeeded","error":null,"reply":null,"claimed":[5]},"reply_in_store":true}}}"#
        ]
    );
}

#[test]
fn foreign_payloads_are_refused_with_a_reason() {
    for bad in [
        "",
        "NOTIFY",
        "{}",
        r#"{"v":3,"from":"x","seq":1,"msg":{"stop":{"session_key":"k","runs":[]}}}"#,
        // Version 1's form of an event.
        r#"{"v":1,"from":"x","seq":1,"msg":{"event":{"run_started":{"session_key":"k","run_id":"r"}}}}"#,
        r#"{"v":2,"from":"x","seq":1,"msg":{"event":{"event":{"type":"run.ended","sessionKey":"k","runId":null,"status":"weird","error":null,"reply":null,"claimed":[]}}}}"#,
        r#"{"v":2,"from":"x","seq":1,"msg":{"event":{"event":{"type":"run.exploded","sessionKey":"k"}}}}"#,
        r#"{"v":2,"from":"x","seq":1,"msg":{"event":{"event":{"type":"approval.resolved","sessionKey":"k","id":"a","runId":"r","decision":"maybe","by":null}}}}"#,
        r#"{"v":2,"from":"x","seq":1,"msg":{"event":{"event":{"type":"run.step","sessionKey":"k","runId":"r","step":-1}}}}"#,
        r#"{"v":2,"from":"x","seq":1,"msg":{"event":{"event":{"type":"run.started","sessionKey":"k","runId":"r"},"extra":1}}}"#,
    ] {
        assert!(decode(bad).is_err(), "{bad}");
    }
    assert!(matches!(
        decode(&"x".repeat(MAX_PAYLOAD + 1)),
        Err(WireError::TooLong(_))
    ));
    let deep = format!("{}{}", "[".repeat(3_000), "]".repeat(3_000));
    assert!(matches!(decode(&deep), Err(WireError::Json(_))));
}

fn text(max: usize) -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(any::<char>(), 0..16).prop_map(String::from_iter),
        prop::collection::vec(any::<char>(), 0..max).prop_map(String::from_iter),
    ]
}

fn event() -> impl Strategy<Value = Event> {
    let ids = || (text(600), text(600));
    prop_oneof![
        (ids(), any::<bool>(), text(12_000)).prop_map(|((k, r), reset, text)| {
            Event::RunDelta {
                session_key: k,
                run_id: r,
                reset,
                text,
            }
        }),
        (
            ids(),
            prop::option::of(text(12_000)),
            prop::option::of(text(400)),
            prop::collection::vec(any::<i64>(), 0..900)
        )
            .prop_map(|((k, r), reply, run_id, claimed)| {
                Event::RunEnded(RunEnded {
                    session_key: k,
                    run_id: run_id.or(Some(r)),
                    status: RunStatus::Failed,
                    error: reply.clone(),
                    reply,
                    claimed,
                })
            }),
        (ids(), text(9_000), prop::collection::vec(text(300), 0..40)).prop_map(
            |((k, r), command, executables)| {
                Event::ApprovalRequested(ApprovalRequested {
                    session_key: k,
                    id: "a".into(),
                    run_id: r,
                    tool_call_id: "c".into(),
                    agent_id: "main".into(),
                    label: Some(command.clone()),
                    workdir: command.clone(),
                    command,
                    executables,
                    expires_at: 0,
                    channel: "telegram".into(),
                    chat_id: "42".into(),
                })
            }
        ),
    ]
}

/// The identity of an event: what must survive any shrinking.
fn identity(e: &Event) -> (String, Option<String>) {
    match e {
        Event::RunDelta {
            session_key,
            run_id,
            ..
        } => (session_key.clone(), Some(run_id.clone())),
        Event::RunEnded(e) => (e.session_key.clone(), e.run_id.clone()),
        Event::ApprovalRequested(a) => (a.session_key.clone(), Some(a.run_id.clone())),
        other => panic!("{other:?}"),
    }
}

proptest! {
    #![proptest_config(crate::proptest_cases::config())]

    /// Any string from another process (or anyone who may `NOTIFY` on the database) is
    /// an envelope or an error, never a panic.
    #[test]
    fn any_payload_is_taken_or_refused_never_a_panic(bytes in prop::collection::vec(any::<u8>(), 0..9_000)) {
        let payload = String::from_utf8_lossy(&bytes);
        let _ = decode(&payload);
    }

    /// The same for payloads that are almost right: a valid one with bytes changed.
    #[test]
    fn a_mangled_payload_is_taken_or_refused_never_a_panic(
        at in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)
    ) {
        let mut bytes = encode_event(ME, seq(), &every_variant()[10]).remove(0).into_bytes();
        for (i, b) in at {
            let i = i.index(bytes.len());
            bytes[i] = b;
        }
        let _ = decode(&String::from_utf8_lossy(&bytes));
    }

    /// Every payload fits PostgreSQL's limit; what is sent keeps the event's identity,
    /// and an event sent whole comes back equal.
    #[test]
    fn every_payload_fits_and_keeps_the_events_identity(event in event()) {
        let payloads = encode_event(ME, seq(), &event);
        let whole = serde_json::to_string(&event).unwrap().len() < 7_900;
        let small_ids = serde_json::to_string(&identity(&event)).unwrap().len() < 1_000;
        prop_assert!(!(whole || small_ids) || !payloads.is_empty());
        for r in received(&payloads) {
            prop_assert_eq!(identity(&r.event), identity(&event));
            if payloads.len() == 1 && !r.reply_in_store && whole {
                prop_assert_eq!(&r.event, &event);
            }
        }
    }

    /// Catches: any event of any variant changed on its way to another process (a field
    /// lost, renamed or read as another): encode → decode gives the event back, whole.
    #[test]
    fn any_event_goes_over_the_wire_and_back(event in crate::events::shape_tests::any_event()) {
        let payloads = encode_event(ME, seq(), &event);
        prop_assert_eq!(
            received(&payloads),
            vec![Received { event, reply_in_store: false, waiters_only: false }]
        );
    }
}
