//! Files people share with the bot: the fake hosts their bytes at
//! `GET /files-pri/<team>-<id>/…` (its own address standing in for `files.slack.com`),
//! given only with the bot token (403 otherwise, as Slack refuses a file without
//! `files:read` auth) or, when a test says so, a redirect elsewhere; answers `files.info`
//! with the full file object, and posts `file_share` message events carrying them. Every fetch of a hosted file is recorded.

use std::sync::Arc;

use axum::extract::{Path, State as Axum};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value};

use super::state::{State, World};
use super::types::{SUser, TEAM_ID};
use super::FakeSlack;

/// A file the fake hosts.
#[derive(Debug, Clone)]
pub(super) struct Hosted {
    /// The full file object (`files.info`'s `file`).
    pub(super) object: Value,
    pub(super) bytes: Arc<Vec<u8>>,
    /// Answer its URL with `302 Found` to here instead of the bytes.
    pub(super) redirect: Option<String>,
}

/// One request for a hosted file's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Download {
    /// The file id (`F…`), or the path asked for when it names no file.
    pub file: String,
    /// Whether it carried the bot token.
    pub authorized: bool,
    pub status: u16,
}

/// The form Slack gives a file in an event when the bot must ask `files.info` for it (a
/// Slack Connect file): its id, no name, no URL.
pub fn check_file_info(file: &Value) -> Value {
    json!({"id": file["id"], "mode": "file_access", "file_access": "check_file_info",
        "created": 1_700_000_000, "user": file["user"]})
}

impl FakeSlack {
    /// Host `bytes` as a file `name` of type `mimetype` shared by `user`; returns the file
    /// object Slack puts in a message's `files` (tests may alter it before sending).
    pub fn host_file(&self, user: &SUser, name: &str, mimetype: &str, bytes: Vec<u8>) -> Value {
        let base = self.inner.state.base.clone();
        self.state().change(|w| {
            let id = w.id("F");
            let key = format!("{TEAM_ID}-{id}");
            let object = json!({"id": id, "created": 1_700_000_000, "timestamp": 1_700_000_000,
                "name": name, "title": name, "mimetype": mimetype,
                "filetype": name.rsplit('.').next().unwrap_or("binary"),
                "user": user.id, "user_team": TEAM_ID, "mode": "hosted", "editable": false,
                "is_external": false, "external_type": "", "is_public": false,
                "size": bytes.len(),
                "url_private": format!("{base}/files-pri/{key}/{name}"),
                "url_private_download": format!("{base}/files-pri/{key}/download/{name}"),
                "permalink": format!("https://fake.slack.invalid/files/{}/{id}/{name}", user.id)});
            w.hosted.insert(
                id,
                Hosted {
                    object: object.clone(),
                    bytes: Arc::new(bytes),
                    redirect: None,
                },
            );
            object
        })
    }

    /// `user` shares `files` with the bot in their DM, with `text` (may be empty).
    pub fn dm_with_files(&self, user: &SUser, text: &str, files: Vec<Value>) -> String {
        let channel = self.dm_channel(user);
        self.message_with(&channel, "im", user, text, None, files)
    }

    /// `user` shares `files` at the top of `channel` with `text`.
    pub fn channel_message_with_files(
        &self,
        channel: &str,
        user: &SUser,
        text: &str,
        files: Vec<Value>,
    ) -> String {
        self.message_with(channel, "channel", user, text, None, files)
    }

    /// `user` shares `files` in the thread under `thread_ts` in `channel`, with `text`.
    pub fn thread_reply_with_files(
        &self,
        channel: &str,
        thread_ts: &str,
        user: &SUser,
        text: &str,
        files: Vec<Value>,
    ) -> String {
        self.message_with(channel, "channel", user, text, Some(thread_ts), files)
    }

    /// Answer the URLs of hosted `file` with a redirect to `to` (a client that follows it
    /// leaves Slack's hosts).
    pub fn redirect_file(&self, file: &Value, to: &str) {
        let id = file["id"].as_str().unwrap_or_default().to_owned();
        self.state().change(|w| {
            if let Some(h) = w.hosted.get_mut(&id) {
                h.redirect = Some(to.to_owned());
            }
        });
    }

    /// Every request for a hosted file's bytes so far.
    pub fn downloads(&self) -> Vec<Download> {
        self.state().read(|w| w.downloads.clone())
    }
}

/// A `message` event turned into a `file_share` carrying `files`, as Slack sends it.
pub(super) fn with_files(mut payload: Value, files: &[Value]) -> Value {
    if !files.is_empty() {
        let event = &mut payload["event"];
        if event["type"] == "message" {
            event["subtype"] = json!("file_share");
            event["upload"] = json!(true);
            event["display_as_bot"] = json!(false);
        }
        event["files"] = json!(files);
    }
    payload
}

/// `files.info` (bot token, checked by the caller): the full object of a hosted file.
pub(super) fn info(w: &mut World, p: &Map<String, Value>) -> Result<Value, String> {
    let id = p.get("file").and_then(Value::as_str).unwrap_or_default();
    match w.hosted.get(id) {
        Some(h) => {
            Ok(json!({"file": h.object, "comments": [], "response_metadata": {"next_cursor": ""}}))
        }
        None => Err("file_not_found".into()),
    }
}

/// `GET /files-pri/<team>-<id>/<name>` or `…/download/<name>`: the bytes, with the bot
/// token only.
pub(super) async fn download(
    Axum(state): Axum<Arc<State>>,
    Path(rest): Path<String>,
    headers: HeaderMap,
) -> Response {
    let authorized = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|t| t == state.bot_token);
    let id = rest
        .split('/')
        .next()
        .and_then(|k| k.strip_prefix(&format!("{TEAM_ID}-")))
        .unwrap_or_default()
        .to_owned();
    state.change(|w| {
        let found = w
            .hosted
            .get(&id)
            .map(|h| (h.bytes.clone(), h.redirect.clone()));
        let (status, response) = match (found, authorized) {
            (Some((_, Some(to))), true) => (
                StatusCode::FOUND,
                (StatusCode::FOUND, [("location", to)]).into_response(),
            ),
            (None, _) => (
                StatusCode::NOT_FOUND,
                (StatusCode::NOT_FOUND, "file not found").into_response(),
            ),
            (Some(_), false) => (
                StatusCode::FORBIDDEN,
                (StatusCode::FORBIDDEN, "not_authed").into_response(),
            ),
            (Some((bytes, None)), true) => (
                StatusCode::OK,
                (
                    [("content-type", "application/octet-stream")],
                    bytes.as_ref().clone(),
                )
                    .into_response(),
            ),
        };
        w.downloads.push(Download {
            file: if id.is_empty() {
                rest.clone()
            } else {
                id.clone()
            },
            authorized,
            status: status.as_u16(),
        });
        response
    })
}
