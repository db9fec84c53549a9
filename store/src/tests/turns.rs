//! A turn's writes: accepting a message (and its run), starting a run, ensuring a session,
//! ending a run with its reply, a spawn, a child's end and an announce: what each does or
//! skips, on each engine.

use futures::future::join_all;

use super::*;

pub(super) async fn accept_message_queues_the_message_and_its_run_once_per_platform_id(db: Db) {
    let (_d, store, o, s) = chat_store(db).await;
    let key = KEY;
    let new = run("r1", key, &s.id, &o);
    let (inbox_id, row) = store
        .accept_message(&inbound(key, &o, "hello", Some("m-1")), Some(&new))
        .await
        .unwrap()
        .expect("a new id is taken");
    assert!(inbox_id > 0);
    assert_eq!(row.expect("the run's row").status, RunStatus::Queued);
    assert_eq!(
        store.get_run("r1").await.unwrap().unwrap().status,
        RunStatus::Queued
    );

    // The same platform id again: nothing stored, not even its run.
    let again = run("r2", key, &s.id, &o);
    assert_eq!(
        store
            .accept_message(&inbound(key, &o, "hello", Some("m-1")), Some(&again))
            .await
            .unwrap(),
        None
    );
    assert_eq!(store.inbox_len(key).await.unwrap(), 1);
    assert!(store.get_run("r2").await.unwrap().is_none());

    // Without a platform id there is no dedupe; without a run, none is stored.
    let (second, row) = store
        .accept_message(&inbound(key, &o, "hello", None), None)
        .await
        .unwrap()
        .unwrap();
    assert!(second > inbox_id);
    assert!(row.is_none());
    assert_eq!(store.inbox_len(key).await.unwrap(), 2);
}

pub(super) async fn start_run_claims_and_reads_the_transcript_only_for_a_run_still_waiting(db: Db) {
    let (_d, store, o, s) = chat_store(db).await;
    let key = KEY;
    for text in ["one", "two"] {
        store
            .accept_message(&inbound(key, &o, text, None), None)
            .await
            .unwrap();
    }
    store.create_run(&run("r1", key, &s.id, &o)).await.unwrap();
    let started = store
        .start_run("r1", key, &s.id, Some("m/x"), Some(Claim::Oldest))
        .await
        .unwrap()
        .expect("queued, so it starts");
    let texts: Vec<_> = started.claimed.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(texts, ["one"]);
    assert_eq!(started.transcript.len(), 1);
    assert_eq!(started.transcript[0].content, "one");
    assert_eq!(store.inbox_len(key).await.unwrap(), 1);

    // Resuming (no claim) takes nothing more but still reads the transcript.
    let resumed = store
        .start_run("r1", key, &s.id, None, None)
        .await
        .unwrap()
        .unwrap();
    assert!(resumed.claimed.is_empty());
    assert_eq!(resumed.transcript.len(), 1);

    // A run stopped while it waited neither starts nor claims.
    store.create_run(&run("r2", key, &s.id, &o)).await.unwrap();
    store.cancel_queued_run("r2").await.unwrap();
    assert_eq!(
        store
            .start_run("r2", key, &s.id, None, Some(Claim::All))
            .await
            .unwrap(),
        None
    );
    assert_eq!(store.inbox_len(key).await.unwrap(), 1);
    assert_eq!(
        store.get_run("r2").await.unwrap().unwrap().status,
        RunStatus::Cancelled
    );
}

