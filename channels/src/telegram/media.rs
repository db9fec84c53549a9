//! Telegram media: the files a message carries (pure, from the update), fetching one
//! (`getFile`, then the file URL under the configured API base: no other host is ever
//! asked), and sending a file back (`sendPhoto` / `sendDocument`, multipart).

use teloxide::net::Download;
use teloxide::prelude::*;
use teloxide::types::{FileId, InputFile, Message, MessageId, ThreadId};
use teloxide::{ApiError, RequestError};
use tokio::io::AsyncWrite;

use super::{chat_of, Telegram};
use crate::media::{copy_capped, MediaError};
use crate::{ChannelError, DeliveryProgress, FileKind, MediaKind, MediaRef, OutboundMessage};

/// Largest file a bot may download through `getFile` (the Bot API's own limit).
pub const DOWNLOAD_LIMIT: u64 = 20 * 1024 * 1024;
/// Largest photo a bot may upload with `sendPhoto`.
pub const PHOTO_LIMIT: u64 = 10 * 1024 * 1024;
/// Largest file a bot may upload with `sendDocument`.
pub const DOCUMENT_LIMIT: u64 = 50 * 1024 * 1024;
/// Longest caption Telegram takes with a file; a longer text goes first, on its own.
pub const MAX_CAPTION: usize = 1024;

/// The files a message carries, as references `fetch` can download. Telegram sends a photo
/// in several sizes: the largest is taken. Names are the sender's (untrusted) or made up
/// from the message id.
pub(super) fn media_of(msg: &Message) -> Vec<MediaRef> {
    let id = msg.id.0;
    let media = |kind, meta: &teloxide::types::FileMeta, name: Option<String>, mime| MediaRef {
        kind,
        source: meta.id.0.clone(),
        name,
        mime,
        size: Some(u64::from(meta.size)),
    };
    let mut out = Vec::new();
    if let Some(p) = msg.photo().and_then(|sizes| {
        sizes
            .iter()
            .max_by_key(|p| (u64::from(p.width) * u64::from(p.height), p.file.size))
    }) {
        out.push(media(
            MediaKind::Photo,
            &p.file,
            Some(format!("photo_{id}.jpg")),
            Some("image/jpeg".into()),
        ));
    }
    if let Some(d) = msg.document() {
        out.push(media(
            MediaKind::Document,
            &d.file,
            d.file_name.clone().or(Some(format!("file_{id}"))),
            mime_of(&d.mime_type),
        ));
    }
    if let Some(v) = msg.voice() {
        out.push(media(
            MediaKind::Voice,
            &v.file,
            Some(format!("voice_{id}.ogg")),
            mime_of(&v.mime_type).or(Some("audio/ogg".into())),
        ));
    }
    if let Some(a) = msg.audio() {
        out.push(media(
            MediaKind::Audio,
            &a.file,
            a.file_name.clone().or(Some(format!("audio_{id}"))),
            mime_of(&a.mime_type),
        ));
    }
    if let Some(v) = msg.video() {
        out.push(media(
            MediaKind::Video,
            &v.file,
            v.file_name.clone().or(Some(format!("video_{id}.mp4"))),
            mime_of(&v.mime_type),
        ));
    }
    if let Some(v) = msg.video_note() {
        out.push(media(
            MediaKind::VideoNote,
            &v.file,
            Some(format!("video_note_{id}.mp4")),
            Some("video/mp4".into()),
        ));
    }
    out
}

impl Telegram {
    /// `getFile`, then the file's bytes from `<api base>/file/bot<token>/<file_path>`,
    /// capped at `max` (and at the Bot API's 20 MB) while reading.
    pub(super) async fn fetch(
        &self,
        media: &MediaRef,
        max: u64,
        out: &mut (dyn AsyncWrite + Unpin + Send),
    ) -> Result<u64, MediaError> {
        let max = max.min(DOWNLOAD_LIMIT);
        if media.size.is_some_and(|s| s > max) {
            return Err(MediaError::TooBig { limit: max });
        }
        let file = match self.bot.get_file(FileId(media.source.clone())).await {
            Ok(f) => f,
            Err(RequestError::Api(e)) if e.to_string().contains("file is too big") => {
                return Err(MediaError::TooBig { limit: max })
            }
            Err(RequestError::Api(e)) => return Err(MediaError::Refused(e.to_string())),
            Err(e) => return Err(MediaError::Failed(e.to_string())),
        };
        if u64::from(file.meta.size) > max {
            return Err(MediaError::TooBig { limit: max });
        }
        copy_capped(self.bot.download_file_stream(&file.path), max, out).await
    }

