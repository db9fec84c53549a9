//! Files on the fake Discord: attachments of users' messages, served at
//! `/attachments/<id>/<name>` on the fake's own address (Discord's CDN stand-in), and
//! uploads with a created message (multipart: `payload_json` and `files[n]`; 413 past the
//! default 25 MB attachment limit).

use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use super::objects::{self, MessageParts};
use super::rest::Reply;
use super::routes::mentions;
use super::state::{State, World};
use super::types::DUser;
use super::FakeDiscord;
use crate::multipart::Part;

/// Discord's default limit on one attachment.
pub const UPLOAD_LIMIT: usize = 25 * 1024 * 1024;

/// A file uploaded with a created message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentAttachment {
    pub filename: Option<String>,
    pub content_type: Option<String>,
    pub bytes: Vec<u8>,
}

/// `GET /attachments/<id>/<name>`: the attachment's bytes.
pub(super) fn download(state: &State, rest: &str) -> Response {
    match state.change(|w| w.attachments.get(rest).cloned()) {
        Some(bytes) => (
            [("content-type", "application/octet-stream")],
            bytes.as_ref().clone(),
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "Not Found").into_response(),
    }
}

/// A multipart request body as the JSON body the routes read: `payload_json`, with the
/// file parts held aside and named in `__uploads`. `Err` holds what could not be read.
pub(super) fn multipart_body(state: &State, body: &[u8], boundary: &str) -> Result<Value, Value> {
    let parts = crate::multipart::parse(body, boundary).map_err(Value::String)?;
    let mut payload = match parts.iter().find(|p| p.name == "payload_json") {
        Some(p) => serde_json::from_slice::<Value>(&p.data)
            .map_err(|e| Value::String(format!("payload_json: {e}")))?,
        None => json!({}),
    };
    let files: Vec<Part> = parts
        .into_iter()
        .filter(|p| p.filename.is_some() && p.name.starts_with("files["))
        .collect();
    let ids = state.change(|w| {
        files
            .into_iter()
            .map(|p| {
                let id = w.next_id();
                w.uploads.insert(id, p);
                id
            })
            .collect::<Vec<u64>>()
    });
    payload["__uploads"] = json!(ids);
    Ok(payload)
}

/// The files a created message carries (taken from those held aside); 413 past the limit.
pub(super) fn take_uploads(world: &mut World, body: &Value) -> Result<Vec<SentAttachment>, Reply> {
    let ids: Vec<u64> = body["__uploads"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default();
    let parts: Vec<Part> = ids
        .iter()
        .filter_map(|id| world.uploads.remove(id))
        .collect();
    if parts.iter().any(|p| p.data.len() > UPLOAD_LIMIT) {
        return Err(Reply::error(413, 40005, "Request entity too large"));
    }
    Ok(parts
        .into_iter()
        .map(|p| SentAttachment {
            filename: p.filename,
            content_type: p.content_type,
            bytes: p.data,
        })
        .collect())
}

impl FakeDiscord {
    /// Pushes MESSAGE_CREATE for a DM from `author` with attachments (`(name, type, bytes)`),
    /// each served at its `url` on the fake. Returns the DM channel id and the message id.
    pub fn dm_message_with_files(
        &self,
        author: DUser,
        content: &str,
        files: Vec<(String, String, Vec<u8>)>,
    ) -> (u64, u64) {
        self.dm_with_attachments(author, content, files, None)
    }

    /// Pushes MESSAGE_CREATE for a DM whose one attachment claims to be at `url` (a
    /// crafted attachment: nothing is served there by the fake).
    pub fn dm_message_with_attachment_url(
        &self,
        author: DUser,
        content: &str,
        url: &str,
    ) -> (u64, u64) {
        self.dm_with_attachments(
            author,
            content,
            vec![("secret.png".into(), "image/png".into(), Vec::new())],
            Some(url),
        )
    }

    fn dm_with_attachments(
        &self,
        author: DUser,
        content: &str,
        files: Vec<(String, String, Vec<u8>)>,
        url: Option<&str>,
    ) -> (u64, u64) {
        let base = self.api_url();
        self.inner.state.change(|world| {
            world.remember_user(&author);
            let channel_id = world.dm_channel(&author);
            let id = world.next_id();
            world.user_messages.insert(id, channel_id);
            let mentions = mentions(world, content);
            let mut message = objects::message(MessageParts {
                id,
                channel_id,
                guild_id: None,
                author: objects::user(&author),
                content,
                mentions,
                member: None,
                reply_to: None,
                webhook: false,
            });
            let mut attachments = Vec::new();
            for (name, content_type, bytes) in files {
                let aid = world.next_id();
                let key = format!("{aid}/{name}");
                attachments.push(json!({
                    "id": aid.to_string(),
                    "filename": name,
                    "size": bytes.len(),
                    "url": url.map_or_else(|| format!("{base}/attachments/{key}"), str::to_owned),
                    "proxy_url": format!("{base}/attachments/{key}"),
                    "content_type": content_type,
                }));
                world.attachments.insert(key, Arc::new(bytes));
            }
            message["attachments"] = Value::Array(attachments);
            world.push_dispatch("MESSAGE_CREATE", message);
            (channel_id, id)
        })
    }
}
