//! Files people send: a message event's `files` array read into references (pure, bounded,
//! property-tested against hostile JSON), and fetching one — from its `url_private_download`
//! (or `url_private`) with the bot token, or, when the event gives no URL (a Slack Connect
//! file's `file_access: "check_file_info"`), from the URL `files.info` answers. Only HTTPS
//! on Slack's `files.slack.com` or the configured API's host is fetched, with no redirect
//! followed, so a crafted URL reaches nothing else and the token goes nowhere else.

use serde_json::Value;
use tokio::io::AsyncWrite;

use super::convert::is_slack_id;
use super::web::{ApiError, Body};
use super::Inner;
use crate::media::{allowed_url, check_response, copy_capped, MAX_MEDIA_PER_MESSAGE};
use crate::{MediaError, MediaKind, MediaRef};

/// The host Slack serves files from (downloads and uploads).
pub(super) const FILE_HOST: &str = "files.slack.com";
/// Longest file name kept from Slack (the gateway sanitizes it further).
pub(super) const MAX_NAME: usize = 255;
/// Longest file URL accepted.
pub(super) const MAX_URL: usize = 2048;
/// Longest MIME type kept.
pub(super) const MAX_MIME: usize = 100;

/// The files of a message event, at most [`MAX_MEDIA_PER_MESSAGE`]; an entry with neither
/// a URL nor a valid file id is skipped.
pub(super) fn files_of(event: &Value) -> Vec<MediaRef> {
    let Some(list) = event["files"].as_array() else {
        return Vec::new();
    };
    list.iter()
        .take(MAX_MEDIA_PER_MESSAGE)
        .filter_map(file_ref)
        .collect()
}

/// One file object: its source is its download URL, else its id (fetched through
/// `files.info`).
fn file_ref(f: &Value) -> Option<MediaRef> {
    let source = match (url_of(f), f["id"].as_str().filter(|i| is_slack_id(i))) {
        (Some(url), _) => url.to_owned(),
        (None, Some(id)) => id.to_owned(),
        (None, None) => return None,
    };
    let mime = f["mimetype"]
        .as_str()
        .filter(|m| !m.is_empty() && m.len() <= MAX_MIME)
        .map(str::to_owned);
    let name = [&f["name"], &f["title"]]
        .into_iter()
        .filter_map(Value::as_str)
        .find(|n| !n.trim().is_empty())
        .map(|n| n.chars().take(MAX_NAME).collect());
    Some(MediaRef {
        kind: kind_of(f["subtype"].as_str(), mime.as_deref()),
        source,
        name,
        mime,
        size: f["size"].as_u64(),
    })
}

/// The download URL of a file object, if it has a usable one.
fn url_of(f: &Value) -> Option<&str> {
    [&f["url_private_download"], &f["url_private"]]
        .into_iter()
        .filter_map(Value::as_str)
        .find(|u| !u.is_empty() && u.len() <= MAX_URL)
}

/// A Slack voice clip (`slack_audio`) is a voice note; otherwise the type's family decides.
fn kind_of(subtype: Option<&str>, mime: Option<&str>) -> MediaKind {
    if subtype == Some("slack_audio") {
        return MediaKind::Voice;
    }
    match mime.map(|m| m.split('/').next().unwrap_or("")) {
        Some("image") => MediaKind::Photo,
        Some("audio") => MediaKind::Audio,
        Some("video") => MediaKind::Video,
        _ => MediaKind::Document,
    }
}

/// Whether `url` may be fetched with the bot token.
pub(super) fn allowed(url: &str, api: &str) -> bool {
    allowed_url(url, &[FILE_HOST], api)
}

/// Download a file into `out`, capped at `max` while reading.
pub(super) async fn fetch(
    inner: &Inner,
    media: &MediaRef,
    max: u64,
    out: &mut (dyn AsyncWrite + Unpin + Send),
) -> Result<u64, MediaError> {
    if media.size.is_some_and(|s| s > max) {
        return Err(MediaError::TooBig { limit: max });
    }
    let url = if is_slack_id(&media.source) {
        url_from_info(inner, &media.source, max).await?
    } else {
        media.source.clone()
    };
    if !allowed(&url, &inner.settings.api_url) {
        return Err(MediaError::Refused(
            "the file URL is not on Slack's file host".into(),
        ));
    }
    let resp = inner
        .downloads
        .get(&url)
        .bearer_auth(inner.web.bot_token())
        .send()
        .await
        .map_err(|e| MediaError::Failed(e.without_url().to_string()))?;
    check_response(&resp, max)?;
    // Without `files:read` Slack answers its sign-in page instead of the file.
    let html = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.trim_start().to_ascii_lowercase().starts_with("text/html"));
    if html
        && !media
            .mime
            .as_deref()
            .is_some_and(|m| m.starts_with("text/html"))
    {
        return Err(MediaError::Refused(
            "Slack answered a web page instead of the file (does the app have files:read?)".into(),
        ));
    }
    copy_capped(resp.bytes_stream(), max, out).await
}

/// The download URL `files.info` gives for file `id` (its size checked against `max`).
async fn url_from_info(inner: &Inner, id: &str, max: u64) -> Result<String, MediaError> {
    let answer = inner
        .web
        .call("files.info", Body::Form(vec![("file", id.to_owned())]))
        .await
        .map_err(|e| match e {
            ApiError::Slack { error, .. } => {
                MediaError::Refused(format!("Slack refused files.info: {error}"))
            }
            other => MediaError::Failed(other.to_string()),
        })?;
    let file = &answer["file"];
    if file["size"].as_u64().is_some_and(|s| s > max) {
        return Err(MediaError::TooBig { limit: max });
    }
    url_of(file)
        .map(str::to_owned)
        .ok_or_else(|| MediaError::Refused("Slack gives no download URL for it".into()))
}
