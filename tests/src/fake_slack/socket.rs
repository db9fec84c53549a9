//! Socket Mode: `GET /link/?ticket=…` (a ticket from `apps.connections.open`, good once)
//! upgrades to the WebSocket; the fake writes `hello`, then the envelopes (queued ones
//! first, and unacked ones again with `retry_attempt`), reads acks `{"envelope_id":…}`,
//! and on request writes `disconnect` or drops the socket.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Query, State as Axum};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::state::{Live, Outbound, State};
use super::types::APP_ID;

/// How long after a `disconnect` the fake closes the socket (Slack: a few seconds).
const DISCONNECT_GRACE: Duration = Duration::from_millis(500);

pub(super) async fn upgrade(
    Axum(state): Axum<Arc<State>>,
    Query(q): Query<HashMap<String, String>>,
    ws: Result<WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
) -> Response {
    let ticket = q.get("ticket").cloned().unwrap_or_default();
    let valid = state.change(|w| w.tickets.remove(&ticket));
    if !valid {
        return (StatusCode::UNAUTHORIZED, "invalid ticket").into_response();
    }
    let Ok(ws) = ws else {
        state.change(|w| w.violation("GET /link/ without a WebSocket upgrade"));
        return (StatusCode::BAD_REQUEST, "not a WebSocket").into_response();
    };
    ws.on_upgrade(move |socket| serve(state, socket))
}

async fn serve(state: Arc<State>, mut socket: WebSocket) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let conn = state.change(|w| {
        w.connections += 1;
        let conn = w.connections;
        let hello = json!({"type": "hello", "num_connections": 1,
            "debug_info": {"host": "fake-slack", "approximate_connection_time": 18060},
            "connection_info": {"app_id": APP_ID}});
        let _ = tx.send(Outbound::Text(hello.to_string()));
        w.live = Some(Live {
            conn,
            tx: tx.clone(),
        });
        // Queued envelopes, then the ones an earlier connection never acked.
        let queued: Vec<String> = w.queue.drain(..).collect();
        let unacked: Vec<String> = w
            .envelopes
            .iter()
            .filter(|e| e.acks == 0 && e.deliveries > 0 && !queued.contains(&e.envelope_id))
            .map(|e| e.envelope_id.clone())
            .collect();
        for id in queued {
            w.deliver(&id, "");
        }
        for id in unacked {
            w.deliver(&id, "timeout");
        }
        conn
    });
    loop {
        tokio::select! {
            _ = state.cancel.cancelled() => break,
            out = rx.recv() => match out {
                Some(Outbound::Text(t)) => {
                    if socket.send(Message::Text(t.into())).await.is_err() {
                        break;
                    }
                }
                Some(Outbound::Close) => {
                    let _ = socket.send(Message::Close(None)).await;
                    break;
                }
                Some(Outbound::Cut) | None => break,
            },
            msg = socket.recv() => match msg {
                Some(Ok(Message::Text(t))) => state.change(|w| ack(w, t.as_str())),
                Some(Ok(Message::Binary(_))) => state.change(|w| w.violation("a binary Socket Mode frame")),
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                Some(Ok(_)) => {}
            },
        }
    }
    state.change(|w| {
        if w.live.as_ref().is_some_and(|l| l.conn == conn) {
            w.live = None;
        }
    });
}

fn ack(w: &mut super::state::World, text: &str) {
    let Ok(v) = serde_json::from_str::<Value>(text) else {
        w.violation(format!("a Socket Mode frame that is not JSON: {text:.200}"));
        return;
    };
    let Some(id) = v["envelope_id"].as_str() else {
        w.violation(format!(
            "a Socket Mode frame without envelope_id: {text:.200}"
        ));
        return;
    };
    match w.envelope_mut(id) {
        Some(e) => e.acks += 1,
        None => w.violation(format!("an ack of an unknown envelope {id}")),
    }
}

/// Write `disconnect` with `reason` to the live connection and close it shortly after;
/// envelopes from now on wait for the next connection.
pub(super) fn disconnect(state: &Arc<State>, reason: &str) -> bool {
    let live = state.change(|w| w.live.take());
    let Some(live) = live else {
        return false;
    };
    let frame = json!({"type": "disconnect", "reason": reason,
                       "debug_info": {"host": "fake-slack"}});
    let _ = live.tx.send(Outbound::Text(frame.to_string()));
    let cancel = state.cancel.clone();
    tokio::spawn(async move {
        tokio::select! {
            _ = tokio::time::sleep(DISCONNECT_GRACE) => {}
            _ = cancel.cancelled() => {}
        }
        let _ = live.tx.send(Outbound::Close);
    });
    true
}

/// Drop the live socket without a close frame (a lost connection).
pub(super) fn cut(state: &Arc<State>) -> bool {
    let live = state.change(|w| w.live.take());
    live.is_some_and(|l| l.tx.send(Outbound::Cut).is_ok())
}
