//! Stopping children and finding them by `#index` or run-id prefix.

use std::sync::Arc;

use crate::agent::dispatch;
use crate::queue;
use crate::runtime::{CancelReason, Runtime};
use crate::store::{RunEnd, RunStatus, StoreError, SubagentRow};

/// Stop one child: cancel its running run, end its queued runs at once (its first run
/// with its announce), and drop the messages that wait for it (its task, if its first run
/// never started; `/subagents send` messages). A follow-up run started by `/subagents
/// send` after the child's first run ended is stopped the same way; in shared mode, so is
/// a run of the child on another process (`cluster::stop`). Returns whether anything was
/// stopped. `note` ends up in the announce's Notes.
pub async fn stop_child(
    rt: &Arc<Runtime>,
    row: &SubagentRow,
    note: &str,
) -> Result<bool, StoreError> {
    let key = &row.child_session_key;
    if row.outcome.is_none() {
        rt.store.set_stop_note(&row.run_id, note).await?;
    }
    let mut stopped = false;
    let mut local = None;
    if let Some(active) = rt.active_run(key) {
        active.cancel(CancelReason::User);
        stopped = true;
        local = Some(active.run_id);
    }
    let mut removed = rt.lanes.get(queue::SUBAGENT).remove_queued(key);
    if let Some(at) = removed.iter().position(|id| id == &row.run_id) {
        removed.remove(at);
        // Its task goes with it (same transaction): no later start may run it.
        let end = RunEnd {
            archive_after_ms: archive_after_ms(rt),
            drop_inbox: true,
            ..RunEnd::bare(RunStatus::Cancelled, Some(note.to_string()))
        };
        match rt.store.finish_run(&row.run_id, &end).await {
            Ok(finished) if finished.announce => super::announce::schedule(rt, &row.run_id),
            Ok(_) | Err(StoreError::NotFound(_)) => {}
            Err(e) => return Err(e),
        }
        stopped = true;
    }
    stopped |= !removed.is_empty();
    // Shared mode: the child's runs on the other processes (none otherwise).
    stopped |= crate::cluster::stop::reach_others(rt, key, local.as_deref()).await? > 0;
    // (A child with nothing running or queued has nothing waiting: no write for it.)
    if stopped {
        dispatch::drop_waiting(rt, key, &removed, note).await?;
    }
    Ok(stopped)
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

/// Most runs one tree stop walks (a tree is bounded by `maxChildren` and `maxSpawnDepth`;
/// this bounds the walk even if the registry holds more).
const MAX_TREE: usize = 10_000;

/// Stop every child spawned from `requester`, and their children, depth first; returns
/// how many were stopped.
pub async fn stop_tree(
    rt: &Arc<Runtime>,
    requester: &str,
    note: &str,
) -> Result<usize, StoreError> {
    let mut n = 0;
    let mut seen = 0;
    let mut queue = vec![requester.to_string()];
    while let Some(key) = queue.pop() {
        for row in rt.store.subagents_of(&key, 10_000).await? {
            seen += 1;
            if seen > MAX_TREE {
                return Ok(n);
            }
            if stop_child(rt, &row, note).await? {
                n += 1;
            }
            queue.push(row.child_session_key);
        }
    }
    Ok(n)
}

/// `archiveAfterMinutes` in force, as milliseconds (None = never).
pub fn archive_after_ms(rt: &Runtime) -> Option<i64> {
    rt.config().agents.defaults.subagents.archive_after_ms()
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
            cleanup: crate::store::Cleanup::Keep,
            run_timeout_seconds: 0,
            task_call_id: None,
            created_at: 0,
            ended_at: None,
            outcome: None,
            error: None,
            stop_note: None,
            announce_state: crate::store::AnnounceState::None,
            announce_attempts: 0,
            archive_at: None,
            archived_at: None,
            status: crate::store::RunStatus::Running,
            started_at: None,
            input_tokens: 0,
            output_tokens: 0,
            cost_usd: None,
            session_id: "s".into(),
        }
    }

    /// A child stopped while its run waited on the lane takes its task with it: nothing is
    /// left for a restart to run. (Catches: the task left in the child's inbox, which the
    /// start-up recovery then ran in a reopened session, under agent `main`, with no
    /// announce.)
    #[tokio::test]
    #[allow(clippy::unwrap_used)]
    async fn a_child_stopped_while_queued_leaves_nothing_for_a_restart_to_run() {
        let (_dir, rt) = crate::runtime::testing::runtime(
            "{agents: {defaults: {subagents: {maxConcurrent: 1}}}}",
        )
        .await;
        let key = "agent:main:subagent:c1";
        let spawn = crate::store::NewSubagent::fixture("c1", key, "sid-c1");
        let run = rt.store.create_subagent(&spawn, None).await.unwrap();
        // The lane's one slot is busy: the child's run waits in the queue.
        let _busy = rt
            .lanes
            .get(queue::SUBAGENT)
            .try_start("agent:main:subagent:other")
            .unwrap();
        dispatch::schedule_row(&rt, run);
        let child = rt.store.subagent("c1").await.unwrap().unwrap();
        assert!(stop_child(&rt, &child, "stopped by /subagents stop")
            .await
            .unwrap());

        let child = rt.store.subagent("c1").await.unwrap().unwrap();
        assert_eq!(
            (child.outcome, child.status),
            (
                Some(crate::store::Outcome::Cancelled),
                crate::store::RunStatus::Cancelled
            )
        );
        assert_eq!(rt.store.inbox_len(key).await.unwrap(), 0);
        // What the next start would find to run: nothing.
        assert_eq!(rt.store.unfinished_runs().await.unwrap(), vec![]);
        assert_eq!(rt.store.sessions_with_inbox().await.unwrap(), vec![]);
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
