//! Media as data: what an inbound message carries (a reference its adapter can fetch),
//! the file an outbound message attaches, and the bounded streaming download the adapters
//! share. Everything a platform says about a file (name, type, size) is untrusted: the
//! gateway sanitizes names and the download enforces the cap while it reads.

use std::path::PathBuf;
use std::time::Duration;

use futures::{Stream, StreamExt};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncWrite, AsyncWriteExt};

/// Longest a single download may take, start to end: past it the download is abandoned
/// (a platform or CDN that trickles bytes never holds an inbound message forever).
pub const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(120);

/// Most media one inbound message may carry (Discord allows 10 attachments; Telegram one).
pub const MAX_MEDIA_PER_MESSAGE: usize = 10;

/// What kind of media arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MediaKind {
    Photo,
    Document,
    Voice,
    Audio,
    Video,
    VideoNote,
}

impl MediaKind {
    /// How the agent's note names it ("photo", "voice note", …).
    pub fn label(self) -> &'static str {
        match self {
            MediaKind::Photo => "photo",
            MediaKind::Document => "file",
            MediaKind::Voice => "voice note",
            MediaKind::Audio => "audio",
            MediaKind::Video => "video",
            MediaKind::VideoNote => "video note",
        }
    }

    /// Whether a transcription provider is asked for its words.
    pub fn is_speech(self) -> bool {
        matches!(self, MediaKind::Voice | MediaKind::Audio)
    }
}

/// A file a message carries, as its platform names it: the adapter that made it can fetch
/// it with [`crate::Channel::fetch_media`]. Nothing here is trusted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MediaRef {
    pub kind: MediaKind,
    /// The platform's handle: a Telegram `file_id`, a Discord attachment URL, a web chat
    /// upload id.
    pub source: String,
    /// The file name the sender's client gave, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The MIME type the platform claims, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime: Option<String>,
    /// The size the platform claims, if any (the download checks the real one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

/// How an outbound file is shown: inline as a picture, or as a file to download.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileKind {
    Photo,
    Document,
}

/// A file attached to an outbound message: a copy the gateway owns (taken when the agent
/// sent it, so the agent changing its workspace afterwards changes nothing), read by the
/// adapter at delivery.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutboundFile {
    /// Absolute path of the gateway's copy.
    pub path: PathBuf,
    /// The name the recipient sees (already sanitized).
    pub name: String,
    pub mime: String,
    pub kind: FileKind,
    pub size: u64,
}

/// Why a file could not be fetched.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MediaError {
    /// Larger than the cap (or the platform's own download limit).
    #[error("the file is larger than {limit} bytes")]
    TooBig { limit: u64 },
    /// The reference is not one this adapter fetches (a URL off the platform's hosts, an
    /// unknown upload id, a file the platform refuses to give).
    #[error("refused: {0}")]
    Refused(String),
    /// Network failure, timeout, a platform error.
    #[error("download failed: {0}")]
    Failed(String),
    /// This channel cannot fetch media.
    #[error("this channel cannot fetch files")]
    Unsupported,
}

/// Copy `body` into `out`, refusing it as soon as more than `max` bytes arrived (never
/// after reading it all), within [`DOWNLOAD_TIMEOUT`]. Returns the bytes written.
pub async fn copy_capped<S, B, E>(
    body: S,
    max: u64,
    out: &mut (dyn AsyncWrite + Unpin + Send),
) -> Result<u64, MediaError>
where
    S: Stream<Item = Result<B, E>> + Send,
    B: AsRef<[u8]>,
    E: std::fmt::Display,
{
    let copy = async {
        let mut body = std::pin::pin!(body);
        let mut written: u64 = 0;
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|e| MediaError::Failed(e.to_string()))?;
            let chunk = chunk.as_ref();
            written += chunk.len() as u64;
            if written > max {
                return Err(MediaError::TooBig { limit: max });
            }
            out.write_all(chunk)
                .await
                .map_err(|e| MediaError::Failed(format!("cannot write the file: {e}")))?;
        }
        out.flush()
            .await
            .map_err(|e| MediaError::Failed(format!("cannot write the file: {e}")))?;
        Ok(written)
    };
    match tokio::time::timeout(DOWNLOAD_TIMEOUT, copy).await {
        Ok(r) => r,
        Err(_) => Err(MediaError::Failed(format!(
            "no complete file within {}s",
            DOWNLOAD_TIMEOUT.as_secs()
        ))),
    }
}

/// A download's response checked before its body is read: a non-success status is a
/// failure, a declared length over `max` is refused at once.
pub fn check_response(resp: &reqwest::Response, max: u64) -> Result<(), MediaError> {
    if !resp.status().is_success() {
        return Err(MediaError::Failed(format!("HTTP {}", resp.status())));
    }
    match resp.content_length() {
        Some(len) if len > max => Err(MediaError::TooBig { limit: max }),
        _ => Ok(()),
    }
}

/// Longest wait for a download's answer to start.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// Whether a platform file `url` may be fetched (or receive an upload): HTTPS on one of the
/// platform's `hosts` (default port), or the same scheme, host and port as the configured
/// API base `api` (where a test's fake serves its files). Nothing else: no other host, no
/// userinfo.
pub fn allowed_url(url: &str, hosts: &[&str], api: &str) -> bool {
    let (Ok(u), Ok(base)) = (reqwest::Url::parse(url), reqwest::Url::parse(api)) else {
        return false;
    };
    if !u.username().is_empty() || u.password().is_some() {
        return false;
    }
    let platform = u.scheme() == "https"
        && u.port().is_none()
        && u.host_str().is_some_and(|h| hosts.contains(&h));
    let same_base = u.scheme() == base.scheme()
        && u.host_str().is_some()
        && u.host_str() == base.host_str()
        && u.port_or_known_default() == base.port_or_known_default();
    platform || same_base
}

/// A client for platform file downloads: no redirects (a redirect could leave the allowed
/// hosts, or carry a bearer token elsewhere), bounded connect and total time.
pub fn download_client() -> Result<reqwest::Client, reqwest::Error> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(DOWNLOAD_TIMEOUT)
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks(sizes: &[usize]) -> impl Stream<Item = Result<Vec<u8>, String>> + Send {
        let items: Vec<Result<Vec<u8>, String>> = sizes.iter().map(|n| Ok(vec![7u8; *n])).collect();
        futures::stream::iter(items)
    }

    #[tokio::test]
    async fn the_cap_stops_the_copy_at_the_chunk_that_passes_it() {
        let mut out = Vec::new();
        let got = copy_capped(chunks(&[4, 4, 4]), 10, &mut out).await;
        assert_eq!(got, Err(MediaError::TooBig { limit: 10 }));
        // Only what fit before the passing chunk was written.
        assert_eq!(out.len(), 8);
        let mut out = Vec::new();
        assert_eq!(copy_capped(chunks(&[4, 4, 2]), 10, &mut out).await, Ok(10));
        assert_eq!(out, vec![7u8; 10]);
    }

    /// Catches: a stream that never ends holding the download (and the inbound message)
    /// forever.
    #[tokio::test(start_paused = true)]
    async fn a_stalled_download_times_out() {
        let stalled = futures::stream::pending::<Result<Vec<u8>, String>>();
        let mut out = Vec::new();
        let got = copy_capped(stalled, 10, &mut out).await;
        assert!(
            matches!(got, Err(MediaError::Failed(ref m)) if m.contains("within")),
            "{got:?}"
        );
    }
}