pub(super) async fn accept_and_start_commits_message_run_and_start_together_once(db: Db) {
    let (_d, store, o, s) = chat_store(db).await;
    let key = KEY;
    let msg = |text, id| inbound(key, &o, text, id);
    // A message that waited already is claimed with the new one, oldest first.
    store
        .accept_message(&msg("earlier", None), None)
        .await
        .unwrap();
    let (inbox_id, row, started) = store
        .accept_and_start(
            &msg("hello", Some("m-1")),
            &run("r1", key, &s.id, &o),
            Some("p/m"),
        )
        .await
        .unwrap()
        .expect("a new message");
    assert_eq!(row.status, RunStatus::Running);
    assert_eq!(row.model.as_deref(), Some("p/m"));
    let texts: Vec<_> = started.claimed.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(texts, ["earlier", "hello"]);
    assert_eq!(started.claimed[1].id, inbox_id);
    let transcript: Vec<_> = started
        .transcript
        .iter()
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(transcript, ["earlier", "hello"]);
    assert_eq!(store.inbox_len(key).await.unwrap(), 0);
    let stored = store.get_run("r1").await.unwrap().unwrap();
    assert_eq!(
        (
            stored.status,
            stored.model.as_deref(),
            stored.started_at.is_some()
        ),
        (RunStatus::Running, Some("p/m"), true)
    );

    // The same platform message again: nothing stored, no run.
    assert_eq!(
        store
            .accept_and_start(&msg("hello", Some("m-1")), &run("r2", key, &s.id, &o), None)
            .await
            .unwrap(),
        None
    );
    assert_eq!(store.get_run("r2").await.unwrap(), None);
    assert_eq!(store.inbox_len(key).await.unwrap(), 0);
}

pub(super) async fn a_start_reads_what_was_added_since_the_cached_transcript(db: Db) {
    let (_d, store, o, s) = chat_store(db).await;
    let key = KEY;
    let msg = |text| inbound(key, &o, text, None);
    let end = RunEnd::bare(RunStatus::Succeeded, None);
    for (i, text) in ["one", "two", "three"].into_iter().enumerate() {
        let id = format!("r{i}");
        let (_, _, started) = store
            .accept_and_start(&msg(text), &run(&id, key, &s.id, &o), None)
            .await
            .unwrap()
            .unwrap();
        // Whatever the start got from the cache and the database is the whole transcript.
        assert_eq!(started.transcript, store.transcript(&s.id).await.unwrap());
        // Rows added by any other path are read by the next start.
        store
            .append_message(
                &s.id,
                Some(&id),
                &NewMessage::assistant(format!("tool step {i}"), Vec::new()),
            )
            .await
            .unwrap();
        let answer = NewMessage::assistant(format!("answer {i}"), Vec::new());
        store
            .finish_run_with(&id, &end, Some((&s.id, &answer)))
            .await
            .unwrap();
    }
    // A queued run's start (not the accept path) reads the same way.
    store.accept_message(&msg("four"), None).await.unwrap();
    store.create_run(&run("r9", key, &s.id, &o)).await.unwrap();
    let started = store
        .start_run("r9", key, &s.id, None, Some(Claim::All))
        .await
        .unwrap()
        .unwrap();
    let full = store.transcript(&s.id).await.unwrap();
    assert_eq!(full.len(), 10);
    assert_eq!(started.transcript, full);
}

pub(super) async fn ensure_session_creates_updates_the_origin_and_follows_an_archive(db: Db) {
    let (_d, store) = file_store(db).await;
    let o = origin();
    let key = "agent:main:webchat:direct:chat-1";
    let first = store.ensure_session(key, "main", None).await.unwrap();
    assert_eq!(
        (first.origin.as_ref(), first.status.as_str()),
        (None, "active")
    );
    // Same key: the same session; a new origin is recorded on it.
    let again = store.ensure_session(key, "main", Some(&o)).await.unwrap();
    assert_eq!(again.id, first.id);
    assert_eq!(again.origin.as_ref(), Some(&o));
    assert_eq!(
        store.active_session(key).await.unwrap().unwrap().origin,
        Some(o.clone())
    );
    // Many at once for a new key: one session.
    let all = join_all((0..8).map(|_| store.ensure_session("agent:main:x", "main", None))).await;
    let ids: std::collections::HashSet<_> = all.into_iter().map(|s| s.unwrap().id).collect();
    assert_eq!(ids.len(), 1);
    // After an archive the key gets a new session, never the cached old one.
    store.archive_session(key).await.unwrap().expect("archived");
    let next = store.ensure_session(key, "main", Some(&o)).await.unwrap();
    assert_ne!(next.id, first.id);
    assert_eq!(next.status, SessionStatus::Active);
}

