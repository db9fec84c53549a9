//! The web chat's files over HTTP (docs/media.md): `POST /api/webchat/uploads` stages a
//! browser's file under a fresh id (streamed to disk, capped at `media.maxBytes` while it
//! arrives), which the browser then names in its `message` frame; `GET
//! /api/webchat/files/{id}` serves a file the agent sent (the outbox's copy, by the id of
//! its folder — never a path from the client) as an attachment of a type no browser
//! renders, for `media.keepDays` after it was sent (`media::sweep` removes it then).
//! Uploads no message took are removed by the sweep too.

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::{stream, StreamExt};
use switchboard_channels::webchat::files::valid_id;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::answers::Uploaded;
use super::error::{ApiError, Json};
use super::AppState;

/// Bytes read at a time from a file served.
const CHUNK: usize = 64 * 1024;
/// Most bytes of a refused upload read (and dropped) before the refusal is answered, so
/// the client, still writing, reads the 413 instead of a broken connection; past this
/// the connection is simply closed.
const DRAIN_MAX: u64 = 64 * 1024 * 1024;

/// Where uploads wait for the message that names them (`media`'s, which sweeps them).
pub use crate::media::upload_dir;

fn too_big(max: u64) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!(
            "the file is larger than the {} limit (media.maxBytes)",
            crate::media::note::human_size(max)
        ),
    )
}

fn internal(e: std::io::Error) -> ApiError {
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        format!("cannot store the upload: {e}"),
    )
}

/// `POST /api/webchat/uploads`: the body is the file. Answers `{"id", "size"}`.
pub(super) async fn upload(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Uploaded>, ApiError> {
    let max = state.rt.config().media.max_bytes;
    let claimed = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if claimed.is_some_and(|n| n > max) {
        drain(body.into_data_stream(), DRAIN_MAX).await;
        return Err(too_big(max));
    }
    let dir = upload_dir(&state.rt.home.state_dir);
    tokio::fs::create_dir_all(&dir).await.map_err(internal)?;
    crate::media::sweep::sweep_files(&dir, crate::media::sweep::UPLOAD_STALE).await;
    let id = uuid::Uuid::new_v4().simple().to_string();
    // Written as `<id>.part` (never a valid id) and renamed once whole.
    let part = dir.join(format!("{id}.part"));
    let mut file = tokio::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&part)
        .await
        .map_err(internal)?;
    let written = copy_body(body, max, &mut file).await;
    drop(file);
    let size = match written {
        Ok(0) => Err(ApiError::bad_request("empty upload: the body is the file")),
        other => other,
    };
    let size = match size {
        Ok(n) => n,
        Err(e) => {
            let _ = tokio::fs::remove_file(&part).await;
            return Err(e);
        }
    };
    tokio::fs::rename(&part, dir.join(&id))
        .await
        .map_err(internal)?;
    Ok(Json(Uploaded { id, size }))
}

/// Copy the request body into `file`, refused at the first chunk past `max`.
async fn copy_body(body: Body, max: u64, file: &mut tokio::fs::File) -> Result<u64, ApiError> {
    let mut chunks = body.into_data_stream();
    let mut n: u64 = 0;
    while let Some(chunk) = chunks.next().await {
        let chunk =
            chunk.map_err(|e| ApiError::bad_request(format!("the upload broke off: {e}")))?;
        n += chunk.len() as u64;
        if n > max {
            drain(chunks, DRAIN_MAX).await;
            return Err(too_big(max));
        }
        file.write_all(&chunk).await.map_err(internal)?;
    }
    file.sync_all().await.map_err(internal)?;
    Ok(n)
}

/// Read and drop the rest of a refused body, at most `max` bytes.
async fn drain(mut chunks: axum::body::BodyDataStream, max: u64) {
    let mut n: u64 = 0;
    while let Some(Ok(chunk)) = chunks.next().await {
        n += chunk.len() as u64;
        if n > max {
            break;
        }
    }
}

/// `GET /api/webchat/files/{id}`: the one regular file of the outbox copy `{id}`. An id
/// of the right form whose copy is gone answers 410 with how long files are kept.
pub(super) async fn download(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    if !valid_id(&id) {
        return Err(ApiError::not_found("no such file"));
    }
    let days = state.rt.config().media.keep_days;
    let gone = || {
        ApiError::new(
            StatusCode::GONE,
            format!(
                "this file is no longer available: files sent in the web chat can be downloaded for {days} day{} after they are sent (media.keepDays)",
                if days == 1 { "" } else { "s" }
            ),
        )
    };
    let dir = crate::outbox::copies::out_dir(&state.rt.home.state_dir).join(&id);
    let mut entries = tokio::fs::read_dir(&dir).await.map_err(|_| gone())?;
    let mut found = None;
    while let Ok(Some(entry)) = entries.next_entry().await {
        // `file_type` does not follow links: a link is not served.
        if entry.file_type().await.is_ok_and(|t| t.is_file()) {
            found = Some(entry);
            break;
        }
    }
    let entry = found.ok_or_else(gone)?;
    let name = entry.file_name().to_string_lossy().into_owned();
    let file = tokio::fs::File::open(entry.path())
        .await
        .map_err(|_| gone())?;
    let len = file.metadata().await.map_err(|_| gone())?.len();
    let chunks = stream::unfold(Some(file), |file| async move {
        let mut file = file?;
        let mut buf = vec![0u8; CHUNK];
        match file.read(&mut buf).await {
            Ok(0) => None,
            Ok(n) => {
                buf.truncate(n);
                Some((Ok::<_, std::io::Error>(buf), Some(file)))
            }
            Err(e) => Some((Err(e), None)),
        }
    });
    let mut response = Body::from_stream(chunks).into_response();
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Ok(v) = HeaderValue::from_str(&disposition(&name)) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    Ok(response)
}

/// `attachment` with an ASCII `filename` (anything else `_`) and the exact name as
/// `filename*` (RFC 6266/8187, percent-encoded UTF-8).
pub(super) fn disposition(name: &str) -> String {
    let ascii: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ' ') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut encoded = String::new();
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'~') {
            encoded.push(char::from(b));
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    format!("attachment; filename=\"{ascii}\"; filename*=UTF-8''{encoded}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Catches: a quote, a newline or a non-ASCII name breaking the header out of its
    /// value, or the name lost.
    #[test]
    fn the_disposition_is_one_safe_header_value() {
        let d = disposition("r\"e\r\nport é.pdf");
        assert_eq!(
            d,
            "attachment; filename=\"r_e__port _.pdf\"; filename*=UTF-8''r%22e%0D%0Aport%20%C3%A9.pdf"
        );
        assert!(HeaderValue::from_str(&d).is_ok());
    }
}
