//! Media on the fake model: the checks of image parts (OpenAI `image_url` with a `data:`
//! URL, Anthropic `image` blocks with a base64 source; only in user messages, only the
//! types the APIs take, valid base64, at most 20 MB / 5 MB decoded), and the OpenAI
//! `POST /v1/audio/transcriptions` endpoint (multipart `model` + `file`; 25 MB limit).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State as Shared;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use super::state::State;

/// Types both APIs take as images.
const IMAGE_TYPES: &[&str] = &["image/jpeg", "image/png", "image/gif", "image/webp"];
/// OpenAI's limit on one image.
const OPENAI_IMAGE_LIMIT: usize = 20 * 1024 * 1024;
/// Anthropic's limit on one image.
const ANTHROPIC_IMAGE_LIMIT: usize = 5 * 1024 * 1024;
/// OpenAI's limit on an audio file to transcribe.
pub(super) const AUDIO_LIMIT: usize = 25 * 1024 * 1024;

/// The problems of the image parts of a request's messages.
pub(super) fn check_images(body: &Value, anthropic: bool) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(messages) = body["messages"].as_array() else {
        return problems;
    };
    for (i, m) in messages.iter().enumerate() {
        let Some(parts) = m["content"].as_array() else {
            continue;
        };
        for (j, p) in parts.iter().enumerate() {
            let at = format!("messages[{i}].content[{j}]");
            let (kind, limit) = if anthropic {
                ("image", ANTHROPIC_IMAGE_LIMIT)
            } else {
                ("image_url", OPENAI_IMAGE_LIMIT)
            };
            if p["type"] != kind {
                continue;
            }
            if m["role"] != "user" {
                problems.push(format!("{at}: an image outside a user message"));
            }
            let (mime, data) = if anthropic {
                if p["source"]["type"] != "base64" {
                    problems.push(format!("{at}: source.type is not base64"));
                }
                (
                    p["source"]["media_type"].as_str().unwrap_or("").to_owned(),
                    p["source"]["data"].as_str().unwrap_or("").to_owned(),
                )
            } else {
                let url = p["image_url"]["url"].as_str().unwrap_or("");
                match url
                    .strip_prefix("data:")
                    .and_then(|r| r.split_once(";base64,"))
                {
                    Some((mime, data)) => (mime.to_owned(), data.to_owned()),
                    None => {
                        problems.push(format!("{at}: image_url.url is not a base64 data: URL"));
                        continue;
                    }
                }
            };
            if !IMAGE_TYPES.contains(&mime.as_str()) {
                problems.push(format!("{at}: image type {mime:?} is not supported"));
            }
            match decoded_len(&data) {
                None => problems.push(format!("{at}: the image data is not valid base64")),
                Some(n) if n > limit => {
                    problems.push(format!("{at}: the image is {n} bytes, over {limit}"))
                }
                Some(_) => {}
            }
        }
    }
    problems
}

/// The decoded length of standard base64 with padding, if `data` is that.
fn decoded_len(data: &str) -> Option<usize> {
    let b = data.as_bytes();
    if b.is_empty() || b.len() % 4 != 0 {
        return None;
    }
    let pad = b.iter().rev().take_while(|&&c| c == b'=').count();
    let body_ok = b[..b.len() - pad]
        .iter()
        .all(|c| c.is_ascii_alphanumeric() || *c == b'+' || *c == b'/');
    (pad <= 2 && body_ok).then(|| b.len() / 4 * 3 - pad)
}

/// The images of one recorded request body: (type, decoded bytes) per image part, both
/// dialects.
pub fn images_of(body: &Value) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for m in body["messages"].as_array().into_iter().flatten() {
        for p in m["content"].as_array().into_iter().flatten() {
            if p["type"] == "image_url" {
                if let Some((mime, data)) = p["image_url"]["url"]
                    .as_str()
                    .and_then(|u| u.strip_prefix("data:"))
                    .and_then(|r| r.split_once(";base64,"))
                {
                    out.push((mime.to_owned(), decoded_len(data).unwrap_or(0)));
                }
            } else if p["type"] == "image" {
                out.push((
                    p["source"]["media_type"].as_str().unwrap_or("").to_owned(),
                    decoded_len(p["source"]["data"].as_str().unwrap_or("")).unwrap_or(0),
                ));
            }
        }
    }
    out
}

/// A transcription request as the fake saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transcription {
    pub model: String,
    pub file_name: Option<String>,
    pub bytes: usize,
}

/// `POST /v1/audio/transcriptions`: `{"text": "transcript of <name> (<n> bytes)"}`.
pub(super) async fn transcriptions_route(
    Shared(state): Shared<Arc<State>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let error = |code: StatusCode, msg: &str| {
        (code, axum::Json(json!({"error": {"message": msg}}))).into_response()
    };
    if !headers.contains_key(header::AUTHORIZATION) {
        return error(StatusCode::UNAUTHORIZED, "missing API key");
    }
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let Some(boundary) = crate::multipart::boundary(content_type) else {
        state.violation("a transcription request that is not multipart/form-data".into());
        return error(StatusCode::BAD_REQUEST, "expected multipart/form-data");
    };
    let parts = match crate::multipart::parse(&body, &boundary) {
        Ok(p) => p,
        Err(e) => {
            state.violation(format!("transcription: {e}"));
            return error(StatusCode::BAD_REQUEST, &e);
        }
    };
    let model = parts.iter().find(|p| p.name == "model").map(|p| p.text());
    let file = parts
        .iter()
        .find(|p| p.name == "file" && p.filename.is_some());
    let (Some(model), Some(file)) = (model, file) else {
        state.violation("a transcription request without `model` and a `file` part".into());
        return error(StatusCode::BAD_REQUEST, "model and file are required");
    };
    if file.data.len() > AUDIO_LIMIT {
        return error(
            StatusCode::PAYLOAD_TOO_LARGE,
            "Maximum content size limit exceeded",
        );
    }
    let name = file.filename.clone();
    state.transcribed(Transcription {
        model,
        file_name: name.clone(),
        bytes: file.data.len(),
    });
    axum::Json(json!({
        "text": format!("transcript of {} ({} bytes)", name.unwrap_or_default(), file.data.len())
    }))
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_lengths() {
        assert_eq!(decoded_len("aGk="), Some(2));
        assert_eq!(decoded_len("aGk"), None);
        assert_eq!(decoded_len("a*k="), None);
    }
}
