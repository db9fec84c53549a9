//! What a run reads of its transcript: the newest compaction's summary in place of the
//! messages it stands for, then the messages after it (in `transcript::to_chat`'s form),
//! and where the older part of a transcript may be cut for a compaction.

use std::collections::HashSet;

use super::estimate;
use crate::agent::provider::ChatMessage;
use crate::agent::transcript;
use crate::store::{CompactionRow, MessageRow, Role};

/// How the summary opens where it stands in for the older turns.
pub const SUMMARY_HEAD: &str =
    "[Summary of the earlier conversation, compacted to fit the context window]";

/// The index of the first message `summary` does not stand for.
pub fn first_kept(rows: &[MessageRow], summary: Option<&CompactionRow>) -> usize {
    match summary {
        Some(c) => rows.partition_point(|r| r.seq <= c.through_seq),
        None => 0,
    }
}

/// The summary as the message that opens the request.
pub fn summary_message(summary: &str) -> ChatMessage {
    ChatMessage {
        role: Role::User,
        content: format!("{SUMMARY_HEAD}\n{summary}"),
        tool_calls: vec![],
        tool_call_id: None,
        tool_name: None,
        images: vec![],
    }
}

/// The model messages of `rows` read with `summary`.
pub fn chat(rows: &[MessageRow], summary: Option<&CompactionRow>) -> Vec<ChatMessage> {
    let start = first_kept(rows, summary);
    let rest = transcript::to_chat(&rows[start..]);
    match summary {
        Some(c) => {
            let mut out = Vec::with_capacity(rest.len() + 1);
            out.push(summary_message(&c.summary));
            out.extend(rest);
            out
        }
        None => rest,
    }
}

/// Tokens of a stored message by the rule (as [`estimate::of_message`]).
pub fn row_cost(r: &MessageRow) -> u64 {
    let calls: u64 = r
        .tool_calls
        .iter()
        .map(|c| estimate::of_bytes(c.name.len() + c.arguments.len() + c.id.len()) + 12)
        .sum();
    estimate::of_bytes(r.content.len()) + calls + estimate::PER_MESSAGE
}

/// Where `rows[from..]` may be cut for a compaction: the earliest turn boundary (a user
/// message with no tool call open before it) after which at most `keep` tokens (by the
/// rule) are left; else the last boundary (the current turn is always kept). `None`:
/// nothing before the current turn to summarize.
pub fn cut(rows: &[MessageRow], from: usize, keep: u64) -> Option<usize> {
    let mut open: HashSet<&str> = HashSet::new();
    let mut boundaries = Vec::new();
    for (i, r) in rows.iter().enumerate().skip(from) {
        match r.role {
            Role::User if open.is_empty() && i > from => boundaries.push(i),
            Role::User => {}
            Role::Assistant => {
                // A new assistant message closes what was left open (to_chat gives those
                // calls a missing result), then opens its own calls.
                open.clear();
                open.extend(r.tool_calls.iter().map(|c| c.id.as_str()));
            }
            Role::Tool => {
                if let Some(id) = &r.tool_call_id {
                    open.remove(id.as_str());
                }
            }
        }
    }
    let last = *boundaries.last()?;
    let mut left: u64 = rows[from..].iter().map(row_cost).sum();
    let mut at = from;
    for b in boundaries {
        left -= rows[at..b].iter().map(row_cost).sum::<u64>();
        at = b;
        if left <= keep {
            return Some(b);
        }
    }
    Some(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ToolCallRecord;

    fn row(
        seq: i64,
        role: Role,
        content: &str,
        calls: &[&str],
        answers: Option<&str>,
    ) -> MessageRow {
        MessageRow {
            seq,
            session_id: "s".into(),
            run_id: None,
            role,
            content: content.into(),
            tool_calls: calls
                .iter()
                .map(|id| ToolCallRecord {
                    id: (*id).into(),
                    name: "t".into(),
                    arguments: "{}".into(),
                })
                .collect(),
            tool_call_id: answers.map(str::to_string),
            tool_name: answers.map(|_| "t".to_string()),
            created_at: 0,
        }
    }

    /// Catches: a cut that parts a tool call from its result (a user message stored while
    /// a call was open, as fan-in does, is no boundary), or one that leaves out the
    /// current turn.
    #[test]
    fn cuts_fall_on_turn_boundaries_only() {
        let big = "x".repeat(3500);
        let rows = vec![
            row(1, Role::User, &big, &[], None),
            row(2, Role::Assistant, "", &["c1"], None),
            row(3, Role::User, "announce", &[], None),
            row(4, Role::Tool, &big, &[], Some("c1")),
            row(5, Role::Assistant, "ok", &[], None),
            row(6, Role::User, &big, &[], None),
            row(7, Role::Assistant, "ok", &[], None),
            row(8, Role::User, "now", &[], None),
        ];
        // Keep little: the cut is the last boundary, the current turn.
        assert_eq!(cut(&rows, 0, 10), Some(7));
        // Keep a lot: the earliest boundary (never the fan-in message at index 2).
        assert_eq!(cut(&rows, 0, 100_000), Some(5));
        // Nothing before the current turn.
        assert_eq!(cut(&rows, 7, 10), None);
        let summary = CompactionRow {
            session_id: "s".into(),
            through_seq: 5,
            summary: "so far".into(),
            replaced: 5,
            tokens_before: 0,
            tokens_after: 0,
            created_at: 0,
        };
        let chat = chat(&rows, Some(&summary));
        let got: Vec<(Role, &str)> = chat.iter().map(|m| (m.role, m.content.as_str())).collect();
        assert_eq!(got[0].0, Role::User);
        assert!(got[0].1.starts_with(SUMMARY_HEAD) && got[0].1.ends_with("so far"));
        assert_eq!(got[1..].len(), 3);
        assert_eq!(first_kept(&rows, Some(&summary)), 5);
    }
}
