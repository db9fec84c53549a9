//! Fitting: old tool results trimmed first, then (only past the hard limit) the oldest
//! turns left out whole; a property test over random conversations.

use proptest::prelude::*;

use super::*;
use crate::agent::context::Window;
use crate::config::Config;
use crate::store::ToolCallRecord;

fn msg(role: Role, content: &str) -> ChatMessage {
    ChatMessage {
        role,
        content: content.into(),
        tool_calls: vec![],
        tool_call_id: None,
        tool_name: None,
        images: vec![],
    }
}

fn call(id: &str) -> ChatMessage {
    ChatMessage {
        tool_calls: vec![ToolCallRecord {
            id: id.into(),
            name: "read".into(),
            arguments: "{}".into(),
        }],
        ..msg(Role::Assistant, "")
    }
}

fn result(id: &str, content: &str) -> ChatMessage {
    ChatMessage {
        tool_call_id: Some(id.into()),
        tool_name: Some("read".into()),
        ..msg(Role::Tool, content)
    }
}

fn cost(ms: &[ChatMessage]) -> u64 {
    ms.iter().map(estimate::of_message).sum()
}

/// A conversation of two old turns with big tool results and a current one.
fn conversation() -> Vec<ChatMessage> {
    let big = "r".repeat(7000); // 2000 tokens
    vec![
        msg(Role::User, "first"),
        call("a"),
        result("a", &big),
        msg(Role::Assistant, "done a"),
        msg(Role::User, "second"),
        call("b"),
        result("b", &big),
        msg(Role::Assistant, "done b"),
        msg(Role::User, "third"),
        call("c"),
        result("c", &big),
    ]
}

/// Catches: a request sent whole past the threshold while old tool results could be
/// trimmed, the current turn's result trimmed before old ones, a trimmed result that
/// does not say so, or a turn left out while trimming was enough.
#[test]
fn old_tool_results_are_trimmed_first_and_say_so() {
    let ms = conversation();
    let full = cost(&ms);
    let limits = Limits {
        soft: full - 1000,
        hard: full,
    };
    let f = fit(ms, 0, &Estimator::default(), limits);
    assert_eq!((f.trimmed, f.dropped), (1, 0));
    assert!(f.tokens <= limits.soft, "{} > {}", f.tokens, limits.soft);
    assert!(f.messages[2].content.starts_with("[tool result trimmed"));
    assert!(f.messages[2].content.contains("7000 bytes"));
    // The newer old result and the current turn's are whole.
    assert_eq!(f.messages[6].content.len(), 7000);
    assert_eq!(f.messages[10].content.len(), 7000);
    // Below the soft limit nothing is touched.
    let ms = conversation();
    let f = fit(
        ms.clone(),
        0,
        &Estimator::default(),
        Limits {
            soft: full,
            hard: full,
        },
    );
    assert_eq!(f.messages, ms);
    assert_eq!(f.tokens, full);
}

/// Catches: the current turn's own result trimmed while old ones were enough, a tool
/// result parted from its call when turns are left out, or the request left over the
/// hard limit when leaving out old turns would fit it.
#[test]
fn past_the_hard_limit_old_turns_are_left_out_whole() {
    let ms = conversation();
    // Not even every old result trimmed fits: the oldest turns go, whole.
    let limits = Limits {
        soft: 1500,
        hard: 2100,
    };
    let f = fit(ms, 0, &Estimator::default(), limits);
    assert!(f.tokens <= limits.hard, "{}", f.tokens);
    assert_eq!(f.messages[0].content, "third");
    assert_eq!(f.dropped, 8);
    // The current turn's result, the last one, is never trimmed.
    assert_eq!(f.messages.last().map(|m| m.content.len()), Some(7000));
}

/// Catches: the threshold read against the whole window instead of the room left once
/// the reply's is set aside, or a compaction asked for below it.
#[test]
fn the_threshold_asks_for_a_compaction() {
    let cfg = Config::default();
    let w = Window::new(&cfg, "x/y", 4096, "", &[], None);
    assert_eq!(w.limits().hard, 128_000 - 4096);
    let under = w.fit_messages(vec![msg(Role::User, "hi")]);
    assert!(!w.wants_compaction(&under));
    let big = "u".repeat(3_500 * 100_000 / 1000);
    let over = w.fit_messages(vec![msg(Role::User, &big), msg(Role::User, "now")]);
    assert!(over.tokens > w.limits().soft && over.tokens <= w.limits().hard);
    assert!(w.wants_compaction(&over));
}

