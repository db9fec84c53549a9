//! Discord media: a message's attachments (pure, from the message), fetching one from
//! its URL — only from Discord's CDN hosts over HTTPS, or the configured API base (a fake
//! in tests), with no redirect followed, so a crafted attachment URL reaches nothing
//! else —, and sending a file back (create message, multipart `files[0]`).

use serenity::all::Message;
use tokio::io::AsyncWrite;

use super::Discord;
use crate::media::{check_response, copy_capped, MediaError, MAX_MEDIA_PER_MESSAGE};
use crate::{ChannelError, DeliveryProgress, MediaKind, MediaRef, OutboundFile, OutboundMessage};

/// Largest file a bot uploads (Discord's default attachment limit).
pub const UPLOAD_LIMIT: u64 = 25 * 1024 * 1024;
/// The hosts Discord serves attachments from.
pub const CDN_HOSTS: &[&str] = &["cdn.discordapp.com", "media.discordapp.net"];

/// The attachments of a message as references [`Discord::fetch`] can download (at most
/// [`MAX_MEDIA_PER_MESSAGE`]); the type Discord reports picks the kind.
pub(super) fn attachments_of(msg: &Message) -> Vec<MediaRef> {
    msg.attachments
        .iter()
        .take(MAX_MEDIA_PER_MESSAGE)
        .map(|a| {
            let mime = a.content_type.clone();
            let kind = match mime.as_deref().map(|m| m.split('/').next().unwrap_or("")) {
                Some("image") => MediaKind::Photo,
                Some("audio") => MediaKind::Audio,
                Some("video") => MediaKind::Video,
                _ => MediaKind::Document,
            };
            MediaRef {
                kind,
                source: a.url.clone(),
                name: Some(a.filename.clone()),
                mime,
                size: Some(u64::from(a.size)),
            }
        })
        .collect()
}

/// Whether `url` may be fetched: HTTPS on one of Discord's CDN hosts, or the same scheme,
/// host and port as the configured API base `api` (which is where a test's fake serves
/// its attachments). Nothing else: no other host, no userinfo.
pub fn allowed_url(url: &str, api: &str) -> bool {
    crate::media::allowed_url(url, CDN_HOSTS, api)
}

impl Discord {
    /// Download an attachment into `out`, capped at `max` while reading.
    pub(super) async fn fetch(
        &self,
        media: &MediaRef,
        max: u64,
        out: &mut (dyn AsyncWrite + Unpin + Send),
    ) -> Result<u64, MediaError> {
        if !allowed_url(&media.source, &self.inner.settings.api_url) {
            return Err(MediaError::Refused(
                "the attachment URL is not on Discord's CDN".into(),
            ));
        }
        if media.size.is_some_and(|s| s > max) {
            return Err(MediaError::TooBig { limit: max });
        }
        let resp = self
            .inner
            .downloads
            .get(&media.source)
            .send()
            .await
            .map_err(|e| MediaError::Failed(e.without_url().to_string()))?;
        check_response(&resp, max)?;
        copy_capped(resp.bytes_stream(), max, out).await
    }

    /// The text's parts first, the file last with the last part (or alone).
    pub(super) async fn send_with_file(
        &self,
        msg: &OutboundMessage,
        file: &OutboundFile,
        progress: &dyn DeliveryProgress,
    ) -> Result<(), ChannelError> {
        use crate::Channel;
        if file.size > UPLOAD_LIMIT {
            return Err(ChannelError::Permanent(format!(
                "{} is {} bytes; Discord takes attachments of at most {UPLOAD_LIMIT} bytes",
                file.name, file.size
            )));
        }
        let channel = super::channel_of(&msg.origin)?;
        let mut chunks =
            crate::split::split_code_aware(&msg.text, msg.footer.as_deref(), self.text_limit());
        if chunks.is_empty() {
            chunks.push(String::new());
        }
        crate::send_parts(&chunks, progress, |chunk, last| async move {
            if last {
                self.inner
                    .rest
                    .create_message_with_file(channel, chunk, file)
                    .await
                    .map(|_| ())
            } else {
                self.inner
                    .rest
                    .create_message(channel, chunk, None)
                    .await
                    .map(|_| ())
            }
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn only_the_cdn_and_the_configured_base_are_fetched() {
        let api = "http://127.0.0.1:4000";
        assert!(allowed_url(
            "https://cdn.discordapp.com/attachments/1/2/a.png",
            api
        ));
        assert!(allowed_url(
            "https://media.discordapp.net/attachments/1/2/a.png",
            api
        ));
        assert!(allowed_url(
            "http://127.0.0.1:4000/attachments/1/a.png",
            api
        ));
        assert!(!allowed_url("http://cdn.discordapp.com/a.png", api));
        assert!(!allowed_url("https://cdn.discordapp.com:8443/a.png", api));
        assert!(!allowed_url("http://127.0.0.1:4001/a.png", api));
        assert!(!allowed_url("http://169.254.169.254/latest/meta-data", api));
        assert!(!allowed_url(
            "https://cdn.discordapp.com.evil.com/a.png",
            api
        ));
        assert!(!allowed_url("https://user@cdn.discordapp.com/a.png", api));
        assert!(!allowed_url("file:///etc/passwd", api));
        assert!(!allowed_url("not a url", api));
    }

    proptest! {
        #![proptest_config(crate::proptest_cases::config())]

        /// Whatever the URL, an allowed one names an allowed host.
        #[test]
        fn an_allowed_url_names_an_allowed_host(url in "(https?://)?[a-z0-9.:@/%-]{0,40}") {
            if allowed_url(&url, "http://127.0.0.1:4000") {
                let u = reqwest::Url::parse(&url).map_err(|e| TestCaseError::fail(e.to_string()))?;
                let host = u.host_str().unwrap_or("");
                prop_assert!(CDN_HOSTS.contains(&host) || host == "127.0.0.1");
            }
        }
    }
}
