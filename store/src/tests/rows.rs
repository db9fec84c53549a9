//! Rows that the other store tests do not read back, decoded by the shared decoders on
//! both engines: a cron job's `enabled` (0/1 on SQLite, `BOOLEAN` on PostgreSQL) and its
//! JSON spec, a waiting session's `EXISTS` flag, an allow-list entry.

use super::*;

/// A job, a waiting session and an allow-list entry read back whole, each as it was
/// written. Catches: an engine's query selecting a shape the shared decoder does not read
/// (a `BOOLEAN` where an integer is read, a JSON column not read as text).
pub(super) async fn rows_read_back_whole_on_every_engine(db: Db) {
    let (_db, store) = file_store(db).await;

    let spec = serde_json::json!({
        "id": "daily",
        "schedule": { "every": "1h" },
        "message": "what changed?",
        "session": "main",
    });
    assert!(store
        .insert_cron_job(&spec, JobSource::Tool, Some(1_000))
        .await
        .unwrap());
    let mut job = CronJobRow {
        id: "daily".into(),
        source: JobSource::Tool,
        spec: spec.clone(),
        enabled: true,
        next_run_at: Some(1_000),
        last_run_at: None,
        last_inbox_id: None,
        runs: 0,
        skipped: 0,
    };
    assert_eq!(store.cron_job("daily").await.unwrap(), Some(job.clone()));
    assert!(store
        .set_cron_job_enabled("daily", false, None)
        .await
        .unwrap());
    job.enabled = false;
    job.next_run_at = None;
    assert_eq!(store.cron_jobs().await.unwrap(), vec![job]);

    let key = "agent:main:telegram:direct:7";
    store
        .push_inbox(key, &origin(), "7", "hello")
        .await
        .unwrap();
    let waiting = |agent_id: Option<&str>, active| WaitingSession {
        key: key.into(),
        agent_id: agent_id.map(Into::into),
        active,
    };
    assert_eq!(
        store.sessions_with_inbox().await.unwrap(),
        vec![waiting(None, false)]
    );
    store.ensure_session(key, "main", None).await.unwrap();
    assert_eq!(
        store.sessions_with_inbox().await.unwrap(),
        vec![waiting(Some("main"), true)]
    );

    let o = origin();
    let exes = vec!["/usr/bin/git".to_string()];
    let ask = NewApproval {
        id: "ap1",
        run_id: "r1",
        tool_call_id: "c1",
        session_key: key,
        agent_id: "main",
        label: Some("ask"),
        origin: &o,
        workdir: "/w",
        command: "git push",
        executables: &exes,
        expires_at: now_ms() + 60_000,
    };
    store.request_approval(&ask).await.unwrap();
    store
        .answer_approval(
            "ap1",
            &o.channel,
            &o.chat_id,
            ApprovalStatus::AllowAlways,
            "7",
        )
        .await
        .unwrap()
        .unwrap();
    let list = store.exec_allowlist().await.unwrap();
    let created_at = list.first().map_or(0, |e| e.created_at);
    assert!(created_at > 0, "{list:?}");
    assert_eq!(
        list,
        vec![AllowEntry {
            agent_id: "main".into(),
            path: "/usr/bin/git".into(),
            approval_id: Some("ap1".into()),
            created_at,
        }]
    );
}