pub(super) async fn finish_run_stores_the_answer_queues_the_reply_and_counts_what_waits(db: Db) {
    let (_d, store, o, s) = chat_store(db).await;
    let key = KEY;
    store.create_run(&run("r1", key, &s.id, &o)).await.unwrap();
    store
        .accept_message(&inbound(key, &o, "later", None), None)
        .await
        .unwrap();
    let end = RunEnd {
        deliver: Some("hi there".into()),
        reply: Some("hi there".into()),
        ..RunEnd::bare(RunStatus::Succeeded, None)
    };
    let answer = NewMessage::assistant("hi there", Vec::new());
    let f = store
        .finish_run_with("r1", &end, Some((&s.id, &answer)))
        .await
        .unwrap();
    assert_eq!(
        f,
        RunFinished {
            waiting: 1,
            announce: false,
            reply_queued: true
        }
    );
    let t = store.transcript(&s.id).await.unwrap();
    assert_eq!(t.last().unwrap().content, "hi there");
    assert_eq!(t.last().unwrap().run_id.as_deref(), Some("r1"));
    let due = store.due_outbox(10).await.unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!(due[0].key, "run:r1:reply");
    assert_eq!(due[0].origin, o);
    assert_eq!(due[0].text, "hi there");

    // A run without an origin delivers nowhere; an unknown run stores nothing.
    let mut bare = run("r2", key, &s.id, &o);
    bare.origin = None;
    store.create_run(&bare).await.unwrap();
    store.finish_run("r2", &end).await.unwrap();
    assert_eq!(store.due_outbox(10).await.unwrap().len(), 1);
    assert!(matches!(
        store
            .finish_run_with("nope", &end, Some((&s.id, &answer)))
            .await,
        Err(StoreError::NotFound(_))
    ));
    assert_eq!(store.transcript(&s.id).await.unwrap().len(), t.len());
}

pub(super) async fn a_spawn_commits_all_of_its_rows_or_none(db: Db) {
    let (_d, store, o) = requester_store(db).await;
    spawned(&store, "c1", &o).await;
    let child = "agent:main:subagent:c1";
    let session = store
        .active_session(child)
        .await
        .unwrap()
        .expect("child session");
    assert_eq!(session.id, "sid-c1");
    assert_eq!(store.inbox_len(child).await.unwrap(), 1);
    let run = store.get_run("c1").await.unwrap().expect("child run");
    assert_eq!(
        (run.status, run.lane.as_str()),
        (RunStatus::Queued, "subagent")
    );
    assert!(store.subagent("c1").await.unwrap().is_some());
    // The same spawn again fails on the registry's key, and leaves nothing behind.
    let again = store
        .create_subagent(
            &spawn("c1", "agent:main:subagent:other", "sid-other", &o),
            None,
        )
        .await;
    assert!(again.is_err());
    assert_eq!(
        store
            .active_session("agent:main:subagent:other")
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store.inbox_len("agent:main:subagent:other").await.unwrap(),
        0
    );
}

/// Shared mode's takeover pass looks only at the pending announces nobody works on: one
/// under another process's live `announce:` lease is left out until that lease expires.
/// Catches: every process trying every pending announce's lease every period.
pub(super) async fn an_announce_under_a_live_lease_is_not_orphaned(db: Db) {
    let (_d, store, o) = requester_store(db).await;
    for id in ["c1", "c2"] {
        spawned(&store, id, &o).await;
        let end = RunEnd::bare(RunStatus::Succeeded, None);
        assert!(store.finish_run(id, &end).await.unwrap().announce);
    }
    let ids = |rows: Vec<SubagentRow>| rows.into_iter().map(|r| r.run_id).collect::<Vec<_>>();
    assert_eq!(ids(store.orphaned_announces().await.unwrap()), ["c1", "c2"]);
    store
        .acquire_lease("announce:c1", "other", std::time::Duration::from_secs(600))
        .await
        .unwrap()
        .unwrap();
    store
        .acquire_lease("announce:c2", "dead", std::time::Duration::from_millis(1))
        .await
        .unwrap()
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    assert_eq!(ids(store.orphaned_announces().await.unwrap()), ["c2"]);
    assert_eq!(ids(store.pending_announces().await.unwrap()), ["c1", "c2"]);
}

