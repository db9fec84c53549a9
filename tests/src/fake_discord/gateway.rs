//! The gateway WebSocket: HELLO on connect, IDENTIFY → READY + GUILD_CREATEs, heartbeats and
//! their ACKs, RESUME → replay + RESUMED, INVALID SESSION, and the close codes Discord uses.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{FromRequestParts, Request};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};

use super::objects::{self, read_sf};
use super::state::{Live, Outbound, Pending, State, World};
use super::types::{intents, BOT_ID};

/// How long a closing connection waits for the client's close frame.
const CLOSE_GRACE: Duration = Duration::from_secs(1);

/// Upgrades any request asking for a WebSocket to a gateway connection.
pub(super) async fn upgrade(state: Arc<State>, request: Request) -> Response {
    let target = request
        .uri()
        .path_and_query()
        .map_or_else(|| "/".to_owned(), ToString::to_string);
    let (mut parts, _body) = request.into_parts();
    match WebSocketUpgrade::from_request_parts(&mut parts, &()).await {
        Ok(upgrade) => upgrade.on_upgrade(move |socket| serve(state, socket, target)),
        Err(rejection) => rejection.into_response(),
    }
}

/// Checks the gateway URL's query: `v=10`, `encoding=json`, and no transport compression.
fn check_query(world: &mut World, target: &str) {
    let url = format!("ws://fake.invalid{target}");
    let Ok(url) = reqwest::Url::parse(&url) else {
        return;
    };
    for (key, value) in url.query_pairs() {
        let problem = match (key.as_ref(), value.as_ref()) {
            ("v", "10") | ("encoding", "json") => continue,
            ("v", other) => format!("gateway version v={other} (the fake speaks v=10)"),
            ("encoding", other) => format!("gateway encoding={other} (the fake speaks json)"),
            ("compress", other) => format!("gateway compress={other} (the fake does not compress)"),
            _ => continue,
        };
        world.violation(problem);
    }
}

/// One connection's view of itself.
struct Conn {
    id: usize,
    tx: mpsc::UnboundedSender<Outbound>,
    /// IDENTIFY or RESUME succeeded here.
    authenticated: bool,
}

impl Conn {
    fn send(&self, text: String) {
        // The receiver lives as long as the connection's task, which is the caller.
        let _ = self.tx.send(Outbound::Text(text));
    }

    fn close(&self, code: u16, reason: &str) {
        let _ = self.tx.send(Outbound::Close(code, reason.to_owned(), None));
    }
}

async fn serve(state: Arc<State>, mut socket: WebSocket, target: String) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (id, interval) = state.change(|world| {
        world.connections += 1;
        world.gateway_requests.push(target.clone());
        check_query(world, &target);
        (world.connections, world.heartbeat_ms)
    });
    let mut conn = Conn {
        id,
        tx,
        authenticated: false,
    };
    let hello = json!({"op": 10, "d": {"heartbeat_interval": interval}, "s": null, "t": null});
    let mut done: Vec<oneshot::Sender<()>> = Vec::new();
    if socket
        .send(Message::Text(hello.to_string().into()))
        .await
        .is_ok()
    {
        loop {
            tokio::select! {
                () = state.cancel.cancelled() => break,
                frame = rx.recv() => match frame {
                    Some(Outbound::Text(text)) => {
                        if socket.send(Message::Text(text.into())).await.is_err() {
                            break;
                        }
                    }
                    Some(Outbound::Close(code, reason, notify)) => {
                        done.extend(notify);
                        let frame = CloseFrame { code, reason: reason.into() };
                        if socket.send(Message::Close(Some(frame))).await.is_ok() {
                            // Let the client answer the close frame.
                            let _ = tokio::time::timeout(CLOSE_GRACE, socket.recv()).await;
                        }
                        break;
                    }
                    Some(Outbound::Cut(notify)) => {
                        done.extend(notify);
                        break;
                    }
                    None => break,
                },
                message = socket.recv() => match message {
                    Some(Ok(Message::Text(text))) => {
                        state.change(|world| receive(&state, world, &mut conn, text.as_str()));
                    }
                    Some(Ok(Message::Binary(_))) => {
                        state.change(|world| {
                            world.violation("the client sent a binary gateway frame".to_owned());
                        });
                        conn.close(4002, "Error while decoding payload.");
                    }
                    Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                    Some(Ok(Message::Close(_))) => {
                        // Reading once more writes the close reply tungstenite queued.
                        let _ = tokio::time::timeout(CLOSE_GRACE, socket.recv()).await;
                        break;
                    }
                    Some(Err(_)) | None => break,
                },
            }
        }
    }
    // Dropping the socket closes the TCP connection; without a close frame sent above, the
    // client sees an abnormal closure (1006).
    drop(socket);
    state.change(|world| {
        if world.live.as_ref().is_some_and(|live| live.conn == conn.id) {
            world.live = None;
        }
    });
    for notify in done {
        let _ = notify.send(());
    }
}

