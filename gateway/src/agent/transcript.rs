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
    let close_open = |out: &mut Vec<ChatMessage>, open: &mut Vec<(String, String)>| {
        for (id, name) in open.drain(..) {
            out.push(ChatMessage {
                role: Role::Tool,
                content: MISSING_RESULT.into(),
                tool_calls: vec![],
                tool_call_id: Some(id),
                tool_name: Some(name),
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
                });
            }
            Role::User | Role::Assistant => {
                close_open(&mut out, &mut open);
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
                });
            }
        }
    }
    close_open(&mut out, &mut open);
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
}
