//! Stopping children and finding them by `#index` or run-id prefix.

use std::sync::Arc;

use crate::queue;
use crate::runtime::{CancelReason, Runtime};
use crate::store::{RunEnd, RunStatus, StoreError, SubagentRow};

/// Stop one child: cancel its running run, or end its queued run at once. Returns whether
/// anything was stopped. `note` ends up in the announce's Notes.
pub async fn stop_child(
    rt: &Arc<Runtime>,
    row: &SubagentRow,
    note: &str,
) -> Result<bool, StoreError> {
    if row.outcome.is_some() {
        return Ok(false);
    }
    rt.store.set_stop_note(&row.run_id, note).await?;
    if let Some(active) = rt.active_run(&row.child_session_key) {
        active.cancel(CancelReason::User);
        return Ok(true);
    }
    let removed = rt
        .lanes
        .get(queue::SUBAGENT)
        .remove_queued(&row.child_session_key);
    if removed.iter().any(|id| id == &row.run_id) {
        let end = RunEnd {
            archive_after_ms: archive_after_ms(rt),
            ..RunEnd::bare(RunStatus::Cancelled, Some(note.to_string()))
        };
        if rt.store.finish_run(&row.run_id, &end).await?.announce {
            super::announce::schedule(rt, &row.run_id);
        }
        return Ok(true);
    }
    Ok(false)
}

/// Stop every active child spawned from `requester`; returns how many were stopped.
pub async fn stop_children_of(
    rt: &Arc<Runtime>,
    requester: &str,
    note: &str,
) -> Result<usize, StoreError> {
    let mut n = 0;
    for row in rt.store.subagents_of(requester, 10_000).await? {
        if stop_child(rt, &row, note).await? {
            n += 1;
        }
    }
    Ok(n)
}

/// `archiveAfterMinutes` in force, as milliseconds (None = never).
pub fn archive_after_ms(rt: &Runtime) -> Option<i64> {
    let minutes = rt.config().agents.defaults.subagents.archive_after_minutes;
    (minutes > 0).then(|| minutes.saturating_mul(60_000) as i64)
}

/// How a `/subagents` target failed to resolve: the one-line answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error("No sub-agent #{0}: this chat has {1}.")]
    OutOfRange(usize, usize),
    #[error("No sub-agent matches `{0}`.")]
    NoMatch(String),
    #[error("`{0}` is ambiguous: it matches {1} runs; use more characters of the run id.")]
    Ambiguous(String, usize),
}

/// Resolve `#3` / `3` (1-based, newest first, as `/subagents list` numbers them) or a
/// run-id prefix among `rows` (newest first).
pub fn resolve<'a>(rows: &'a [SubagentRow], target: &str) -> Result<&'a SubagentRow, TargetError> {
    let t = target.trim();
    let digits = t.strip_prefix('#').unwrap_or(t);
    if !digits.is_empty() && digits.len() <= 4 && digits.chars().all(|c| c.is_ascii_digit()) {
        let n: usize = digits.parse().unwrap_or(0);
        return rows
            .get(n.wrapping_sub(1))
            .ok_or(TargetError::OutOfRange(n, rows.len()));
    }
    let matches: Vec<&SubagentRow> = rows.iter().filter(|r| r.run_id.starts_with(t)).collect();
    match matches.as_slice() {
        [one] => Ok(one),
        [] => Err(TargetError::NoMatch(t.to_string())),
        many => Err(TargetError::Ambiguous(t.to_string(), many.len())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str) -> SubagentRow {
        SubagentRow {
            run_id: id.into(),
            child_session_key: format!("agent:main:subagent:{id}"),
            requester_session_key: "agent:main:main".into(),
            requester_run_id: None,
            requester_origin: None,
            task: "t".into(),
            label: None,
            agent_id: "main".into(),
            model: None,
            thinking: None,
            cleanup: "keep".into(),
            run_timeout_seconds: 0,
            created_at: 0,
            ended_at: None,
            outcome: None,
            error: None,
            stop_note: None,
            announce_state: "none".into(),
            announce_attempts: 0,
            archive_at: None,
            archived_at: None,
            status: "running".into(),
            started_at: None,
            input_tokens: 0,
            output_tokens: 0,
            cost_usd: None,
            session_id: "s".into(),
        }
    }

    #[test]
    fn targets_resolve_by_index_and_unique_prefix() {
        let rows = vec![row("abc123"), row("abd456"), row("ff0000")];
        assert_eq!(
            resolve(&rows, "#2").map(|r| r.run_id.as_str()),
            Ok("abd456")
        );
        assert_eq!(resolve(&rows, "3").map(|r| r.run_id.as_str()), Ok("ff0000"));
        assert_eq!(
            resolve(&rows, "abc").map(|r| r.run_id.as_str()),
            Ok("abc123")
        );
        assert_eq!(
            resolve(&rows, "ab").err(),
            Some(TargetError::Ambiguous("ab".into(), 2))
        );
        assert_eq!(
            resolve(&rows, "#9").err(),
            Some(TargetError::OutOfRange(9, 3))
        );
        assert_eq!(
            resolve(&rows, "#0").err(),
            Some(TargetError::OutOfRange(0, 3))
        );
        assert_eq!(
            resolve(&rows, "zz").err(),
            Some(TargetError::NoMatch("zz".into()))
        );
        assert_eq!(
            TargetError::Ambiguous("ab".into(), 2).to_string(),
            "`ab` is ambiguous: it matches 2 runs; use more characters of the run id."
        );
    }
}
