//! Exec approval requests: one per tool call, answered only from their chat, and the
//! executables allowed for good.

use super::*;

fn new<'a>(origin: &'a Origin, exes: &'a [String], call: &'a str, id: &'a str) -> NewApproval<'a> {
    NewApproval {
        id,
        run_id: "r1",
        tool_call_id: call,
        session_key: "agent:main:main",
        agent_id: "main",
        label: None,
        origin,
        workdir: "/w",
        command: "rm x",
        executables: exes,
        expires_at: now_ms() + 60_000,
    }
}

/// A request is found again by run + call id (a resumed run does not ask twice), only
/// its own chat can answer it, and allow-always stores its executables.
/// Catches: a second request per re-executed call; `/approve` from another chat.
pub(super) async fn requests_are_idempotent_per_call_and_answered_only_from_their_chat(db: Db) {
    let (_db, store) = file_store(db).await;
    let origin = Origin::webchat("main", ChatKind::Direct);
    let exes = vec!["/usr/bin/rm".to_string()];
    let (a, created) = store
        .request_approval(&new(&origin, &exes, "c1", "aaaa"))
        .await
        .unwrap();
    assert!(created);
    let (again, created) = store
        .request_approval(&new(&origin, &exes, "c1", "bbbb"))
        .await
        .unwrap();
    assert!(!created);
    assert_eq!(again.id, "aaaa");
    assert_eq!(a, again);

    let other = store
        .answer_approval("aaaa", "webchat", "other", ApprovalStatus::AllowAlways, "x")
        .await
        .unwrap();
    assert_eq!(other, None, "another chat changes nothing");
    assert_eq!(
        store.approval("aaaa").await.unwrap().unwrap().status,
        ApprovalStatus::Pending
    );
    let done = store
        .answer_approval("aaaa", "webchat", "main", ApprovalStatus::AllowAlways, "x")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(done.status, ApprovalStatus::AllowAlways);
    assert_eq!(store.exec_allowed("main").await.unwrap(), exes);
    assert!(
        store
            .answer_approval("aaaa", "webchat", "main", ApprovalStatus::Denied, "x")
            .await
            .unwrap()
            .is_none(),
        "answered once"
    );
    assert_eq!(
        store
            .revoke_exec_allowed("/usr/bin/rm", None)
            .await
            .unwrap(),
        1
    );
    assert!(store.exec_allowed("main").await.unwrap().is_empty());

    let (b, _) = store
        .request_approval(&new(&origin, &exes, "c2", "cccc"))
        .await
        .unwrap();
    assert!(store
        .close_approval(&b.id, ApprovalStatus::Cancelled)
        .await
        .unwrap());
    assert!(!store
        .close_approval(&b.id, ApprovalStatus::Expired)
        .await
        .unwrap());
    assert_eq!(store.approvals_of_run("r1").await.unwrap().len(), 2);
    assert!(store.pending_approvals().await.unwrap().is_empty());
}
