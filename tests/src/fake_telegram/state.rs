//! Shared state of the fake Telegram: the update queue, chats, the call log, and wake-ups.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::types::{
    guessed_chat_json, Call, CallbackAnswer, EditedMessage, Failure, SentMessage, Webhook,
};
use super::updates::BotMessage;

/// Everything the fake knows, behind one lock.
#[derive(Debug, Default)]
pub(super) struct World {
    pub(super) calls: Vec<Call>,
    pub(super) violations: Vec<String>,
    /// Unconfirmed updates, sorted by `update_id`.
    pub(super) updates: Vec<Value>,
    pub(super) last_update_id: i64,
    /// The `offset` of every `getUpdates` call, in arrival order.
    pub(super) offsets: Vec<Option<i64>>,
    /// `allowed_updates` of the last `getUpdates` that gave one (Telegram remembers it).
    pub(super) allowed_updates: Option<Vec<String>>,
    pub(super) polls_in_flight: usize,
    /// `getUpdates` calls answered 409 because another one was in flight.
    pub(super) conflicts: usize,
    /// Scripted answers by lowercased method name: a failure, or `None` to answer normally.
    pub(super) failures: HashMap<String, VecDeque<Option<Failure>>>,
    /// Every chat an update showed, as its `Chat` object.
    pub(super) chats: HashMap<i64, Value>,
    /// Highest message id used in each chat (user and bot messages share the sequence).
    pub(super) last_message_id: HashMap<i64, i64>,
    pub(super) sent: Vec<SentMessage>,
    /// Every bot message not deleted, by (chat, message id).
    pub(super) bot_texts: HashMap<(i64, i64), BotMessage>,
    pub(super) commands: Vec<(String, String)>,
    pub(super) chat_actions: Vec<(i64, String)>,
    pub(super) webhook: Option<Webhook>,
    pub(super) edits: Vec<EditedMessage>,
    /// Callback queries delivered, by id: whether each was answered.
    pub(super) callbacks: HashMap<String, bool>,
    pub(super) callback_answers: Vec<CallbackAnswer>,
    pub(super) next_callback: u64,
    /// Files users sent, by `file_id`.
    pub(super) files: HashMap<String, super::files::HeldFile>,
    /// Files the bot uploaded.
    pub(super) sent_files: Vec<super::files::SentFile>,
}

impl World {
    pub(super) fn violation(&mut self, violation: String) {
        tracing::warn!(%violation, "fake Telegram saw a protocol violation");
        self.violations.push(violation);
    }

    /// A fresh message id in `chat`.
    pub(super) fn next_message_id(&mut self, chat: i64) -> i64 {
        let last = self.last_message_id.entry(chat).or_insert(0);
        *last += 1;
        *last
    }

    /// The `Chat` object of a chat, as updates showed it or guessed from its id.
    pub(super) fn chat_json(&self, chat: i64) -> Value {
        self.chats
            .get(&chat)
            .cloned()
            .unwrap_or_else(|| guessed_chat_json(chat))
    }

    /// Queues an update, giving it the next `update_id` unless it has one; returns the id.
    pub(super) fn push_update(&mut self, mut update: Value) -> i64 {
        let id = match update.get("update_id").and_then(Value::as_i64) {
            Some(id) => id,
            None => self.last_update_id + 1,
        };
        if let Some(object) = update.as_object_mut() {
            object.insert("update_id".to_owned(), Value::from(id));
        }
        self.last_update_id = self.last_update_id.max(id);
        self.learn(&update);
        let at = self
            .updates
            .partition_point(|queued| update_id(queued) <= id);
        self.updates.insert(at, update);
        id
    }

    /// Remembers every chat (and its highest message id) found anywhere in `value`.
    fn learn(&mut self, value: &Value) {
        match value {
            Value::Object(object) => {
                let chat = object.get("chat").filter(|chat| chat.is_object());
                if let Some(chat_id) = chat.and_then(|chat| chat["id"].as_i64()) {
                    if let Some(chat) = chat {
                        self.chats.insert(chat_id, chat.clone());
                    }
                    if let Some(message_id) = object.get("message_id").and_then(Value::as_i64) {
                        let last = self.last_message_id.entry(chat_id).or_insert(0);
                        *last = (*last).max(message_id);
                    }
                }
                object.values().for_each(|inner| self.learn(inner));
            }
            Value::Array(items) => items.iter().for_each(|inner| self.learn(inner)),
            _ => {}
        }
    }

