//! Sub-agent worktree records: written once, found by the child's session while active,
//! and listed by the start-up sweep when a crash left them unfinished.

use super::*;

fn row(run_id: &str, state: WorktreeState) -> WorktreeRow {
    WorktreeRow {
        run_id: run_id.into(),
        child_session_key: format!("agent:main:subagent:{run_id}"),
        state,
        reason: None,
        repo: Some("/repo".into()),
        path: Some(format!("/state/worktrees/{run_id}")),
        workdir: Some(format!("/state/worktrees/{run_id}/sub")),
        branch: Some(format!("switchboard/x-{run_id}")),
        base: Some("abc".into()),
        note: None,
    }
}

/// Catches: a child not finding its worktree, a finished one still used, a record written
/// twice, or the sweep missing a half-made worktree (or taking a running child's).
pub(super) async fn worktrees_are_found_while_active_and_swept_when_left_over(db: Db) {
    let (_d, store, o) = requester_store(db).await;
    spawned(&store, "c1", &o).await;
    spawned(&store, "c2", &o).await;
    store
        .record_worktree(&row("c1", WorktreeState::Active))
        .await
        .unwrap();
    store
        .record_worktree(&row("c2", WorktreeState::Creating))
        .await
        .unwrap();
    store
        .record_worktree(&row("c3", WorktreeState::Active))
        .await
        .unwrap();
    // Written once: a second record of c1 changes nothing.
    store
        .record_worktree(&row("c1", WorktreeState::Fallback))
        .await
        .unwrap();
    assert_eq!(
        store.worktree("c1").await.unwrap(),
        Some(row("c1", WorktreeState::Active))
    );
    assert_eq!(
        store
            .worktree_workdir("agent:main:subagent:c1")
            .await
            .unwrap()
            .as_deref(),
        Some("/state/worktrees/c1/sub")
    );
    assert_eq!(
        store
            .worktree_workdir("agent:main:subagent:c2")
            .await
            .unwrap(),
        None
    );
    // c1's child is still running (its announce is not made): not an orphan. c3 has no
    // child row at all.
    let mut orphans: Vec<String> = store
        .orphan_worktrees()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.run_id)
        .collect();
    orphans.sort();
    assert_eq!(orphans, vec!["c2", "c3"]);
    store
        .set_worktree_state("c1", WorktreeState::Done, None, Some("kept"))
        .await
        .unwrap();
    let done = store.worktree("c1").await.unwrap().unwrap();
    assert_eq!(
        (done.state, done.note.as_deref()),
        (WorktreeState::Done, Some("kept"))
    );
    assert_eq!(
        store
            .worktree_workdir("agent:main:subagent:c1")
            .await
            .unwrap(),
        None
    );
}
