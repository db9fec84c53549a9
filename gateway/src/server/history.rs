//! The web chat's history: what a socket is sent on connect — the newest messages of its
//! chat's session, as the page shows them (user and assistant messages, announces, one
//! collapsed line per tool call). Each assistant reply and announce carries its delivery
//! key, so the page recognises the same message when the outbox delivers it live; a file
//! the agent sent to the web chat (`message` with `path`) is an entry with its download,
//! as the live `file` frame has it.

use switchboard_channels::webchat::files::{link_of, FileLink};
use switchboard_channels::webchat::{HistoryMessage, HistoryRole, ServerFrame};

use crate::store::{MessageRow, Role, Store, StoreError};
use crate::subagents::fan_in;

/// How many stored messages of the session the history covers.
pub const HISTORY_MESSAGES: i64 = 50;

/// The history frame of session `session_key` (empty when it has no session yet).
pub async fn frame(store: &Store, session_key: &str) -> Result<ServerFrame, StoreError> {
    let rows = match store.latest_session(session_key).await? {
        Some(session) => store.transcript_tail(&session.id, HISTORY_MESSAGES).await?,
        None => Vec::new(),
    };
    let mut messages = Vec::new();
    for row in &rows {
        messages.extend(shown(row));
        for key in sent_file_keys(row) {
            if let Some(file) = sent_file(store, &key).await? {
                messages.push(HistoryMessage {
                    role: HistoryRole::Assistant,
                    text: String::new(),
                    key: Some(key),
                    file: Some(file),
                });
            }
        }
    }
    Ok(ServerFrame::History {
        session_key: session_key.to_string(),
        messages,
    })
}

/// The outbox keys of the `message` calls of `row` (each may have sent a file).
fn sent_file_keys(row: &MessageRow) -> Vec<String> {
    let Some(run) = row
        .run_id
        .as_deref()
        .filter(|_| row.role == Role::Assistant)
    else {
        return Vec::new();
    };
    row.tool_calls
        .iter()
        .filter(|c| c.name == "message")
        .map(|c| crate::agent::tools::message::outbox_key(run, &c.id))
        .collect()
}

/// The download of the file the outbox row `key` sent to a web chat, if it sent one
/// (the page shows it as the live `file` frame; past `media.keepDays` its link answers
/// 410). A row of another channel, or a row not readable, shows nothing.
async fn sent_file(store: &Store, key: &str) -> Result<Option<FileLink>, StoreError> {
    let Some((channel, json)) = store.outbox_file(key).await? else {
        return Ok(None);
    };
    if channel != switchboard_channels::webchat::CHANNEL_ID {
        return Ok(None);
    }
    Ok(
        serde_json::from_str::<switchboard_channels::OutboundFile>(&json)
            .ok()
            .and_then(|f| link_of(&f).ok()),
    )
}

/// What the page shows of one stored message.
fn shown(row: &MessageRow) -> Vec<HistoryMessage> {
    let msg = |role, text: &str, key: Option<String>| HistoryMessage {
        role,
        text: text.to_string(),
        key,
        file: None,
    };
    match row.role {
        Role::User => match fan_in::parse(&row.content) {
            Some((run_id, announce)) => vec![msg(
                HistoryRole::Announce,
                announce,
                Some(format!("announce:{run_id}")),
            )],
            None => vec![msg(HistoryRole::User, &row.content, None)],
        },
        Role::Assistant => {
            let mut out = Vec::new();
            if !row.content.trim().is_empty() {
                // The final reply (no tool calls) is the one the outbox delivers.
                let key = match (&row.run_id, row.tool_calls.is_empty()) {
                    (Some(run), true) => Some(format!("run:{run}:reply")),
                    _ => None,
                };
                out.push(msg(HistoryRole::Assistant, &row.content, key));
            }
            out.extend(
                row.tool_calls
                    .iter()
                    .map(|c| msg(HistoryRole::Tool, &c.name, None)),
            );
            out
        }
        Role::Tool => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ToolCallRecord;

    fn row(role: Role, content: &str, run: Option<&str>, calls: &[&str]) -> MessageRow {
        MessageRow {
            seq: 1,
            session_id: "s".into(),
            run_id: run.map(str::to_string),
            role,
            content: content.into(),
            tool_calls: calls
                .iter()
                .map(|n| ToolCallRecord {
                    id: format!("c-{n}"),
                    name: (*n).into(),
                    arguments: "{}".into(),
                })
                .collect(),
            tool_call_id: None,
            tool_name: None,
            created_at: 0,
        }
    }

    /// Catches: tool results shown as chat text, a reply without the key the live
    /// delivery carries (it would show twice), an announce shown as the user's message.
    #[test]
    fn rows_become_what_the_page_shows() {
        let fan_in = fan_in::message("c1", None, "explore", "Status: success\nResult: 3");
        let rows = [
            row(Role::User, "hi", None, &[]),
            row(Role::Assistant, "looking", Some("r1"), &["web_fetch"]),
            row(Role::Tool, "{\"ok\":true}", Some("r1"), &[]),
            row(Role::Assistant, "done", Some("r1"), &[]),
            row(Role::User, &fan_in, None, &[]),
        ];
        let got: Vec<HistoryMessage> = rows.iter().flat_map(shown).collect();
        let m = |role, text: &str, key: Option<&str>| HistoryMessage {
            role,
            text: text.into(),
            key: key.map(str::to_string),
            file: None,
        };
        assert_eq!(
            got,
            vec![
                m(HistoryRole::User, "hi", None),
                m(HistoryRole::Assistant, "looking", None),
                m(HistoryRole::Tool, "web_fetch", None),
                m(HistoryRole::Assistant, "done", Some("run:r1:reply")),
                m(
                    HistoryRole::Announce,
                    "Status: success\nResult: 3",
                    Some("announce:c1")
                ),
            ]
        );
    }
}