    /// A message with a file: the text as the file's caption when it fits one, else the
    /// text's parts first and the file last. Each part is reported before the next.
    pub(super) async fn send_with_file(
        &self,
        msg: &OutboundMessage,
        file: &crate::OutboundFile,
        progress: &dyn DeliveryProgress,
    ) -> Result<(), ChannelError> {
        let limit = match file.kind {
            FileKind::Photo => PHOTO_LIMIT,
            FileKind::Document => DOCUMENT_LIMIT,
        };
        if file.size > limit {
            return Err(ChannelError::Permanent(format!(
                "{} is {} bytes; Telegram takes at most {limit} bytes for a {}",
                file.name,
                file.size,
                kind_name(file.kind)
            )));
        }
        let (chat, thread) = chat_of(&msg.origin)?;
        let mut text = msg.text.clone();
        if let Some(f) = &msg.footer {
            text.push_str("\n\n");
            text.push_str(f);
        }
        let mut parts = if text.chars().count() <= MAX_CAPTION {
            Vec::new()
        } else {
            crate::split::split_text(&msg.text, msg.footer.as_deref(), self.text_limit_for_file())
        };
        // The last part is the file, with the caption when the text fits one.
        parts.push(if parts.is_empty() {
            text
        } else {
            String::new()
        });
        crate::send_parts(&parts, progress, |part, last| async move {
            if last {
                self.send_file(chat, thread, file, part).await
            } else {
                self.send_chunk(chat, thread, part, None).await.map(|_| ())
            }
        })
        .await
    }

    fn text_limit_for_file(&self) -> usize {
        use crate::Channel;
        self.text_limit()
    }

    /// `sendPhoto` / `sendDocument` of the gateway's copy, multipart.
    async fn send_file(
        &self,
        chat: ChatId,
        thread: Option<i32>,
        file: &crate::OutboundFile,
        caption: &str,
    ) -> Result<(), ChannelError> {
        if !file.path.is_file() {
            return Err(ChannelError::Permanent(format!(
                "the file to send is gone: {}",
                file.path.display()
            )));
        }
        let input = InputFile::file(file.path.clone()).file_name(file.name.clone());
        let thread = thread.map(|t| ThreadId(MessageId(t)));
        let sent = match file.kind {
            FileKind::Photo => {
                let mut req = self.bot.send_photo(chat, input);
                if !caption.is_empty() {
                    req = req.caption(caption);
                }
                if let Some(t) = thread {
                    req = req.message_thread_id(t);
                }
                req.await
            }
            FileKind::Document => {
                let mut req = self.bot.send_document(chat, input);
                if !caption.is_empty() {
                    req = req.caption(caption);
                }
                if let Some(t) = thread {
                    req = req.message_thread_id(t);
                }
                req.await
            }
        };
        match sent {
            Ok(_) => Ok(()),
            Err(RequestError::RetryAfter(s)) => Err(ChannelError::RateLimited(s.duration())),
            Err(RequestError::Api(e)) if super::send::is_refusal(&e) => Err(
                ChannelError::Permanent(format!("Telegram refused the file: {}", api_text(&e))),
            ),
            Err(e) => Err(ChannelError::Temporary(e.to_string())),
        }
    }
}

fn kind_name(kind: FileKind) -> &'static str {
    match kind {
        FileKind::Photo => "photo",
        FileKind::Document => "document",
    }
}

fn api_text(e: &ApiError) -> String {
    match e {
        ApiError::Unknown(t) => t.clone(),
        other => other.to_string(),
    }
}

fn mime_of<M: ToString>(m: &Option<M>) -> Option<String> {
    m.as_ref().map(ToString::to_string)
}