    /// Forgets updates as Telegram does for `offset`: below it when positive, all but the last
    /// `-offset` when negative.
    pub(super) fn confirm(&mut self, offset: Option<i64>) {
        match offset {
            Some(offset) if offset > 0 => self.updates.retain(|update| update_id(update) >= offset),
            Some(offset) if offset < 0 => {
                let keep = usize::try_from(offset.unsigned_abs()).unwrap_or(usize::MAX);
                let drop = self.updates.len().saturating_sub(keep);
                self.updates.drain(..drop);
            }
            _ => {}
        }
    }

    /// Up to `limit` updates from `offset` on. Updates of a kind the client did not allow are
    /// forgotten, as Telegram never produces them.
    pub(super) fn batch(&mut self, offset: Option<i64>, limit: usize) -> Vec<Value> {
        let allowed = self.allowed_updates.clone();
        self.updates
            .retain(|update| is_allowed(update_kind(update), allowed.as_deref()));
        let from = offset.filter(|offset| *offset > 0).unwrap_or(i64::MIN);
        self.updates
            .iter()
            .filter(|update| update_id(update) >= from)
            .take(limit)
            .cloned()
            .collect()
    }
}

pub(super) fn update_id(update: &Value) -> i64 {
    update["update_id"].as_i64().unwrap_or(0)
}

/// The kind of an update: its field other than `update_id` (`message`, `callback_query`, …).
fn update_kind(update: &Value) -> &str {
    update
        .as_object()
        .and_then(|object| object.keys().find(|key| *key != "update_id"))
        .map_or("", String::as_str)
}

/// Telegram's rule: an empty or missing list means every kind except these three.
fn is_allowed(kind: &str, allowed: Option<&[String]>) -> bool {
    match allowed {
        Some(allowed) if !allowed.is_empty() => allowed.iter().any(|name| name == kind),
        _ => !matches!(
            kind,
            "chat_member" | "message_reaction" | "message_reaction_count"
        ),
    }
}

/// State shared by the handle and the server's handlers.
#[derive(Debug)]
pub(super) struct State {
    world: Mutex<World>,
    /// Woken after every change to the world.
    pub(super) changed: Notify,
    /// Fired on shutdown: hanging, stalled and polling answers give up.
    pub(super) cancel: CancellationToken,
    pub(super) token: String,
}

impl State {
    pub(super) fn new(token: &str) -> State {
        State {
            world: Mutex::new(World::default()),
            changed: Notify::new(),
            cancel: CancellationToken::new(),
            token: token.to_owned(),
        }
    }

    /// Locks ignoring poisoning: a panicking test thread must not hide the log from the others.
    /// Changes made through it wake nobody; use `change` for those.
    pub(super) fn world(&self) -> MutexGuard<'_, World> {
        self.world.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Reads the world.
    pub(super) fn read<R>(&self, read: impl FnOnce(&World) -> R) -> R {
        read(&self.world())
    }

    /// Changes the world, then wakes every waiter.
    pub(super) fn change<R>(&self, change: impl FnOnce(&mut World) -> R) -> R {
        let result = change(&mut self.world());
        self.changed.notify_waiters();
        result
    }

    /// Waits, without polling, until `ready` holds; woken by every change.
    pub(super) async fn wait_until(
        &self,
        timeout: Duration,
        ready: impl Fn(&World) -> bool,
    ) -> Result<(), tokio::time::error::Elapsed> {
        tokio::time::timeout(timeout, async {
            loop {
                let notified = self.changed.notified();
                let mut notified = std::pin::pin!(notified);
                // Register before checking, so a wake-up between the check and the await is kept.
                notified.as_mut().enable();
                if self.read(&ready) {
                    return;
                }
                notified.await;
            }
        })
        .await
    }
}

/// Holds the single `getUpdates` slot while a long poll is in flight.
#[derive(Debug)]
pub(super) struct PollSlot {
    state: Arc<State>,
}

impl PollSlot {
    /// The slot, or `None` when another `getUpdates` holds it (counted as a conflict).
    pub(super) fn take(state: &Arc<State>) -> Option<PollSlot> {
        state.change(|world| {
            if world.polls_in_flight > 0 {
                world.conflicts += 1;
                world.violation(
                    "two getUpdates requests in flight at once (answered the second with 409)"
                        .to_owned(),
                );
                return None;
            }
            world.polls_in_flight += 1;
            Some(PollSlot {
                state: Arc::clone(state),
            })
        })
    }
}

impl Drop for PollSlot {
    fn drop(&mut self) {
        self.state.change(|world| world.polls_in_flight -= 1);
    }
}
