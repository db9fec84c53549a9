//! Turning a stored transcript into model messages that always satisfy the tool-call
//! pairing rules (every tool result answers a call; every call gets a result), even
//! after a crash mid-tool or a `/stop`.

use std::collections::HashSet;

use super::provider::ChatMessage;
use crate::store::{MessageRow, Role};

/// Result given to the model for a tool call whose result was never recorded.
pub const MISSING_RESULT: &str =
    "error: no result was recorded for this tool call (the run was interrupted before it finished); call it again if still needed";

pub fn to_chat(rows: &[MessageRow]) -> Vec<ChatMessage> {
    let mut out: Vec<ChatMessage> = Vec::with_capacity(rows.len());
    // Calls of the latest assistant message still waiting for a result.
    let mut open: Vec<(String, String)> = Vec::new();
    let mut answered: HashSet<String> = HashSet::new();
    // User messages stored while calls were open (a child's announce recorded mid-turn,
    // fan-in): given after those calls' results, so the pairing holds and no result is
    // lost.
    let mut deferred: Vec<ChatMessage> = Vec::new();
    let close_open = |out: &mut Vec<ChatMessage>, open: &mut Vec<(String, String)>| {
        for (id, name) in open.drain(..) {
            out.push(ChatMessage {
                role: Role::Tool,
                content: MISSING_RESULT.into(),
                tool_calls: vec![],
                tool_call_id: Some(id),
                tool_name: Some(name),
                images: Vec::new(),
            });
        }
    };
    for m in rows {
        match m.role {
            Role::Tool => {
                let Some(id) = &m.tool_call_id else { continue };
                let Some(pos) = open.iter().position(|(o, _)| o == id) else {
                    continue;
                };
                open.remove(pos);
                answered.insert(id.clone());
                out.push(ChatMessage {
                    role: Role::Tool,
                    content: m.content.clone(),
                    tool_calls: vec![],
                    tool_call_id: Some(id.clone()),
                    tool_name: m.tool_name.clone(),
                    images: Vec::new(),
                });
                if open.is_empty() {
                    out.append(&mut deferred);
                }
            }
            Role::User if !open.is_empty() => deferred.push(ChatMessage {
                role: Role::User,
                content: m.content.clone(),
                tool_calls: vec![],
                tool_call_id: None,
                tool_name: None,
                images: Vec::new(),
            }),
            Role::User | Role::Assistant => {
                close_open(&mut out, &mut open);
                out.append(&mut deferred);
                let calls: Vec<_> = m
                    .tool_calls
                    .iter()
                    .filter(|c| !answered.contains(&c.id))
                    .cloned()
                    .collect();
                open = calls
                    .iter()
                    .map(|c| (c.id.clone(), c.name.clone()))
                    .collect();
                out.push(ChatMessage {
                    role: m.role,
                    content: m.content.clone(),
                    tool_calls: calls,
                    tool_call_id: None,
                    tool_name: None,
                    images: Vec::new(),
                });
            }
        }
    }
    close_open(&mut out, &mut open);
    out.append(&mut deferred);
    out
}

/// Whether the transcript ends in something the model has not answered yet.
pub fn needs_answer(rows: &[MessageRow]) -> bool {
    match rows.last() {
        None => false,
        Some(m) => m.role != Role::Assistant || !m.tool_calls.is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ToolCallRecord;

    fn row(
        role: Role,
        content: &str,
        calls: Vec<ToolCallRecord>,
        call_id: Option<&str>,
    ) -> MessageRow {
        MessageRow {
            seq: 0,
            session_id: "s".into(),
            run_id: None,
            role,
            content: content.into(),
            tool_calls: calls,
            tool_call_id: call_id.map(String::from),
            tool_name: None,
            created_at: 0,
        }
    }

    #[test]
    fn unanswered_calls_get_a_synthetic_result_and_orphans_are_dropped() {
        let call = ToolCallRecord {
            id: "c1".into(),
            name: "t".into(),
            arguments: "{}".into(),
        };
        let rows = vec![
            row(Role::User, "hi", vec![], None),
            row(Role::Tool, "orphan", vec![], Some("zz")),
            row(Role::Assistant, "", vec![call], None),
            row(Role::User, "again", vec![], None),
        ];
        let chat = to_chat(&rows);
        let roles: Vec<Role> = chat.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            vec![Role::User, Role::Assistant, Role::Tool, Role::User]
        );
        assert_eq!(chat[2].content, MISSING_RESULT);
        assert!(needs_answer(&rows));
    }

    /// Catches: a child's announce recorded in the requester's transcript while one of its
    /// tool calls was running (fan-in) taking the place of that call's result (the model
    /// would read "no result was recorded" and lose the real one).
    #[test]
    fn a_user_message_stored_between_calls_and_results_comes_after_the_results() {
        let call = |id: &str| ToolCallRecord {
            id: id.into(),
            name: "t".into(),
            arguments: "{}".into(),
        };
        let rows = vec![
            row(Role::User, "go", vec![], None),
            row(Role::Assistant, "", vec![call("c1"), call("c2")], None),
            row(Role::Tool, "r1", vec![], Some("c1")),
            row(Role::User, "[sub-agent result]", vec![], None),
            row(Role::Tool, "r2", vec![], Some("c2")),
            row(Role::Assistant, "done", vec![], None),
        ];
        let chat = to_chat(&rows);
        let got: Vec<(Role, &str)> = chat.iter().map(|m| (m.role, m.content.as_str())).collect();
        assert_eq!(
            got,
            vec![
                (Role::User, "go"),
                (Role::Assistant, ""),
                (Role::Tool, "r1"),
                (Role::Tool, "r2"),
                (Role::User, "[sub-agent result]"),
                (Role::Assistant, "done"),
            ]
        );
    }
}
