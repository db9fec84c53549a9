//! Files in the web chat: a browser uploads a file over HTTP (the gateway's upload route
//! stages it under an id, see [`UploadDir`]) and names the ids in its `message` frame; the
//! gateway fetches each through [`crate::Channel::fetch_media`] into the agent's `inbox/`
//! like any platform's file. A file the agent sends is a `file` frame naming the id of the
//! outbox's copy, which the browser downloads from the gateway's token-protected route.

use std::path::{Path, PathBuf};

use futures::stream;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWrite};

use crate::media::{copy_capped, MediaError, MAX_MEDIA_PER_MESSAGE};
use crate::{MediaKind, MediaRef};

/// Length of an upload or download id: 32 lowercase hex digits (a v4 UUID, simple form).
pub const ID_LEN: usize = 32;
/// Longest file name a frame may give (bytes; the gateway sanitizes and shortens it).
pub const MAX_NAME: usize = 1024;
/// Largest file the web chat offers for download (the gateway's copy of it).
pub const DOWNLOAD_LIMIT: u64 = 100 * 1024 * 1024;
/// Bytes read at a time from a staged upload.
const CHUNK: usize = 64 * 1024;

/// Whether `id` is an upload/download id: exactly [`ID_LEN`] lowercase hex digits, so it
/// is one path component that names nothing but what the gateway made.
pub fn valid_id(id: &str) -> bool {
    id.len() == ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A file named in a `message` frame: an upload's id, and the name and type the browser
/// gave (both untrusted).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UploadRef {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub mime: Option<String>,
}

/// A file the agent sent, as the browser is told of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileLink {
    /// The download id (`GET /api/webchat/files/{id}`).
    pub id: String,
    pub name: String,
    pub size: u64,
    pub mime: String,
}

/// The media of a frame's files, or why they are refused.
pub fn media_of(files: &[UploadRef]) -> Result<Vec<MediaRef>, String> {
    if files.len() > MAX_MEDIA_PER_MESSAGE {
        return Err(format!(
            "too many files: at most {MAX_MEDIA_PER_MESSAGE} per message"
        ));
    }
    files
        .iter()
        .map(|f| {
            if !valid_id(&f.id) {
                return Err("unknown upload id".to_string());
            }
            if f.name.len() > MAX_NAME || f.mime.as_ref().is_some_and(|m| m.len() > 255) {
                return Err(format!("a file name is longer than {MAX_NAME} bytes"));
            }
            let image = f.mime.as_deref().is_some_and(|m| m.starts_with("image/"));
            Ok(MediaRef {
                kind: if image {
                    MediaKind::Photo
                } else {
                    MediaKind::Document
                },
                source: f.id.clone(),
                name: Some(f.name.clone()),
                mime: f.mime.clone(),
                size: None,
            })
        })
        .collect()
}

/// Where uploads wait for their message: `<dir>/<id>`, written by the gateway's upload
/// route, read (and removed) once by the message that names it.
#[derive(Debug, Clone)]
pub struct UploadDir(pub PathBuf);

impl UploadDir {
    /// The staged file of `id` (checked), if it is a valid id.
    pub fn path_of(&self, id: &str) -> Option<PathBuf> {
        valid_id(id).then(|| self.0.join(id))
    }

    /// Copy upload `id` into `out`, capped at `max`, then remove it (an upload is taken by
    /// one message). Only a regular file is read, never through a link.
    pub async fn fetch(
        &self,
        id: &str,
        max: u64,
        out: &mut (dyn AsyncWrite + Unpin + Send),
    ) -> Result<u64, MediaError> {
        let path = self
            .path_of(id)
            .ok_or(MediaError::Refused("unknown upload id".to_string()))?;
        let meta = tokio::fs::symlink_metadata(&path)
            .await
            .map_err(|_| MediaError::Refused("the upload is gone (or was never made)".into()))?;
        if !meta.is_file() {
            return Err(MediaError::Refused("the upload is not a file".into()));
        }
        if meta.len() > max {
            remove(&path).await;
            return Err(MediaError::TooBig { limit: max });
        }
        let file = tokio::fs::File::open(&path)
            .await
            .map_err(|e| MediaError::Failed(e.to_string()))?;
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
        let copied = copy_capped(chunks, max, out).await;
        if copied.is_ok() || matches!(copied, Err(MediaError::TooBig { .. })) {
            remove(&path).await;
        }
        copied
    }
}

async fn remove(path: &Path) {
    if let Err(e) = tokio::fs::remove_file(path).await {
        tracing::warn!(error = %e, path = %path.display(), "webchat: cannot remove a taken upload");
    }
}

/// The download id of an outbox copy `<out dir>/<id>/<name>`: its folder's name.
pub fn download_id(copy: &Path) -> Option<String> {
    let id = copy.parent()?.file_name()?.to_str()?;
    valid_id(id).then(|| id.to_string())
}

/// The browser's view of a file the agent sent: the id of the outbox's copy.
pub fn link_of(f: &crate::OutboundFile) -> Result<FileLink, crate::ChannelError> {
    let id = download_id(&f.path).ok_or_else(|| {
        crate::ChannelError::Permanent(format!(
            "the file to send is not a gateway copy: {}",
            f.path.display()
        ))
    })?;
    Ok(FileLink {
        id,
        name: f.name.clone(),
        size: f.size,
        mime: f.mime.clone(),
    })
}

#[cfg(test)]
#[path = "webchat_files_tests.rs"]
mod tests;
