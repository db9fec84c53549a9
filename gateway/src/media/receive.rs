//! An inbound message's files, taken in before the message is stored: each is fetched by
//! its adapter into the agent's `inbox/` under its sanitized name (capped at
//! `media.maxBytes` while reading), a voice note is transcribed when a model is
//! configured, and the message's text gains a note per file. A file that cannot be taken
//! is refused with a reply to its sender; the rest of the message goes on.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use switchboard_channels::{Channel, InboundMessage, MediaError, MediaKind, MediaRef};

use super::names::{create_unique, inbox_dir, sanitize};
use super::note::{human_size, Note};
use crate::config::Config;
use crate::runtime::Runtime;

/// What became of a message's files.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Received {
    /// The message's text with a note per file (and a transcript per voice note); empty
    /// when nothing is left for the agent (no caption, every file refused).
    pub text: String,
    /// Replies to the sender: one per refused file.
    pub refusals: Vec<String>,
}

/// Take in the files of `msg` for `agent_id`'s workspace.
pub async fn receive(
    rt: &Arc<Runtime>,
    cfg: &Config,
    agent_id: &str,
    msg: &InboundMessage,
) -> Received {
    let mut out = Received {
        text: msg.text.clone(),
        refusals: Vec::new(),
    };
    if msg.media.is_empty() {
        return out;
    }
    let Some(channel) = rt.channel(&msg.origin.channel) else {
        out.refusals
            .push("⚠️ Your file could not be received: its channel is not running.".into());
        return out;
    };
    let agent = crate::config::agent_entry(cfg, agent_id);
    let workspace = crate::config::workspace_for(cfg, agent.as_ref(), &rt.home.state_dir);
    let max = cfg.media.max_bytes;
    let mut notes = Vec::new();
    let limit = switchboard_channels::media::MAX_MEDIA_PER_MESSAGE;
    for (i, media) in msg.media.iter().enumerate() {
        let fallback = format!("{}_{}", media.kind.label().replace(' ', "_"), i + 1);
        let shown = sanitize(media.name.as_deref().unwrap_or(&fallback), &fallback);
        if i >= limit {
            out.refusals.push(format!(
                "⚠️ {shown} was not received: at most {limit} files are taken from one message."
            ));
            continue;
        }
        match fetch(&*channel, &workspace, media, &shown, max).await {
            Ok(stored) => {
                let note = Note::new(media.kind, &stored.name, &stored.mime, stored.size);
                notes.push(speech(rt, cfg, media.kind, &stored, note).await);
            }
            Err(why) => {
                tracing::warn!(channel = %msg.origin.channel, file = %shown, error = %why, "inbound file refused");
                let reason = match why {
                    MediaError::TooBig { .. } => format!(
                        "it is larger than the {} limit (media.maxBytes)",
                        human_size(max)
                    ),
                    other => other.to_string(),
                };
                out.refusals
                    .push(format!("⚠️ {shown} was not received: {reason}."));
                notes.push(format!(
                    "[{} refused: {shown} ({reason})]",
                    media.kind.label()
                ));
            }
        }
    }
    let all_refused = out.refusals.len() == msg.media.len();
    if all_refused && msg.text.trim().is_empty() {
        // Nothing for the agent: the sender was told.
        out.text.clear();
        return out;
    }
    for n in notes {
        if !out.text.is_empty() {
            out.text.push('\n');
        }
        out.text.push_str(&n);
    }
    out
}

/// A file stored in the inbox.
struct Stored {
    path: PathBuf,
    name: String,
    mime: String,
    size: u64,
}

async fn fetch(
    channel: &dyn Channel,
    workspace: &Path,
    media: &MediaRef,
    name: &str,
    max: u64,
) -> Result<Stored, MediaError> {
    if media.size.is_some_and(|s| s > max) {
        return Err(MediaError::TooBig { limit: max });
    }
    let ws = workspace.to_path_buf();
    let wanted = name.to_string();
    let created = tokio::task::spawn_blocking(move || {
        let dir = inbox_dir(&ws)?;
        let (file, name) = create_unique(&dir, &wanted)?;
        Ok::<_, std::io::Error>((file, dir.join(&name), name))
    })
    .await
    .map_err(|e| MediaError::Failed(e.to_string()))?
    .map_err(|e| MediaError::Failed(format!("cannot store the file: {e}")))?;
    let (file, path, name) = created;
    let mut file = tokio::fs::File::from_std(file);
    let size = match channel.fetch_media(media, max, &mut file).await {
        Ok(n) => n,
        Err(e) => {
            drop(file);
            // Nothing half-written stays behind.
            let _ = tokio::fs::remove_file(&path).await;
            return Err(e);
        }
    };
    drop(file);
    let head = read_head(&path).await;
    let mime = super::sniff::image_type(&head)
        .map(str::to_string)
        .or_else(|| media.mime.as_deref().and_then(clean_mime))
        .unwrap_or_else(|| "application/octet-stream".into());
    Ok(Stored {
        path,
        name,
        mime,
        size,
    })
}

/// The first bytes of a file, for its type.
async fn read_head(path: &Path) -> Vec<u8> {
    use tokio::io::AsyncReadExt;
    let mut head = vec![0u8; 16];
    match tokio::fs::File::open(path).await {
        Ok(mut f) => {
            let n = f.read(&mut head).await.unwrap_or(0);
            head.truncate(n);
            head
        }
        Err(_) => Vec::new(),
    }
}

/// A platform's MIME type if it is a plain `type/subtype` (RFC 6838 token characters,
/// at most 100 bytes), lowercased; parameters are dropped.
pub fn clean_mime(mime: &str) -> Option<String> {
    let base = mime.split(';').next()?.trim().to_ascii_lowercase();
    let (t, s) = base.split_once('/')?;
    let token = |x: &str| {
        !x.is_empty()
            && x.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
    };
    (base.len() <= 100 && token(t) && token(s)).then_some(base)
}

/// The note of a stored file; a voice note or audio with a transcription model gets its
/// words after the note.
async fn speech(rt: &Runtime, cfg: &Config, kind: MediaKind, f: &Stored, note: Note) -> String {
    if !kind.is_speech() || cfg.media.audio.model.is_none() {
        return note.render();
    }
    match super::transcribe::transcribe(cfg, &rt.http.keys, &rt.http, &f.path, &f.name, &f.mime)
        .await
    {
        Ok(words) if !words.is_empty() => format!("{}\n{words}", note.render_transcribed()),
        Ok(_) => note.render(),
        Err(e) => {
            tracing::warn!(file = %f.name, error = %e, "transcription failed; the agent gets the file's path");
            note.render()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platform_types_are_kept_only_when_plain() {
        assert_eq!(clean_mime("Image/JPEG").as_deref(), Some("image/jpeg"));
        assert_eq!(
            clean_mime("audio/ogg; codecs=opus").as_deref(),
            Some("audio/ogg")
        );
        assert_eq!(clean_mime("text/html\r\nX-Evil: 1"), None);
        assert_eq!(clean_mime("nothing"), None);
        assert_eq!(clean_mime("a/b)]\n[photo received"), None);
    }
}
