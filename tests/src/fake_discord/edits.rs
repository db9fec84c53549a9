//! `PATCH /channels/{channel.id}/messages/{message.id}` (route `editMessage`) with
//! Discord's checks: an unknown message (never posted, deleted, or in another channel) is
//! 404 `10008 Unknown Message`, another author's message is 403 `50005`, content over 2000
//! characters is 400 (and a violation); plus the record of edits and a user's deletion of
//! a bot message, for tests.

use std::time::Instant;

use anyhow::Context as _;
use serde_json::Value;

use super::objects::{self, MessageParts};
use super::rest::Reply;
use super::routes::{check_content, mentions};
use super::state::World;
use super::FakeDiscord;

/// A successful message edit.
#[derive(Debug, Clone, PartialEq)]
pub struct EditedMessage {
    pub channel_id: u64,
    pub message_id: u64,
    /// The content after the edit.
    pub content: String,
    pub at: Instant,
}

pub(super) fn edit_message(
    world: &mut World,
    channel: Option<u64>,
    message: Option<u64>,
    body: &Value,
) -> Reply {
    let Some(channel_id) = channel.filter(|c| world.channels.contains_key(c)) else {
        let shown = channel.map_or_else(|| "?".to_owned(), |c| c.to_string());
        world.violation(format!("editMessage in unknown channel {shown}"));
        return Reply::error(404, 10003, "Unknown Channel");
    };
    let Some(message_id) = message else {
        return Reply::error(404, 10008, "Unknown Message");
    };
    if world.user_messages.get(&message_id) == Some(&channel_id) {
        return Reply::error(403, 50005, "Cannot edit a message authored by another user");
    }
    let posted_here = world
        .sent
        .iter()
        .any(|m| m.message_id == message_id && m.channel_id == channel_id);
    if !posted_here || !world.bot_messages.contains_key(&message_id) {
        return Reply::error(404, 10008, "Unknown Message");
    }
    let content = match check_content(world, "editMessage", body, true) {
        Ok(content) => content,
        Err(reply) => return reply,
    };
    let Some((text, _)) = world.bot_messages.get_mut(&message_id) else {
        return Reply::error(404, 10008, "Unknown Message");
    };
    if let Some(content) = content {
        *text = content;
    }
    let content = text.clone();
    world.edits.push(EditedMessage {
        channel_id,
        message_id,
        content: content.clone(),
        at: Instant::now(),
    });
    let mentions = mentions(world, &content);
    Reply::ok(objects::message(MessageParts {
        id: message_id,
        channel_id,
        guild_id: None,
        author: objects::bot_user(),
        content: &content,
        mentions,
        member: None,
        reply_to: None,
        webhook: false,
    }))
}

impl FakeDiscord {
    /// Successful message edits (`PATCH …/messages/{id}`), in order.
    pub fn edits(&self) -> Vec<EditedMessage> {
        self.inner.state.read(|world| world.edits.clone())
    }

    /// Waits until an edit satisfies `until`; returns every edit so far.
    pub async fn wait_for_edit(
        &self,
        timeout: std::time::Duration,
        until: impl Fn(&EditedMessage) -> bool + Send + Sync,
    ) -> anyhow::Result<Vec<EditedMessage>> {
        self.wait(timeout, |world| world.edits.iter().any(&until))
            .await
            .with_context(|| {
                format!(
                    "fake Discord: waited {timeout:?} for an edit, saw {:?}",
                    self.edits()
                )
            })?;
        Ok(self.edits())
    }

    /// A user deletes bot message `message_id`: later edits of it get 404 `10008`.
    pub fn delete_message(&self, message_id: u64) {
        self.inner.state.change(|world| {
            world.bot_messages.remove(&message_id);
        });
    }
}