pub(super) async fn a_child_run_s_end_is_recorded_and_its_archive_timer_armed_once(db: Db) {
    let (_d, store, o) = requester_store(db).await;
    spawned(&store, "c1", &o).await;
    let end = RunEnd {
        archive_after_ms: Some(60_000),
        ..RunEnd::bare(RunStatus::Succeeded, None)
    };
    assert!(store.finish_run("c1", &end).await.unwrap().announce);
    let (_, kind, target, due) = store.next_timer().await.unwrap().expect("armed");
    assert_eq!(
        (kind.as_str(), target.as_str()),
        ("archive", "agent:main:subagent:c1")
    );
    let row = store.subagent("c1").await.unwrap().unwrap();
    assert_eq!(row.outcome, Some(Outcome::Success));
    assert_eq!(row.announce_state, AnnounceState::Pending);
    // Found by its session too (each of its turns asks), the same row.
    let by_child = store.subagent_by_child(&target).await.unwrap().unwrap();
    assert_eq!(by_child.run_id, row.run_id);

    // Ending it again records nothing and leaves the timer as it was.
    let later = RunEnd {
        archive_after_ms: Some(999_999_999),
        ..RunEnd::bare(RunStatus::Failed, Some("late".into()))
    };
    assert!(matches!(
        store.finish_run("c1", &later).await,
        Err(StoreError::NotFound(_))
    ));
    assert_eq!(
        store.get_run("c1").await.unwrap().unwrap().status,
        RunStatus::Succeeded
    );
    assert_eq!(store.next_timer().await.unwrap().unwrap().3, due);
    let row = store.subagent("c1").await.unwrap().unwrap();
    assert_eq!(row.outcome, Some(Outcome::Success));

    // The timer archives the child's session and stamps its row, once.
    let (timer, _, target, _) = store.next_timer().await.unwrap().unwrap();
    assert!(store.fire_archive_timer(timer, &target).await.unwrap());
    assert!(store
        .subagent("c1")
        .await
        .unwrap()
        .unwrap()
        .archived_at
        .is_some());
    assert!(store.next_timer().await.unwrap().is_none());
}

pub(super) async fn an_announce_completes_once(db: Db) {
    let (_d, store, o) = requester_store(db).await;
    spawned(&store, "c1", &o).await;
    spawned(&store, "c2", &o).await;
    for id in ["c1", "c2"] {
        store
            .finish_run(id, &RunEnd::bare(RunStatus::Succeeded, None))
            .await
            .unwrap();
    }
    let answer = NewMessage::assistant("all done", Vec::new());
    assert!(store
        .complete_announce("c1", Some(ok_announce()), true, Some(("sid-c1", &answer)))
        .await
        .unwrap());
    let row = store.subagent("c1").await.unwrap().unwrap();
    assert_eq!(row.announce_state, AnnounceState::Queued);
    let due = store.due_outbox(10).await.unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!(
        (due[0].key.as_str(), due[0].text.as_str()),
        ("announce:c1", "Status: ok")
    );
    assert_eq!(due[0].origin, o);
    let (_, kind, target, at) = store.next_timer().await.unwrap().expect("archive now");
    assert_eq!(
        (kind.as_str(), target.as_str(), Some(at)),
        ("archive", "agent:main:subagent:c1", row.archive_at)
    );
    let t = store.transcript("sid-c1").await.unwrap();
    assert_eq!(
        t.len(),
        1,
        "the task waits in the inbox; the answer is stored"
    );
    assert_eq!(t[0].content, "all done");

    // Again: nothing moves, nothing is stored twice.
    assert!(!store
        .complete_announce("c1", Some(ok_announce()), true, Some(("sid-c1", &answer)))
        .await
        .unwrap());
    assert_eq!(store.due_outbox(10).await.unwrap().len(), 1);
    assert_eq!(store.transcript("sid-c1").await.unwrap().len(), 1);

    // A skip queues nothing and arms no timer without an archive.
    assert!(store
        .complete_announce("c2", None, false, None)
        .await
        .unwrap());
    assert_eq!(
        store.subagent("c2").await.unwrap().unwrap().announce_state,
        AnnounceState::Skipped
    );
    assert_eq!(store.due_outbox(10).await.unwrap().len(), 1);
    assert_eq!(store.next_timer().await.unwrap().unwrap().2, target);
}
