//! Tests of the fake Discord's gateway, driven with tokio-tungstenite the way serenity speaks
//! it (REST tests are in `tests/rest.rs`).

#![allow(clippy::unwrap_used)]

mod edits;
mod rest;
mod resume;

use std::time::Duration;

use futures::{SinkExt as _, StreamExt as _};
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::{intents, DUser, FakeDiscord};

const TOKEN: &str = "TEST-TOKEN";
const WAIT: Duration = Duration::from_secs(5);
/// What serenity 0.12 asks for: non-privileged intents plus MESSAGE_CONTENT.
const SERENITY_INTENTS: u64 = 53_608_189;

pub(super) type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

pub(super) async fn start() -> FakeDiscord {
    FakeDiscord::start(TOKEN).await.unwrap()
}

pub(super) fn alice() -> DUser {
    DUser::new(42, "alice")
}

/// Connects to the gateway as serenity does (`/?v=10`) and reads HELLO.
pub(super) async fn connect(discord: &FakeDiscord) -> (Ws, Value) {
    let url = format!("{}/?v=10", discord.gateway_url());
    let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    let hello = recv(&mut ws).await;
    (ws, hello)
}

/// The next text frame as JSON.
pub(super) async fn recv(ws: &mut Ws) -> Value {
    loop {
        let frame = tokio::time::timeout(WAIT, ws.next())
            .await
            .expect("no gateway frame in time")
            .expect("the gateway closed")
            .unwrap();
        match frame {
            Message::Text(text) => return serde_json::from_str(text.as_str()).unwrap(),
            Message::Ping(_) | Message::Pong(_) => {}
            other => panic!("unexpected frame {other:?}"),
        }
    }
}

/// The close code the gateway ends with (`None`: no close frame); unread frames are skipped.
pub(super) async fn recv_close(ws: &mut Ws) -> Option<u16> {
    loop {
        match tokio::time::timeout(WAIT, ws.next()).await.unwrap() {
            Some(Ok(Message::Close(frame))) => return frame.map(|f| u16::from(f.code)),
            Some(Ok(_)) => {}
            Some(Err(_)) | None => return None,
        }
    }
}

pub(super) async fn send(ws: &mut Ws, payload: Value) {
    ws.send(Message::text(payload.to_string())).await.unwrap();
}

/// Sends IDENTIFY with serenity's payload shape and `intents`; returns READY's `d`.
pub(super) async fn identify(ws: &mut Ws, intents: u64) -> Value {
    send(
        ws,
        json!({"op": 2, "d": {
            "token": format!("Bot {TOKEN}"),
            "intents": intents,
            "compress": true,
            "large_threshold": 250,
            "shard": [0, 1],
            "properties": {"os": "linux", "browser": "serenity", "device": "serenity"},
            "presence": {"activities": [], "afk": false, "status": "online", "since": null},
        }}),
    )
    .await;
    let ready = recv(ws).await;
    assert_eq!(
        (ready["op"].as_u64(), ready["t"].as_str()),
        (Some(0), Some("READY"))
    );
    ready["d"].clone()
}

/// `(s, t)` of a dispatch.
pub(super) fn seq_and_name(payload: &Value) -> (u64, String) {
    (
        payload["s"].as_u64().unwrap(),
        payload["t"].as_str().unwrap().to_owned(),
    )
}