/// Handles one text frame from the client.
fn receive(state: &State, world: &mut World, conn: &mut Conn, text: &str) {
    let payload = match serde_json::from_str::<Value>(text) {
        Ok(payload) if payload.is_object() => payload,
        _ => {
            world.violation(format!("unreadable gateway payload: {text:.200}"));
            conn.close(4002, "Error while decoding payload.");
            return;
        }
    };
    let d = &payload["d"];
    match payload["op"].as_u64() {
        Some(1) => heartbeat(world, conn, d),
        Some(2) => identify(state, world, conn, d),
        Some(6) => resume(state, world, conn, d),
        // Presence update, voice state update, request guild members, soundboard sounds.
        Some(3 | 4 | 8 | 31) if conn.authenticated => {}
        Some(op @ (3 | 4 | 8 | 31)) => {
            world.violation(format!("gateway op {op} before IDENTIFY"));
            conn.close(4003, "Not authenticated.");
        }
        _ => {
            world.violation(format!("unknown gateway opcode: {text:.200}"));
            conn.close(4001, "Unknown opcode.");
        }
    }
}

fn heartbeat(world: &mut World, conn: &Conn, d: &Value) {
    world.heartbeats += 1;
    match d {
        Value::Null => world.last_heartbeat_seq = None,
        Value::Number(number) if number.is_u64() => world.last_heartbeat_seq = number.as_u64(),
        other => world.violation(format!(
            "heartbeat with d = {other} (want the last s or null)"
        )),
    }
    if world.ack_heartbeats {
        conn.send(json!({"op": 11, "d": null, "s": null, "t": null}).to_string());
    }
}

/// Whether the payload's `token` is the bot's, with or without `Bot `.
fn token_ok(state: &State, d: &Value) -> bool {
    let token = d["token"].as_str().unwrap_or("");
    token.strip_prefix("Bot ").unwrap_or(token) == state.token
}

/// Makes `conn` the live connection, cutting the one it replaces.
fn go_live(world: &mut World, conn: &mut Conn) {
    if let Some(old) = world.live.take() {
        let _ = old.tx.send(Outbound::Cut(None));
    }
    world.live = Some(Live {
        conn: conn.id,
        tx: conn.tx.clone(),
    });
    conn.authenticated = true;
}

fn identify(state: &State, world: &mut World, conn: &mut Conn, d: &Value) {
    if conn.authenticated {
        world.violation("IDENTIFY on an already authenticated connection".to_owned());
        conn.close(4005, "Already authenticated.");
        return;
    }
    if !token_ok(state, d) {
        conn.close(4004, "Authentication failed.");
        return;
    }
    let Some(intents) = d["intents"].as_u64() else {
        world.violation(format!(
            "IDENTIFY without integer intents: {}",
            d["intents"]
        ));
        conn.close(4013, "Invalid intent(s).");
        return;
    };
    let properties = &d["properties"];
    if ["os", "browser", "device"]
        .iter()
        .any(|key| !properties[key].is_string())
    {
        world.violation(format!(
            "IDENTIFY properties lack os/browser/device: {properties}"
        ));
    }
    world.identifies += 1;
    world.identify_payloads.push(d.clone());
    go_live(world, conn);
    // The READY burst announces every guild; queued announcements would repeat it.
    world
        .pending
        .retain(|pending| !matches!(pending.t.as_str(), "GUILD_CREATE" | "THREAD_CREATE"));
    world.session = Some(super::state::Session {
        id: uuid::Uuid::new_v4().simple().to_string(),
        seq: 0,
        log: Vec::new(),
        intents,
    });
    let session_id = world
        .session
        .as_ref()
        .map_or_else(String::new, |s| s.id.clone());
    let guilds: Vec<u64> = world.guilds.keys().copied().collect();
    let ready = objects::ready(&session_id, &state.gateway_url, &guilds, &d["shard"]);
    world.dispatch("READY", ready);
    for guild in guilds {
        if let Some(payload) = world.guild_json(guild) {
            world.dispatch("GUILD_CREATE", payload);
        }
    }
    world.handshakes += 1;
    world.flush();
}

