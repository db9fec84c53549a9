//! Connection loss: dropped sockets, RESUME with replay, INVALID SESSION, close frames.

use serde_json::json;

use super::{
    alice, connect, identify, recv, recv_close, send, seq_and_name, start, SERENITY_INTENTS, TOKEN,
    WAIT,
};

#[tokio::test]
async fn resume_replays_missed_dispatches_then_sends_resumed() {
    let discord = start().await;
    let (mut ws, _) = connect(&discord).await;
    let ready = identify(&mut ws, SERENITY_INTENTS).await;
    let session_id = ready["session_id"].as_str().unwrap().to_owned();
    discord.dm_message(alice(), "one");
    discord.dm_message(alice(), "two");
    assert_eq!(recv(&mut ws).await["d"]["content"], "one");
    // "two" (s 3) is written but the client never reads it.
    discord.drop_connection(None).await;
    assert_eq!(
        recv_close(&mut ws).await,
        None,
        "dropped without a close frame"
    );
    assert!(!discord.is_connected());
    discord.dm_message(alice(), "three");

    let (mut ws, _) = connect(&discord).await;
    let token = format!("Bot {TOKEN}");
    let resume = json!({"op": 6, "d": {"token": token, "session_id": session_id, "seq": 2}});
    send(&mut ws, resume).await;
    let replayed = recv(&mut ws).await;
    assert_eq!(
        (seq_and_name(&replayed), &replayed["d"]["content"]),
        ((3, "MESSAGE_CREATE".to_owned()), &json!("two"))
    );
    assert_eq!(
        seq_and_name(&recv(&mut ws).await),
        (4, "RESUMED".to_owned())
    );
    let queued = recv(&mut ws).await;
    assert_eq!(
        (seq_and_name(&queued), &queued["d"]["content"]),
        ((5, "MESSAGE_CREATE".to_owned()), &json!("three"))
    );
    discord.wait_ready(2, WAIT).await.unwrap();
    assert_eq!((discord.identifies(), discord.resumes()), (1, 1));
    discord.assert_no_violations();
}

#[tokio::test]
async fn invalidated_session_answers_op9_and_the_next_session_gets_the_unseen_events() {
    let discord = start().await;
    let (mut ws, _) = connect(&discord).await;
    let ready = identify(&mut ws, SERENITY_INTENTS).await;
    let session_id = ready["session_id"].as_str().unwrap().to_owned();
    discord.dm_message(alice(), "unseen");
    discord.drop_connection(Some(4000)).await;
    assert_eq!(recv_close(&mut ws).await, Some(4000));

    discord.invalidate_session();
    let (mut ws, _) = connect(&discord).await;
    send(
        &mut ws,
        json!({"op": 6, "d": {"token": TOKEN, "session_id": session_id, "seq": 1}}),
    )
    .await;
    assert_eq!(
        recv(&mut ws).await,
        json!({"op": 9, "d": false, "s": null, "t": null})
    );

    let (mut ws, _) = connect(&discord).await;
    let ready = identify(&mut ws, SERENITY_INTENTS).await;
    assert_ne!(ready["session_id"], json!(session_id));
    let message = recv(&mut ws).await;
    assert_eq!(
        (seq_and_name(&message).0, &message["d"]["content"]),
        (2, &json!("unseen"))
    );
    assert_eq!((discord.identifies(), discord.resumes()), (2, 1));
    discord.assert_no_violations();
}

#[tokio::test]
async fn resume_of_an_unknown_session_gets_op9() {
    let discord = start().await;
    let (mut ws, _) = connect(&discord).await;
    send(
        &mut ws,
        json!({"op": 6, "d": {"token": TOKEN, "session_id": "nope", "seq": 0}}),
    )
    .await;
    assert_eq!(recv(&mut ws).await["op"], 9);
    discord.assert_no_violations();
}

#[tokio::test]
async fn a_new_identify_replaces_the_live_connection() {
    let discord = start().await;
    let (mut first, _) = connect(&discord).await;
    identify(&mut first, SERENITY_INTENTS).await;
    let (mut second, _) = connect(&discord).await;
    identify(&mut second, SERENITY_INTENTS).await;
    assert_eq!(recv_close(&mut first).await, None);
    discord.dm_message(alice(), "to the second");
    assert_eq!(recv(&mut second).await["d"]["content"], "to the second");
    discord.request_reconnect();
    assert_eq!(
        recv(&mut second).await,
        json!({"op": 7, "d": null, "s": null, "t": null})
    );
    discord.assert_no_violations();
}
