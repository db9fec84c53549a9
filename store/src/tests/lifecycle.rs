//! The run and sub-agent lifecycle in the store: where a reply goes, what a restart keeps
//! of a run, and what a stop drops.

use super::*;

/// A run's reply goes to the chat of the newest message it claimed, never to the HTTP API
/// channel (its callers read the run), and the run's end says whether a reply was queued.
/// (Catches: the reply sent to the chat of the run's first message: in a session shared by
/// several chats, chat B's message answered in A; the outbox worker woken, and the outbox
/// read twice, after every API turn.)
pub(super) async fn a_reply_goes_to_the_chat_of_the_newest_message_the_run_claimed(db: Db) {
    let (_d, store, a, s) = chat_store(db).await;
    let b = Origin::webchat("chat-2", ChatKind::Direct);
    let api = Origin {
        channel: crate::API_CHANNEL.into(),
        ..b.clone()
    };
    let end = RunEnd {
        deliver: Some("answer".into()),
        ..RunEnd::bare(RunStatus::Succeeded, None)
    };
    store
        .accept_message(
            &inbound(KEY, &a, "from a", None),
            Some(&run("r1", KEY, &s.id, &a)),
        )
        .await
        .unwrap();
    store
        .accept_message(&inbound(KEY, &b, "from b", None), None)
        .await
        .unwrap();
    store
        .start_run("r1", KEY, &s.id, None, Some(Claim::All))
        .await
        .unwrap()
        .unwrap();
    assert!(store.finish_run("r1", &end).await.unwrap().reply_queued);
    let due = store.due_outbox(10).await.unwrap();
    assert_eq!(
        due.iter()
            .map(|d| (&d.key[..], &d.origin))
            .collect::<Vec<_>>(),
        [("run:r1:reply", &b)]
    );

    // A run made for chat B whose newest message came from the API: nothing to send.
    store
        .accept_message(
            &inbound(KEY, &b, "b again", None),
            Some(&run("r2", KEY, &s.id, &b)),
        )
        .await
        .unwrap();
    store
        .accept_message(&inbound(KEY, &api, "from the api", None), None)
        .await
        .unwrap();
    store
        .start_run("r2", KEY, &s.id, None, Some(Claim::All))
        .await
        .unwrap()
        .unwrap();
    let finished = store.finish_run("r2", &end).await.unwrap();
    assert!(
        !finished.reply_queued,
        "no reply queued: the outbox worker is not woken"
    );
    assert_eq!(store.due_outbox(10).await.unwrap().len(), 1);
}

