//! Files on the fake Telegram: the files users send (held by `file_id`), `getFile` with
//! the Bot API's 20 MB download limit, the download URL `/file/bot<TOKEN>/<file_path>`,
//! and the uploads `sendPhoto` / `sendDocument` (multipart) with their limits (10 MB for a
//! photo, 50 MB for a document).

use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use super::messages::{chat_id, check_known_chat};
use super::state::State;
use super::wire::{int, text, Reply};
use crate::multipart::Part;

/// `getFile` refuses files larger than this ("Bad Request: file is too big").
pub const DOWNLOAD_LIMIT: usize = 20 * 1024 * 1024;
/// `sendPhoto` refuses a photo larger than this.
pub const PHOTO_LIMIT: usize = 10 * 1024 * 1024;
/// `sendDocument` refuses a file larger than this (413).
pub const DOCUMENT_LIMIT: usize = 50 * 1024 * 1024;

/// A file a user sent, as the fake keeps it.
#[derive(Debug, Clone)]
pub(super) struct HeldFile {
    pub(super) path: String,
    pub(super) bytes: Arc<Vec<u8>>,
}

/// A file the bot uploaded with `sendPhoto` or `sendDocument`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentFile {
    /// `sendPhoto` or `sendDocument`.
    pub method: String,
    pub chat_id: i64,
    pub file_name: Option<String>,
    pub content_type: Option<String>,
    pub bytes: Vec<u8>,
    pub caption: Option<String>,
    pub message_id: i64,
}

/// `getFile`: the file's path for the download URL.
pub(super) fn get_file(state: &State, params: &Value) -> Reply {
    let id = text(params, "file_id").unwrap_or_default();
    let Some(file) = state.read(|world| world.files.get(&id).cloned()) else {
        return Reply::bad_request("invalid file_id");
    };
    if file.bytes.len() > DOWNLOAD_LIMIT {
        return Reply::bad_request("file is too big");
    }
    Reply::Ok(json!({
        "file_id": id,
        "file_unique_id": format!("u{id}"),
        "file_size": file.bytes.len(),
        "file_path": file.path,
    }))
}

/// `GET /file/bot<TOKEN>/<file_path>` (the path percent-decoded): the file's bytes.
pub(super) fn download(state: &State, rest: &str) -> Response {
    let Some((token, path)) = rest.split_once('/') else {
        return (StatusCode::NOT_FOUND, "Not Found").into_response();
    };
    if token.strip_prefix("bot") != Some(state.token.as_str()) {
        return (StatusCode::UNAUTHORIZED, "Unauthorized").into_response();
    }
    let path = super::server::percent_decode(path);
    let found = state.read(|world| {
        world
            .files
            .values()
            .find(|f| f.path == path && f.bytes.len() <= DOWNLOAD_LIMIT)
            .map(|f| Arc::clone(&f.bytes))
    });
    match found {
        Some(bytes) => (
            [("content-type", "application/octet-stream")],
            bytes.as_ref().clone(),
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "Not Found").into_response(),
    }
}

/// `sendPhoto` / `sendDocument` with the file uploaded as a multipart part.
pub(super) fn send_file(state: &State, method: &str, params: &Value, uploads: &[Part]) -> Reply {
    let chat = match chat_id(params) {
        Ok(c) => c,
        Err(r) => return r,
    };
    let field = if method == "sendPhoto" {
        "photo"
    } else {
        "document"
    };
    // teloxide (like most clients) sends `photo=attach://<name>` and the file as part
    // `<name>`; a part named after the field itself is taken too.
    let attached = text(params, field)
        .and_then(|v| v.strip_prefix("attach://").map(str::to_owned))
        .unwrap_or_else(|| field.to_owned());
    let Some(upload) = uploads
        .iter()
        .find(|p| p.name == attached || p.name == field)
    else {
        // A file_id or URL instead of an upload: the gateway always uploads.
        state.change(|w| w.violation(format!("{method} without an uploaded `{field}` part")));
        return Reply::bad_request(format!("there is no {field} in the request"));
    };
    if method == "sendPhoto" && upload.data.len() > PHOTO_LIMIT {
        return Reply::bad_request("PHOTO_INVALID_DIMENSIONS");
    }
    if upload.data.len() > DOCUMENT_LIMIT {
        return Reply::error(413, "Request Entity Too Large");
    }
    if upload.data.is_empty() {
        return Reply::bad_request("file must be non-empty");
    }
    let caption = text(params, "caption").filter(|c| !c.is_empty());
    if caption.as_ref().is_some_and(|c| c.chars().count() > 1024) {
        return Reply::bad_request("message caption is too long");
    }
    let thread_id = int(params, "message_thread_id").ok().flatten();
    state.change(|world| {
        check_known_chat(world, method, chat);
        let message_id = world.next_message_id(chat);
        world.sent_files.push(SentFile {
            method: method.to_owned(),
            chat_id: chat,
            file_name: upload.filename.clone(),
            content_type: upload.content_type.clone(),
            bytes: upload.data.clone(),
            caption: caption.clone(),
            message_id,
        });
        let mut message = json!({
            "message_id": message_id,
            "from": super::types::User::bot().to_json(),
            "chat": world.chat_json(chat),
            "date": super::types::unix_now(),
        });
        if let Some(t) = thread_id {
            message["message_thread_id"] = json!(t);
        }
        if let Some(c) = &caption {
            message["caption"] = json!(c);
        }
        let size = upload.data.len();
        let meta = json!({"file_id": format!("sent{message_id}"), "file_unique_id": format!("usent{message_id}"), "file_size": size});
        if method == "sendPhoto" {
            let mut p = meta;
            p["width"] = json!(800);
            p["height"] = json!(600);
            message["photo"] = json!([p]);
        } else {
            let mut d = meta;
            if let Some(n) = &upload.filename {
                d["file_name"] = json!(n);
            }
            message["document"] = d;
        }
        Reply::Ok(message)
    })
}
