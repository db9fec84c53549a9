//! Golden JSON of the views: the shapes API and CLI clients read, whatever the store's
//! columns are called.

use switchboard_channels::ChatKind;

use super::*;
use crate::store::{Role, RunStatus};

/// Catches: a field of `GET /api/runs/{id}` renamed or dropped, a status spelled otherwise
/// (served through a `Value`: keys in alphabetical order).
#[test]
fn a_run_as_the_api_shows_it() {
    let run = RunRow {
        id: "r1".into(),
        session_key: "agent:main:main".into(),
        session_id: "s1".into(),
        agent_id: "main".into(),
        lane: "main".into(),
        claim_all: false,
        status: RunStatus::Succeeded,
        origin: Some(Origin::webchat("w1", ChatKind::Direct)),
        model: Some("openai/gpt-x".into()),
        error: None,
        steps: 2,
        input_tokens: 10,
        output_tokens: 5,
        cost_usd: Some(0.5),
        reply: Some("hi".into()),
        created_at: 1,
        started_at: Some(2),
        ended_at: Some(3),
        timeout_ms: None,
    };
    let json = serde_json::to_value(RunView::from(run)).unwrap_or_default();
    assert_eq!(
        json.to_string(),
        r#"{"agentId":"main","claimAll":false,"costUsd":0.5,"createdAt":1,"endedAt":3,"error":null,"id":"r1","inputTokens":10,"lane":"main","model":"openai/gpt-x","origin":{"channel":"webchat","chatId":"w1","kind":"direct"},"outputTokens":5,"reply":"hi","sessionId":"s1","sessionKey":"agent:main:main","startedAt":2,"status":"succeeded","steps":2,"timeoutMs":null}"#
    );
}

/// Catches: a transcript line's fields reordered, or absent ones written as `null`.
#[test]
fn transcript_lines_leave_out_what_a_message_does_not_have() {
    let call = ToolCallRecord {
        id: "call_1".into(),
        name: "read".into(),
        arguments: r#"{"path":"a"}"#.into(),
    };
    let assistant = MessageRow {
        seq: 3,
        session_id: "s1".into(),
        run_id: Some("r1".into()),
        role: Role::Assistant,
        content: String::new(),
        tool_calls: vec![call],
        tool_call_id: None,
        tool_name: None,
        created_at: 7,
    };
    let user = MessageRow {
        seq: 1,
        session_id: "s1".into(),
        run_id: None,
        role: Role::User,
        content: "hello".into(),
        tool_calls: vec![],
        tool_call_id: None,
        tool_name: None,
        created_at: 5,
    };
    let tool = MessageRow {
        seq: 4,
        session_id: "s1".into(),
        run_id: Some("r1".into()),
        role: Role::Tool,
        content: "text".into(),
        tool_calls: vec![],
        tool_call_id: Some("call_1".into()),
        tool_name: Some("read".into()),
        created_at: 8,
    };
    let line = |m: &MessageRow| serde_json::to_string(&MessageView::from(m)).unwrap_or_default();
    assert_eq!(
        line(&user),
        r#"{"seq":1,"sessionId":"s1","role":"user","content":"hello","createdAt":5}"#
    );
    assert_eq!(
        line(&assistant),
        r#"{"seq":3,"sessionId":"s1","runId":"r1","role":"assistant","content":"","toolCalls":[{"id":"call_1","name":"read","arguments":"{\"path\":\"a\"}"}],"createdAt":7}"#
    );
    assert_eq!(
        line(&tool),
        r#"{"seq":4,"sessionId":"s1","runId":"r1","role":"tool","content":"text","toolCallId":"call_1","toolName":"read","createdAt":8}"#
    );
}

/// Catches: `switchboard pairing approve --json` printing another shape.
#[test]
fn a_pairing_as_the_cli_prints_it() {
    let p = PairingRow {
        channel: "telegram".into(),
        sender_id: "42".into(),
        sender_name: None,
        code: "ABCD1234".into(),
        status: "approved".into(),
        created_at: 1,
        approved_at: Some(2),
    };
    assert_eq!(
        serde_json::to_string(&PairingView::from(&p)).unwrap_or_default(),
        r#"{"channel":"telegram","senderId":"42","senderName":null,"code":"ABCD1234","status":"approved","createdAt":1,"approvedAt":2}"#
    );
}
