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

/// Catches: `GET /api/sessions` answering another shape than the one it always had (the
/// reference is the answer as it was written before the view).
#[test]
fn a_session_as_the_api_lists_it() {
    let s = crate::store::SessionRow {
        id: "s1".into(),
        key: "agent:main:main".into(),
        agent_id: "main".into(),
        origin: Some(Origin::webchat("w1", ChatKind::Group)),
        status: crate::store::SessionStatus::Active,
        created_at: 1,
        updated_at: 2,
        archived_at: None,
    };
    let view = serde_json::to_value(SessionView::new(&s, Some("r1".into()))).unwrap_or_default();
    let before = serde_json::json!({
        "sessionKey": s.key,
        "sessionId": s.id,
        "agentId": s.agent_id,
        "status": "active",
        "origin": {"channel": "webchat", "chatId": "w1", "kind": "group"},
        "createdAt": 1,
        "updatedAt": 2,
        "archivedAt": null,
        "running": "r1",
    });
    assert_eq!(view, before);
}

/// Catches: `/api/cron` answering another shape than the one it always had.
#[test]
fn a_job_as_the_api_shows_it() {
    let spec: CronJobConfig = serde_json::from_value(serde_json::json!(
        {"id": "daily", "schedule": {"every": "1h"}, "message": "report"}
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    let j = CronJobRow {
        id: "daily".into(),
        source: crate::store::JobSource::Tool,
        spec: spec.clone(),
        enabled: true,
        next_run_at: Some(10),
        last_run_at: None,
        last_inbox_id: Some(4),
        runs: 3,
        skipped: 1,
    };
    let view = serde_json::to_value(CronJobView::from(&j)).unwrap_or_default();
    let before = serde_json::json!({
        "id": "daily",
        "source": "tool",
        "job": spec,
        "enabled": true,
        "nextRunAt": 10,
        "lastRunAt": null,
        "runs": 3,
        "skipped": 1,
        "summary": crate::cron::jobs::describe(&j),
    });
    assert_eq!(view, before);
}