/// A run resumed after a restart keeps the time of its first start, and a checkpoint
/// leaves it mid-flight (`running`). (Catches: every start setting `started_at` anew, and
/// the shutdown checkpoint putting the run back to `queued`, which made recovery resume
/// it even with `subagents.onRestart: "interrupt"`.)
pub(super) async fn a_resumed_run_keeps_its_first_start_and_a_checkpoint_keeps_it_running(db: Db) {
    let (_d, store, o, s) = chat_store(db).await;
    store
        .accept_message(
            &inbound(KEY, &o, "hi", None),
            Some(&run("r1", KEY, &s.id, &o)),
        )
        .await
        .unwrap();
    let first = store
        .start_run("r1", KEY, &s.id, None, Some(Claim::All))
        .await
        .unwrap()
        .unwrap();
    let first_start = first.started_at.expect("started");
    store.checkpoint_run("r1", 3, 10, 20).await.unwrap();
    let row = store.get_run("r1").await.unwrap().unwrap();
    assert_eq!(
        (row.status, row.steps, row.input_tokens, row.output_tokens),
        (RunStatus::Running, 3, 10, 20)
    );
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let resumed = store
        .start_run("r1", KEY, &s.id, None, None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(resumed.started_at, Some(first_start));
    assert_eq!(
        store.get_run("r1").await.unwrap().unwrap().started_at,
        Some(first_start)
    );
}

/// Dropping what waits in a session cancels the runs taken off its lane and deletes its
/// waiting messages, in one transaction; it reports the messages' ids. (Catches: `/new`
/// dropping queued runs from the lane but leaving them `queued` in the store, so they came
/// back at the next start.)
pub(super) async fn drop_waiting_cancels_the_runs_and_deletes_the_messages(db: Db) {
    let (_d, store, o, s) = chat_store(db).await;
    let (first, _) = store
        .accept_message(
            &inbound(KEY, &o, "one", None),
            Some(&run("r1", KEY, &s.id, &o)),
        )
        .await
        .unwrap()
        .unwrap();
    let (second, _) = store
        .accept_message(&inbound(KEY, &o, "two", None), None)
        .await
        .unwrap()
        .unwrap();
    let dropped = store
        .drop_waiting(KEY, &["r1".to_string()], "dropped by /new")
        .await
        .unwrap();
    assert_eq!(dropped, [first, second]);
    let r1 = store.get_run("r1").await.unwrap().unwrap();
    assert_eq!(
        (r1.status, r1.error.as_deref()),
        (RunStatus::Cancelled, Some("dropped by /new"))
    );
    assert_eq!(store.inbox_len(KEY).await.unwrap(), 0);
    assert_eq!(store.unfinished_runs().await.unwrap(), vec![]);
}

/// A child's first run ended before it started (stopped while queued) takes the child's
/// waiting messages, its task among them, with it in the same transaction: a crash right
/// after cannot leave the task for the next start to run. (Catches: the end leaving the
/// task in the inbox.)
pub(super) async fn a_run_ended_with_drop_inbox_takes_the_waiting_messages_with_it(db: Db) {
    let (_d, store, o) = requester_store(db).await;
    spawned(&store, "c1", &o).await;
    let child = "agent:main:subagent:c1";
    assert_eq!(store.inbox_len(child).await.unwrap(), 1, "the task waits");
    let end = RunEnd {
        drop_inbox: true,
        ..RunEnd::bare(RunStatus::Cancelled, Some("stopped".into()))
    };
    let finished = store.finish_run("c1", &end).await.unwrap();
    assert_eq!(
        finished,
        RunFinished {
            waiting: 0,
            announce: true,
            reply_queued: false
        }
    );
    assert_eq!(store.inbox_len(child).await.unwrap(), 0);
    assert_eq!(store.sessions_with_inbox().await.unwrap(), vec![]);
}

/// A child's progress line lives as long as its session: archiving deletes it, and an edit
/// that lands after the archive is not recorded again. (Catches: a row per child kept
/// forever; a late edit bringing an archived child's line back.)
pub(super) async fn archiving_a_child_drops_its_progress_line_for_good(db: Db) {
    let (_d, store, _o, _s) = chat_store(db).await;
    let child = "agent:main:subagent:c1";
    store.ensure_session(child, "main", None).await.unwrap();
    let line = crate::ProgressLine {
        child_session_key: child.into(),
        channel: "telegram".into(),
        chat_id: "42".into(),
        thread_id: None,
        message_id: "7".into(),
        text: "⏳ c1: reading".into(),
        updated_at: 0,
    };
    store.save_progress_line(&line).await.unwrap();
    let saved = store.progress_line(child).await.unwrap().expect("saved");
    assert_eq!(
        (saved.message_id, saved.text),
        ("7".into(), line.text.clone())
    );

    store
        .archive_session(child)
        .await
        .unwrap()
        .expect("archived");
    assert_eq!(store.progress_line(child).await.unwrap(), None);
    store
        .save_progress_line(&crate::ProgressLine {
            text: "✅ c1: done".into(),
            ..line
        })
        .await
        .unwrap();
    assert_eq!(store.progress_line(child).await.unwrap(), None);
}

/// Only the lines of children that have ended are listed for the end edit at start.
/// (Catches: a running child's line turned into an end line at a restart; an ended
/// child's line never brought to its end.)
pub(super) async fn only_ended_childrens_lines_are_listed(db: Db) {
    let (_d, store, o) = requester_store(db).await;
    spawned(&store, "c1", &o).await;
    spawned(&store, "c2", &o).await;
    for id in ["c1", "c2"] {
        let child = format!("agent:main:subagent:{id}");
        store
            .save_progress_line(&crate::ProgressLine {
                child_session_key: child,
                channel: "telegram".into(),
                chat_id: "42".into(),
                thread_id: None,
                message_id: "7".into(),
                text: format!("⏳ {id}: reading"),
                updated_at: 0,
            })
            .await
            .unwrap();
    }
    assert_eq!(
        store.ended_children_with_lines().await.unwrap(),
        Vec::<String>::new()
    );
    store
        .finish_run("c2", &RunEnd::bare(RunStatus::Succeeded, None))
        .await
        .unwrap();
    assert_eq!(
        store.ended_children_with_lines().await.unwrap(),
        vec!["agent:main:subagent:c2".to_string()]
    );
}