fn resume(state: &State, world: &mut World, conn: &mut Conn, d: &Value) {
    if conn.authenticated {
        world.violation("RESUME on an already authenticated connection".to_owned());
        conn.close(4005, "Already authenticated.");
        return;
    }
    if !token_ok(state, d) {
        conn.close(4004, "Authentication failed.");
        return;
    }
    world.resumes += 1;
    let (Some(session_id), Some(seq)) = (d["session_id"].as_str(), d["seq"].as_u64()) else {
        world.violation(format!("RESUME without session_id and seq: {d}"));
        conn.close(4002, "Error while decoding payload.");
        return;
    };
    let matches = world.session.as_ref().is_some_and(|s| s.id == session_id);
    if !matches || world.invalidate_next_resume {
        world.invalidate_next_resume = false;
        if matches {
            carry_over_unseen(world, seq);
        }
        conn.send(json!({"op": 9, "d": false, "s": null, "t": null}).to_string());
        return;
    }
    let last = world.session.as_ref().map_or(0, |s| s.seq);
    if seq > last {
        world.violation(format!(
            "RESUME with seq {seq}, past the session's last {last}"
        ));
        conn.close(4007, "Invalid seq.");
        return;
    }
    go_live(world, conn);
    let missed: Vec<String> = world
        .session
        .as_ref()
        .map(|s| {
            s.log
                .iter()
                .filter(|(s, _)| *s > seq)
                .map(|(_, text)| text.clone())
                .collect()
        })
        .unwrap_or_default();
    for text in missed {
        conn.send(text);
    }
    world.dispatch("RESUMED", json!({"_trace": ["[\"fake-discord\"]"]}));
    world.handshakes += 1;
    world.flush();
}

/// Ends the session; its dispatches after `seq` (never seen by the client) go back to the
/// front of the queue, so the next session gets them. Discord would lose them; the fake keeps
/// them so tests can check that nothing is lost or doubled by the client.
fn carry_over_unseen(world: &mut World, seq: u64) {
    let Some(session) = world.session.take() else {
        return;
    };
    let unseen = session.log.into_iter().filter(|(s, _)| *s > seq).rev();
    for (_, text) in unseen {
        let Ok(payload) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        let t = payload["t"].as_str().unwrap_or("").to_owned();
        if matches!(
            t.as_str(),
            "READY" | "RESUMED" | "GUILD_CREATE" | "THREAD_CREATE"
        ) {
            continue;
        }
        world.pending.push_front(Pending {
            t,
            d: payload["d"].clone(),
        });
    }
}

/// A dispatch as a session with `granted` intents gets it: `None` when the intents exclude the
/// event; guild message content emptied without MESSAGE_CONTENT unless the bot is mentioned.
pub(super) fn shape_for_intents(granted: u64, t: &str, mut d: Value) -> Option<Value> {
    let has = |intent: u64| granted & intent == intent;
    match t {
        "GUILD_CREATE" | "THREAD_CREATE" | "CHANNEL_CREATE" if !has(intents::GUILDS) => None,
        "MESSAGE_CREATE" => {
            let in_guild = !d["guild_id"].is_null();
            let needed = if in_guild {
                intents::GUILD_MESSAGES
            } else {
                intents::DIRECT_MESSAGES
            };
            if !has(needed) {
                return None;
            }
            let mentions_bot = d["mentions"].as_array().is_some_and(|users| {
                users
                    .iter()
                    .any(|user| read_sf(&user["id"]) == Some(BOT_ID))
            });
            let by_bot = read_sf(&d["author"]["id"]) == Some(BOT_ID);
            if in_guild && !mentions_bot && !by_bot && !has(intents::MESSAGE_CONTENT) {
                d["content"] = json!("");
                d["embeds"] = json!([]);
                d["attachments"] = json!([]);
                d["components"] = json!([]);
            }
            Some(d)
        }
        _ => Some(d),
    }
}
