//! Images for a vision model, at request time: the transcript stores each image as its
//! note; the images noted by the latest `media.images.turns` user messages that have any
//! are read from the agent's `inbox/` and sent as image parts (older ones stay their note,
//! so a photo is not paid for on every later turn). Bounded: at most [`MAX_IMAGES`] per
//! request, each at most [`MAX_IMAGE_BYTES`], its type read from its bytes.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;

use crate::agent::provider::{ChatMessage, ImagePart};
use crate::store::Role;

/// Largest image sent to a model (Anthropic's own limit per image); a bigger one reaches
/// the model as its note only.
pub const MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024;
/// Most images one model request carries.
pub const MAX_IMAGES: usize = 8;

/// `messages` with the images of their latest image-bearing user turns attached, when the
/// model takes images (`takes_images`) and `turns` is not 0.
pub async fn attach(
    mut messages: Vec<ChatMessage>,
    workspace: &Path,
    turns: u32,
    takes_images: bool,
) -> Vec<ChatMessage> {
    if !takes_images || turns == 0 {
        return messages;
    }
    let mut wanted: Vec<(usize, Vec<String>)> = Vec::new();
    let mut count = 0;
    for (i, m) in messages.iter().enumerate().rev() {
        if m.role != Role::User {
            continue;
        }
        let names: Vec<String> = m
            .content
            .lines()
            .filter_map(crate::media::note::image_name)
            .map(str::to_string)
            .take(MAX_IMAGES - count)
            .collect();
        if names.is_empty() {
            continue;
        }
        count += names.len();
        wanted.push((i, names));
        if wanted.len() >= turns as usize || count >= MAX_IMAGES {
            break;
        }
    }
    if wanted.is_empty() {
        return messages;
    }
    let inbox = workspace.join(crate::media::INBOX);
    let loaded = tokio::task::spawn_blocking(move || load(&inbox, wanted)).await;
    match loaded {
        Ok(loaded) => {
            for (i, images) in loaded {
                if let Some(m) = messages.get_mut(i) {
                    m.images = images;
                }
            }
        }
        Err(e) => tracing::warn!(error = %e, "reading images for the model failed"),
    }
    messages
}

fn load(inbox: &Path, wanted: Vec<(usize, Vec<String>)>) -> Vec<(usize, Vec<ImagePart>)> {
    // The inbox must be a real folder of the workspace, not a link to elsewhere.
    if !std::fs::symlink_metadata(inbox).is_ok_and(|m| m.is_dir()) {
        return Vec::new();
    }
    wanted
        .into_iter()
        .map(|(i, names)| {
            let images = names
                .iter()
                .filter_map(|n| read_image(&inbox.join(n)))
                .collect();
            (i, images)
        })
        .collect()
}

/// The image at `path` if it is a regular file (no symlink followed) of a known image
/// type within the size bound.
fn read_image(path: &PathBuf) -> Option<ImagePart> {
    use std::io::Read;
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_IMAGE_BYTES {
        return None;
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(path)
        .ok()?
        .take(MAX_IMAGE_BYTES + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    if bytes.len() as u64 > MAX_IMAGE_BYTES {
        return None;
    }
    let mime = crate::media::sniff::image_type(&bytes)?;
    let base64: Arc<str> = base64::engine::general_purpose::STANDARD
        .encode(&bytes)
        .into();
    Some(ImagePart { mime, base64 })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(text: &str) -> ChatMessage {
        ChatMessage {
            role: Role::User,
            content: text.into(),
            tool_calls: vec![],
            tool_call_id: None,
            tool_name: None,
            images: Vec::new(),
        }
    }

    /// Catches: every old photo resent on every turn, a text-only model sent an image, a
    /// link out of the inbox followed.
    #[tokio::test]
    async fn only_the_latest_turns_images_are_sent_and_only_to_vision_models() {
        let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let inbox = ws.path().join("inbox");
        std::fs::create_dir_all(&inbox).unwrap_or_else(|e| panic!("{e}"));
        let png = b"\x89PNG\r\n\x1a\nrest".to_vec();
        for n in ["a.png", "b.png", "c.png"] {
            std::fs::write(inbox.join(n), &png).unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(ws.path().join("secret.png"), &png).unwrap_or_else(|e| panic!("{e}"));
        #[cfg(unix)]
        std::os::unix::fs::symlink(ws.path().join("secret.png"), inbox.join("link.png"))
            .unwrap_or_else(|e| panic!("{e}"));
        let note = |n: &str| format!("look\n[photo received: inbox/{n} (image/png, 1 KB)]");
        let msgs = vec![
            user(&note("a.png")),
            user(&note("b.png")),
            user("no image"),
            user(&format!("{}\n{}", note("c.png"), note("link.png"))),
        ];
        let got = attach(msgs.clone(), ws.path(), 2, true).await;
        let counts: Vec<usize> = got.iter().map(|m| m.images.len()).collect();
        assert_eq!(counts, vec![0, 1, 0, 1]);
        assert_eq!(got[3].images[0].mime, "image/png");
        assert_eq!(
            &*got[3].images[0].base64,
            base64::engine::general_purpose::STANDARD.encode(&png)
        );
        let text_only = attach(msgs, ws.path(), 2, false).await;
        assert!(text_only.iter().all(|m| m.images.is_empty()));
    }
}
