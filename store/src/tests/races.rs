//! Two writers at once on one database (two stores, as two processes would open it): the
//! same platform message accepted by both, a run's end racing its start. Each must come
//! out as if one went first, whatever the engine runs a turn's writes as (SQLite's
//! scripts, PostgreSQL's functions).

use super::*;

/// How many times each race is run (each round a fresh message or run).
const ROUNDS: usize = 20;

/// Catches: a dedupe that checks before it inserts (both accepts see the id free), or an
/// accept that stores its message or run when its platform id lost the race.
pub(super) async fn one_platform_id_accepted_by_two_stores_at_once_is_stored_once(db: Db) {
    let (keep, one, o, s) = chat_store(db).await;
    let two = reopen(&keep).await;
    for round in 0..ROUNDS {
        let id = format!("m-{round}");
        let msg = inbound(KEY, &o, "hello", Some(&id));
        let (a, b) = (format!("a{round}"), format!("b{round}"));
        let (run_a, run_b) = (run(&a, KEY, &s.id, &o), run(&b, KEY, &s.id, &o));
        // Odd rounds race a plain accept against an accept that starts its run.
        let (won_a, won_b) = if round % 2 == 0 {
            let (x, y) = tokio::join!(
                one.accept_and_start(&msg, &run_a, None),
                two.accept_and_start(&msg, &run_b, None),
            );
            (x.unwrap().is_some(), y.unwrap().is_some())
        } else {
            let (x, y) = tokio::join!(
                one.accept_message(&msg, Some(&run_a)),
                two.accept_and_start(&msg, &run_b, None),
            );
            (x.unwrap().is_some(), y.unwrap().is_some())
        };
        assert!(won_a != won_b, "round {round}: exactly one accept wins");
        let (winner, loser) = if won_a { (&a, &b) } else { (&b, &a) };
        assert!(
            one.get_run(winner).await.unwrap().is_some(),
            "round {round}"
        );
        assert_eq!(one.get_run(loser).await.unwrap(), None, "round {round}");
        // The message is stored once: waiting (a plain accept won) or in the transcript.
        let waiting = one.inbox_len(KEY).await.unwrap();
        let claimed = one
            .transcript(&s.id)
            .await
            .unwrap()
            .iter()
            .filter(|m| m.run_id.as_deref() == Some(winner.as_str()))
            .count() as i64;
        assert_eq!(waiting + claimed, 1, "round {round}");
        one.clear_inbox(KEY).await.unwrap();
    }
}

/// Catches: a start that claims messages for a run whose end committed first, an end that
/// is lost or half written when it races a start, or a count of waiting messages that
/// disagrees with what the start left waiting.
pub(super) async fn a_runs_end_racing_its_start_leaves_one_or_the_other_first(db: Db) {
    let (keep, one, o, _s) = chat_store(db).await;
    let two = reopen(&keep).await;
    let end = RunEnd::bare(RunStatus::Cancelled, Some("stopped".into()));
    let (mut starts_first, mut ends_first) = (0, 0);
    for round in 0..ROUNDS {
        let key = format!("agent:main:webchat:direct:race-{round}");
        let sid = one.ensure_session(&key, "main", Some(&o)).await.unwrap().id;
        let id = format!("r{round}");
        one.accept_message(
            &inbound(&key, &o, "hello", None),
            Some(&run(&id, &key, &sid, &o)),
        )
        .await
        .unwrap()
        .unwrap();
        let (started, finished) = tokio::join!(
            one.start_run(&id, &key, &sid, None, Some(Claim::All)),
            two.finish_run(&id, &end),
        );
        let (started, finished) = (started.unwrap(), finished.unwrap());
        let waiting = one.inbox_len(&key).await.unwrap();
        let transcript = one.transcript(&sid).await.unwrap();
        let stored = one.get_run(&id).await.unwrap().unwrap();
        assert_eq!(stored.status, RunStatus::Cancelled, "round {round}");
        assert_eq!(finished.waiting, waiting, "round {round}");
        match started {
            Some(started) => {
                starts_first += 1;
                assert_eq!(started.claimed.len(), 1, "round {round}");
                assert_eq!((waiting, transcript.len()), (0, 1), "round {round}");
                assert!(stored.started_at.is_some(), "round {round}");
            }
            None => {
                ends_first += 1;
                assert_eq!((waiting, transcript.len()), (1, 0), "round {round}");
                assert_eq!(stored.started_at, None, "round {round}");
            }
        }
    }
    assert_eq!(starts_first + ends_first, ROUNDS);
}

/// One due time of a cron job fired by two stores at once (two processes' schedulers
/// around a cron handover) is fired once: one message, one run counted; a manual run is
/// never refused. Catches: a firing that records the run whatever the job's next time
/// became meanwhile, which ran a job due during a handover twice.
pub(super) async fn one_due_time_fired_by_two_stores_at_once_fires_once(db: Db) {
    let (keep, one, o, _s) = chat_store(db).await;
    let two = reopen(&keep).await;
    let spec = serde_json::json!({"id": "tick", "schedule": {"every": "1h"}, "message": "m"});
    let mut due = 1_000;
    assert!(one
        .insert_cron_job(&spec, JobSource::Cli, Some(due))
        .await
        .unwrap());
    for round in 0..ROUNDS as i64 {
        let fire = |due_at| CronFire {
            job_id: "tick",
            session_key: KEY,
            origin: &o,
            sender_id: "cron:tick",
            text: "m",
            next_run_at: Some(due + 1_000),
            disable: false,
            due_at,
        };
        let (fire_a, fire_b) = (fire(Some(due)), fire(Some(due)));
        let (a, b) = tokio::join!(one.fire_cron_job(&fire_a), two.fire_cron_job(&fire_b));
        let (a, b) = (a.unwrap(), b.unwrap());
        assert!(a.is_some() != b.is_some(), "round {round}: {a:?} {b:?}");
        let job = one
            .cron_job::<serde_json::Value>("tick")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (job.runs, job.next_run_at, job.last_inbox_id),
            (round + 1, Some(due + 1_000), a.or(b))
        );
        due += 1_000;
    }
    let manual = CronFire {
        due_at: None,
        next_run_at: Some(due),
        job_id: "tick",
        session_key: KEY,
        origin: &o,
        sender_id: "cron:tick",
        text: "m",
        disable: false,
    };
    let manual = one.fire_cron_job(&manual).await.unwrap();
    assert!(manual.is_some(), "a manual run is never refused");
    let waiting = one.inbox_len(KEY).await.unwrap();
    assert_eq!(waiting, ROUNDS as i64 + 1, "one message per firing");
}