#[tokio::test]
async fn hello_identify_ready_and_guild_create() {
    let discord = start().await;
    discord.set_heartbeat_interval(250);
    discord.add_guild(100, "guild", &[200, 201]);
    discord.add_thread(100, 200, 300);
    let (mut ws, hello) = connect(&discord).await;
    assert_eq!(
        hello,
        json!({"op": 10, "d": {"heartbeat_interval": 250}, "s": null, "t": null})
    );

    let ready = identify(&mut ws, SERENITY_INTENTS).await;
    assert_eq!(ready["v"], 10);
    assert_eq!(ready["user"]["id"], "2000");
    assert_eq!(ready["user"]["username"], "switchboard");
    assert_eq!(ready["user"]["bot"], true);
    assert_eq!(ready["user"]["discriminator"], "0");
    assert_eq!(ready["application"], json!({"id": "3000", "flags": 0}));
    assert_eq!(ready["guilds"], json!([{"id": "100", "unavailable": true}]));
    assert_eq!(ready["resume_gateway_url"], discord.gateway_url());
    assert_eq!(ready["shard"], json!([0, 1]));
    assert!(!ready["session_id"].as_str().unwrap().is_empty());

    let guild = recv(&mut ws).await;
    assert_eq!(seq_and_name(&guild), (2, "GUILD_CREATE".to_owned()));
    let channels: Vec<(&str, u64)> = guild["d"]["channels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_str().unwrap(), c["type"].as_u64().unwrap()))
        .collect();
    assert_eq!(channels, vec![("200", 0), ("201", 0)]);
    let thread = &guild["d"]["threads"][0];
    assert_eq!(
        (&thread["id"], &thread["type"], &thread["parent_id"]),
        (&json!("300"), &json!(11), &json!("200"))
    );
    discord.wait_ready(1, WAIT).await.unwrap();
    assert_eq!((discord.identifies(), discord.resumes()), (1, 0));
    assert_eq!(discord.intents(), Some(SERENITY_INTENTS));
    assert_eq!(discord.gateway_requests(), vec!["/?v=10".to_owned()]);
    assert!(discord.is_connected());
    discord.assert_no_violations();
}

#[tokio::test]
async fn heartbeats_are_acknowledged_unless_stopped() {
    let discord = start().await;
    let (mut ws, _) = connect(&discord).await;
    identify(&mut ws, SERENITY_INTENTS).await;
    send(&mut ws, json!({"op": 1, "d": 1})).await;
    assert_eq!(
        recv(&mut ws).await,
        json!({"op": 11, "d": null, "s": null, "t": null})
    );
    assert_eq!(
        (discord.heartbeats(), discord.last_heartbeat_seq()),
        (1, Some(1))
    );

    discord.stop_acking_heartbeats(true);
    send(&mut ws, json!({"op": 1, "d": 1})).await;
    discord.wait_for_heartbeats(2).await;
    // The next frame is the message pushed after the heartbeat, not an ACK.
    discord.dm_message(alice(), "after the heartbeat");
    assert_eq!(
        seq_and_name(&recv(&mut ws).await),
        (2, "MESSAGE_CREATE".to_owned())
    );
    discord.assert_no_violations();
}

impl FakeDiscord {
    async fn wait_for_heartbeats(&self, n: usize) {
        self.wait(WAIT, |world| world.heartbeats >= n)
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn queued_and_live_dispatches_get_increasing_seqs() {
    let discord = start().await;
    let queued = discord.guild_message(100, 200, alice(), "<@2000> hello");
    let (mut ws, _) = connect(&discord).await;
    identify(&mut ws, SERENITY_INTENTS).await;
    // The guild the message made known comes first, then the queued message.
    assert_eq!(
        seq_and_name(&recv(&mut ws).await),
        (2, "GUILD_CREATE".to_owned())
    );
    let message = recv(&mut ws).await;
    assert_eq!(seq_and_name(&message), (3, "MESSAGE_CREATE".to_owned()));
    let d = &message["d"];
    assert_eq!(d["id"], queued.to_string());
    assert_eq!(
        (&d["guild_id"], &d["channel_id"]),
        (&json!("100"), &json!("200"))
    );
    assert_eq!(d["content"], "<@2000> hello");
    assert_eq!(d["author"]["id"], "42");
    assert_eq!(d["mentions"][0]["id"], "2000");
    assert_eq!(d["member"]["roles"], json!([]));
    assert_eq!(
        (&d["type"], &d["tts"], &d["pinned"]),
        (&json!(0), &json!(false), &json!(false))
    );

    let (dm, _) = discord.dm_message(alice(), "a dm");
    let message = recv(&mut ws).await;
    assert_eq!(seq_and_name(&message), (4, "MESSAGE_CREATE".to_owned()));
    assert_eq!(message["d"]["channel_id"], dm.to_string());
    assert!(message["d"].get("guild_id").is_none());
    assert!(message["d"].get("member").is_none());

    let interaction =
        discord.slash_command(Some(100), 200, alice(), "subagents", &[("action", "list")]);
    let payload = recv(&mut ws).await;
    assert_eq!(seq_and_name(&payload), (5, "INTERACTION_CREATE".to_owned()));
    let d = &payload["d"];
    assert_eq!(
        (&d["id"], &d["type"], &d["application_id"]),
        (&json!(interaction.to_string()), &json!(2), &json!("3000"))
    );
    assert_eq!(d["member"]["user"]["id"], "42");
    assert_eq!(d["data"]["name"], "subagents");
    assert_eq!(
        d["data"]["options"],
        json!([{"name": "action", "type": 3, "value": "list"}])
    );
    discord.assert_no_violations();
}

#[tokio::test]
async fn intents_decide_what_is_sent_and_whether_content_is_shown() {
    let discord = start().await;
    let (mut ws, _) = connect(&discord).await;
    // GUILDS | GUILD_MESSAGES | DIRECT_MESSAGES, no MESSAGE_CONTENT.
    identify(
        &mut ws,
        intents::GUILDS | intents::GUILD_MESSAGES | intents::DIRECT_MESSAGES,
    )
    .await;
    discord.add_guild(100, "guild", &[200]);
    assert_eq!(
        seq_and_name(&recv(&mut ws).await),
        (2, "GUILD_CREATE".to_owned())
    );
    discord.guild_message(100, 200, alice(), "not for the bot");
    assert_eq!(recv(&mut ws).await["d"]["content"], "");
    discord.guild_message(100, 200, alice(), "<@!2000> for the bot");
    assert_eq!(recv(&mut ws).await["d"]["content"], "<@!2000> for the bot");
    discord.dm_message(alice(), "a dm");
    assert_eq!(recv(&mut ws).await["d"]["content"], "a dm");
    discord.assert_no_violations();

    let (mut ws, _) = connect(&discord).await;
    identify(&mut ws, intents::DIRECT_MESSAGES).await;
    discord.guild_message(100, 200, alice(), "<@2000> unseen without GUILD_MESSAGES");
    discord.dm_message(alice(), "seen");
    let message = recv(&mut ws).await;
    assert_eq!(
        (seq_and_name(&message).0, &message["d"]["content"]),
        (2, &json!("seen"))
    );
}

#[tokio::test]
async fn bad_token_unknown_opcode_and_early_ops_close_the_connection() {
    let discord = start().await;
    let (mut ws, _) = connect(&discord).await;
    send(
        &mut ws,
        json!({"op": 2, "d": {"token": "Bot wrong", "intents": 1,
        "properties": {"os": "linux", "browser": "x", "device": "x"}}}),
    )
    .await;
    assert_eq!(recv_close(&mut ws).await, Some(4004));
    assert!(discord.violations().is_empty());

    let (mut ws, _) = connect(&discord).await;
    send(&mut ws, json!({"op": 3, "d": {"status": "online"}})).await;
    assert_eq!(recv_close(&mut ws).await, Some(4003));

    let (mut ws, _) = connect(&discord).await;
    identify(&mut ws, SERENITY_INTENTS).await;
    send(&mut ws, json!({"op": 42, "d": null})).await;
    assert_eq!(recv_close(&mut ws).await, Some(4001));

    let (mut ws, _) = connect(&discord).await;
    ws.send(Message::text("not json")).await.unwrap();
    assert_eq!(recv_close(&mut ws).await, Some(4002));
    assert_eq!(discord.violations().len(), 3, "{:?}", discord.violations());
}