/// Catches: a request fitted to the primary's window when a fallback with a smaller one
/// serves (the window and the reply's room not following `serve_with`).
#[test]
fn a_smaller_serving_window_fits_the_request_to_it() {
    let cfg: Config = serde_json::from_value(serde_json::json!({"models": {"providers": {"p": {
        "api": "openai-chat", "baseUrl": "http://127.0.0.1:9/v1",
        "models": [{"id": "big"}, {"id": "small", "contextWindow": 8000}]
    }}}}))
    .expect("config");
    let mut w = Window::new(&cfg, "p/big", 4096, "", &[], None);
    let roomy = w.fit_messages(conversation());
    assert_eq!((roomy.trimmed, roomy.dropped), (0, 0));
    w.serve_with(&cfg, "p/small", 4096);
    assert_eq!(w.limits().hard, 8000 - 4000);
    let fitted = w.fit_messages(conversation());
    assert!(
        fitted.trimmed > 0,
        "old results trimmed for the smaller window"
    );
    assert!(fitted.tokens <= w.limits().hard, "{}", fitted.tokens);
}

/// A random conversation: turns of a user message, then tool rounds (an assistant
/// message with calls, each answered), then maybe a final answer.
fn conversations() -> impl Strategy<Value = Vec<ChatMessage>> {
    let turn = (
        0usize..3000,
        prop::collection::vec(prop::collection::vec(0usize..6000, 1..3), 0..3),
        prop::option::of(0usize..2000),
    );
    prop::collection::vec(turn, 1..8).prop_map(|turns| {
        let mut out = Vec::new();
        let mut n = 0;
        for (user, rounds, answer) in turns {
            out.push(msg(Role::User, &"u".repeat(user)));
            for round in rounds {
                let ids: Vec<String> = round
                    .iter()
                    .map(|_| {
                        n += 1;
                        format!("c{n}")
                    })
                    .collect();
                out.push(ChatMessage {
                    tool_calls: ids
                        .iter()
                        .map(|id| ToolCallRecord {
                            id: id.clone(),
                            name: "t".into(),
                            arguments: "{}".into(),
                        })
                        .collect(),
                    ..msg(Role::Assistant, "")
                });
                for (id, size) in ids.iter().zip(round) {
                    out.push(result(id, &"r".repeat(size)));
                }
            }
            if let Some(a) = answer {
                out.push(msg(Role::Assistant, &"a".repeat(a)));
            }
        }
        out
    })
}

/// Whether every tool result answers a call of the assistant message before it and every
/// call is answered.
fn paired(ms: &[ChatMessage]) -> bool {
    let mut open: Vec<&str> = Vec::new();
    for m in ms {
        match m.role {
            Role::Tool => {
                let Some(id) = m.tool_call_id.as_deref() else {
                    return false;
                };
                let Some(pos) = open.iter().position(|o| *o == id) else {
                    return false;
                };
                open.remove(pos);
            }
            _ => {
                if !open.is_empty() {
                    return false;
                }
                open = m.tool_calls.iter().map(|c| c.id.as_str()).collect();
            }
        }
    }
    open.is_empty()
}

proptest! {
    #![proptest_config(crate::proptest_cases::config())]

    /// Catches: a fitted request over the window when fitting it was possible, an
    /// orphaned tool result (or a call without its result), a request not opening with a
    /// user message, the current turn cut, or an estimate that is not the request's.
    #[test]
    fn fitting_stays_under_the_window_and_never_orphans(
        ms in conversations(),
        fixed in 0u64..500,
        hard in 200u64..20_000,
        soft_share in 0.3f64..1.0,
        scale in 0.5f64..2.0,
    ) {
        let mut est = Estimator::default();
        est.calibrate(1000, (1000.0 * scale) as u64);
        let limits = Limits { soft: (hard as f64 * soft_share) as u64, hard };
        let last_user = ms.iter().rposition(|m| m.role == Role::User).unwrap_or(0);
        let current = ms[last_user..].to_vec();
        let f = fit(ms.clone(), fixed, &est, limits);
        prop_assert!(paired(&f.messages));
        prop_assert_eq!(f.messages.first().map(|m| m.role), Some(Role::User));
        prop_assert_eq!(f.raw, fixed + cost(&f.messages));
        prop_assert_eq!(f.tokens, est.scaled(f.raw));
        // The current turn is always there (its results maybe trimmed, never the last).
        let tail = &f.messages[f.messages.len() - current.len()..];
        prop_assert_eq!(tail.len(), current.len());
        prop_assert_eq!(&tail[tail.len() - 1], &current[current.len() - 1]);
        // Over the window only when even the current turn alone, its results trimmed,
        // does not fit.
        if f.tokens > limits.hard {
            prop_assert_eq!(f.messages.len(), current.len());
        }
    }
}
