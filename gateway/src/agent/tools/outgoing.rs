//! A workspace file the agent sends (`message` with `path`): checked like `read` checks
//! it, refused past the channel's upload limit with a message the model can act on, and
//! copied to `<state dir>/media/out/<id>/<name>`, which the outbox row names. The copy is
//! what is delivered (a retry after a restart reads the same bytes, whatever the agent
//! does to its workspace meanwhile).

use std::io::{Read, Write};
use std::path::PathBuf;

use switchboard_channels::{Channel, FileKind, OutboundFile};

use crate::agent::tools::{ToolContext, ToolError};

/// Largest file sent at all, whatever the channel says.
pub const MAX_SEND_BYTES: u64 = 100 * 1024 * 1024;

/// The folder of outgoing copies under the state dir (the outbox's).
pub use crate::outbox::copies::out_dir;

/// Check and copy `path` for `channel`; `as_photo`: the model's wish (default: a photo
/// when the bytes are an image within the channel's photo limit).
pub async fn prepare(
    ctx: &ToolContext<'_>,
    channel: &dyn Channel,
    path: &str,
    as_photo: Option<bool>,
) -> Result<OutboundFile, ToolError> {
    let (file, len, shown) = crate::agent::tools::fs::open_checked(ctx, path.to_string()).await?;
    let Some(document_limit) = channel.file_limit(FileKind::Document) else {
        return Err(ToolError::Model(format!(
            "the {} channel cannot send files",
            channel.id()
        )));
    };
    let limit = document_limit.min(MAX_SEND_BYTES);
    if len > limit {
        return Err(ToolError::Model(format!(
            "{shown} is {len} bytes; {} takes files of at most {limit} bytes",
            channel.id()
        )));
    }
    if len == 0 {
        return Err(ToolError::Model(format!(
            "{shown} is empty; nothing to send"
        )));
    }
    let photo_limit = channel.file_limit(FileKind::Photo).unwrap_or(0);
    let name = crate::media::names::sanitize(&shown, "file");
    let dir = out_dir(&ctx.rt.home.state_dir).join(uuid::Uuid::new_v4().simple().to_string());
    let copied = tokio::task::spawn_blocking(move || copy(file, len, &dir, &name))
        .await
        .map_err(|e| ToolError::Fatal(format!("file task failed: {e}")))?;
    let (path, name, size, head) =
        copied.map_err(|e| ToolError::Model(format!("cannot copy {shown}: {e}")))?;
    let image = crate::media::sniff::image_type(&head);
    let kind = match (as_photo, image) {
        (Some(true), None) => {
            return Err(ToolError::Model(format!(
                "{shown} is not a JPEG, PNG, GIF or WebP image; send it as a file (asPhoto: false)"
            )))
        }
        (Some(true), Some(_)) if size > photo_limit => {
            return Err(ToolError::Model(format!(
                "{shown} is {size} bytes; {} takes photos of at most {photo_limit} bytes (send it as a file: asPhoto false)",
                ctx_channel(channel)
            )))
        }
        (Some(false), _) | (None, None) => FileKind::Document,
        (None, Some(_)) if size > photo_limit => FileKind::Document,
        (_, Some(_)) => FileKind::Photo,
    };
    let mime = image
        .map(str::to_string)
        .unwrap_or_else(|| "application/octet-stream".into());
    Ok(OutboundFile {
        path,
        name,
        mime,
        kind,
        size,
    })
}

fn ctx_channel(channel: &dyn Channel) -> &str {
    channel.id()
}

/// Copy at most `len` bytes of `file` into `dir/name`: the copy's path, name, size and
/// first bytes.
fn copy(
    file: std::fs::File,
    len: u64,
    dir: &std::path::Path,
    name: &str,
) -> std::io::Result<(PathBuf, String, u64, Vec<u8>)> {
    std::fs::create_dir_all(dir)?;
    let (mut out, name) = crate::media::names::create_unique(dir, name)?;
    let mut src = file.take(len);
    let mut head = Vec::with_capacity(16);
    let mut buf = vec![0u8; 64 * 1024];
    let mut size = 0u64;
    loop {
        let n = src.read(&mut buf)?;
        if n == 0 {
            break;
        }
        if head.len() < 16 {
            let take = (16 - head.len()).min(n);
            head.extend_from_slice(&buf[..take]);
        }
        out.write_all(&buf[..n])?;
        size += n as u64;
    }
    out.sync_all()?;
    Ok((dir.join(&name), name, size, head))
}
