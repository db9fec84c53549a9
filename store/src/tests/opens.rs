//! A turn that opens its session: `open_and_start` ensures the active session of the
//! message's key and accepts and starts the run in it (one call on PostgreSQL, the two
//! calls on SQLite), with the answers of `ensure_session` and `accept_and_start`.

use super::*;

/// A turn of run `run_id` for `msg`, on the main lane of agent `main`.
fn turn<'a>(msg: NewInbound<'a>, run_id: &'a str, claim_all: bool) -> NewTurn<'a> {
    NewTurn {
        agent_id: "main",
        inbound: msg,
        run_id,
        lane: "main",
        claim_all,
        model: Some("p/m"),
    }
}

/// Catches: a session not created, not re-pointed to a new origin, or a stale archived one
/// used; a run not stored running in the session it answers with; a claim that misses a
/// waiting message or takes more than the oldest; a platform id taken twice; a duplicate
/// that stores anything but the session.
pub(super) async fn open_and_start_ensures_the_session_and_starts_the_run_once(db: Db) {
    let (_d, store) = file_store(db).await;
    let (o, t) = (origin(), topic());

    // No session yet: it is created with the message's origin.
    let (session, started) = store
        .open_and_start(&turn(inbound(KEY, &o, "hello", Some("m-1")), "r1", true))
        .await
        .unwrap();
    let (inbox_id, row, started) = started.expect("a new message");
    assert_eq!(
        store.active_session(KEY).await.unwrap(),
        Some(session.clone())
    );
    assert_eq!(
        (
            session.key.as_str(),
            session.agent_id.as_str(),
            session.origin.as_ref()
        ),
        (KEY, "main", Some(&o))
    );
    // As stored (the returned row's created_at is the daemon's clock, as a queued run's).
    let stored = store.get_run("r1").await.unwrap().expect("the run");
    assert_eq!(
        stored,
        RunRow {
            created_at: stored.created_at,
            ..row.clone()
        }
    );
    assert_eq!(
        (row.status, row.session_id.as_str(), row.model.as_deref()),
        (RunStatus::Running, session.id.as_str(), Some("p/m"))
    );
    assert_eq!(started.started_at, row.started_at);
    let claimed: Vec<_> = started
        .claimed
        .iter()
        .map(|c| (c.id, c.text.as_str()))
        .collect();
    assert_eq!(claimed, [(inbox_id, "hello")]);
    assert_eq!(
        started.transcript,
        store.transcript(&session.id).await.unwrap()
    );
    let end = RunEnd::bare(RunStatus::Succeeded, None);
    store.finish_run("r1", &end).await.unwrap();

    // The same platform message again: the session as it was, nothing else stored.
    let (again, started) = store
        .open_and_start(&turn(inbound(KEY, &o, "hello", Some("m-1")), "r2", true))
        .await
        .unwrap();
    assert_eq!((again, started), (session.clone(), None));
    assert_eq!(store.get_run("r2").await.unwrap(), None);
    assert_eq!(store.inbox_len(KEY).await.unwrap(), 0);

    // From another chat, with a message waiting: the same session, re-pointed; the waiting
    // message is claimed first, and the transcript is the session's whole, in order.
    store.push_inbox(KEY, &o, "ann", "earlier").await.unwrap();
    let (moved, started) = store
        .open_and_start(&turn(inbound(KEY, &t, "from the topic", None), "r3", true))
        .await
        .unwrap();
    let (_, _, started) = started.expect("a new message");
    assert_eq!(
        (moved.id.as_str(), moved.origin.as_ref()),
        (session.id.as_str(), Some(&t))
    );
    assert_eq!(store.active_session(KEY).await.unwrap(), Some(moved));
    let texts: Vec<_> = started.claimed.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(texts, ["earlier", "from the topic"]);
    let transcript: Vec<_> = started
        .transcript
        .iter()
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(transcript, ["hello", "earlier", "from the topic"]);
    assert_eq!(
        started.transcript,
        store.transcript(&session.id).await.unwrap()
    );
    store.finish_run("r3", &end).await.unwrap();

    // After an archive, a new session; a run that takes only the oldest leaves the new
    // message waiting behind an older one.
    store.archive_session(KEY).await.unwrap();
    store.push_inbox(KEY, &t, "ann", "older").await.unwrap();
    let (fresh, started) = store
        .open_and_start(&turn(inbound(KEY, &t, "newer", None), "r4", false))
        .await
        .unwrap();
    let (_, row, started) = started.expect("a new message");
    assert_ne!(fresh.id, session.id);
    assert_eq!(row.session_id, fresh.id);
    let texts: Vec<_> = started.claimed.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(texts, ["older"]);
    let transcript: Vec<_> = started
        .transcript
        .iter()
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(transcript, ["older"]);
    assert_eq!(store.inbox_len(KEY).await.unwrap(), 1);
}

/// Catches: two turns that open one new session at once and end up in two active sessions
/// (or one fails: the insert that loses waits for the winner, then must find its row), or a
/// waiting message claimed by both runs or by neither.
pub(super) async fn two_turns_opening_one_session_at_once_share_it(db: Db) {
    let (keep, one) = file_store(db).await;
    let two = reopen(&keep).await;
    let o = origin();
    for round in 0..ROUNDS {
        let key = format!("agent:main:webchat:direct:open-{round}");
        let (a, b) = (format!("a{round}"), format!("b{round}"));
        let (ta, tb) = (
            turn(inbound(&key, &o, "one", None), &a, true),
            turn(inbound(&key, &o, "two", None), &b, true),
        );
        let (x, y) = tokio::join!(one.open_and_start(&ta), two.open_and_start(&tb));
        let ((sx, x), (sy, y)) = (x.unwrap(), y.unwrap());
        assert_eq!(sx.id, sy.id, "round {round}: one session");
        assert_eq!(one.active_session(&key).await.unwrap(), Some(sx.clone()));
        let (x, y) = (x.expect("accepted"), y.expect("accepted"));
        assert_eq!(
            (x.1.session_id.as_str(), y.1.session_id.as_str()),
            (sx.id.as_str(), sx.id.as_str())
        );
        // Each message is in the transcript once, claimed by one run or the other.
        let mut claimed: Vec<_> =
            x.2.claimed
                .iter()
                .chain(&y.2.claimed)
                .map(|c| c.id)
                .collect();
        claimed.sort_unstable();
        let mut accepted = vec![x.0, y.0];
        accepted.sort_unstable();
        assert_eq!(claimed, accepted, "round {round}");
        assert_eq!(one.inbox_len(&key).await.unwrap(), 0, "round {round}");
        assert_eq!(
            one.transcript(&sx.id).await.unwrap().len(),
            2,
            "round {round}"
        );
    }
}

/// How many times the race is run (each round a fresh key).
const ROUNDS: usize = 20;
