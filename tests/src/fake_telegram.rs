//! A fake Telegram Bot API server for end-to-end tests of the Telegram adapter (teloxide).
//!
//! ```ignore
//! let telegram = FakeTelegram::start("123:TEST").await?;
//! // channels.telegram.apiUrl = telegram.api_url(), botToken = telegram.token()
//! let alice = User::new(42, "alice", "Alice");
//! telegram.user_message(Chat::private(42), alice, "hello");
//! let sent = telegram.wait_for_sent(1, Duration::from_secs(5)).await?;
//! assert_eq!(sent[0].chat_id, 42);
//! telegram.assert_no_violations();
//! ```
//!
//! Calls are `POST` (or `GET`) `/bot<TOKEN>/<method>`, method names matched case-insensitively,
//! answered `{"ok":true,"result":…}` or `{"ok":false,"error_code":N,"description":…}` with the
//! HTTP status equal to `error_code`. Known methods: `getMe`, `getUpdates` (long polling,
//! offsets confirm), `sendMessage` (HTML checked, 4096 UTF-16 units), `sendChatAction`,
//! `editMessageText`, `deleteMessage`, `setMyCommands`/`getMyCommands`/`deleteMyCommands`,
//! `setWebhook`/`deleteWebhook`/`getWebhookInfo` (webhooks are recorded, never delivered to).
//!
//! Violations (the client broke a rule Telegram enforces or the fake cannot follow): unknown
//! methods, unreadable or multipart bodies, two `getUpdates` in flight at once (the second is
//! answered 409, as Telegram would), writing to a chat no update showed.

mod files;
pub mod html;
mod listener;
mod messages;
mod methods;
mod polling;
mod server;
mod state;
mod types;
mod updates;
mod wire;

#[cfg(test)]
mod tests;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

use crate::fake_support::ServerTask;

pub use files::SentFile;
use listener::{Conn, CuttableListener};
use state::State;
pub use types::{
    Call, CallbackAnswer, Chat, ChatKind, EditedMessage, Failure, SentMessage, User, Webhook,
    BOT_FIRST_NAME, BOT_ID, BOT_USERNAME,
};

/// Handle to a running fake Telegram; clones share the server, which stops when the last
/// handle is dropped or on `shutdown`.
#[derive(Debug, Clone)]
pub struct FakeTelegram {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    state: Arc<State>,
    addr: SocketAddr,
    server: ServerTask,
}

impl FakeTelegram {
    /// Binds `127.0.0.1:0` and serves the bot with this token until shut down.
    pub async fn start(token: &str) -> anyhow::Result<FakeTelegram> {
        let (listener, addr) = crate::fake_support::bind("fake Telegram").await?;
        let state = Arc::new(State::new(token));
        let app = server::router(Arc::clone(&state)).into_make_service_with_connect_info::<Conn>();
        let server = ServerTask::spawn("fake Telegram", state.cancel.clone(), |stop| {
            axum::serve(CuttableListener::new(listener), app).with_graceful_shutdown(stop)
        });
        Ok(FakeTelegram {
            inner: Arc::new(Inner {
                state,
                addr,
                server,
            }),
        })
    }

    /// The API base URL, `http://127.0.0.1:PORT` (teloxide's `set_api_url`,
    /// `channels.telegram.apiUrl`).
    pub fn api_url(&self) -> String {
        format!("http://{}", self.inner.addr)
    }

    /// The API base URL for one of several clients of the same bot (processes sharing
    /// it): `http://127.0.0.1:PORT/<client>`. Its calls carry `client` in [`Call::client`],
    /// so a test can tell who polled ([`FakeTelegram::pollers`]).
    pub fn api_url_for(&self, client: &str) -> String {
        format!("http://{}/{client}", self.inner.addr)
    }

    /// The clients that called `getUpdates`, in the order of their first poll (`None`: a
    /// client on [`FakeTelegram::api_url`]).
    pub fn pollers(&self) -> Vec<Option<String>> {
        let mut seen: Vec<Option<String>> = Vec::new();
        for call in self.calls_to("getUpdates") {
            if !seen.contains(&call.client) {
                seen.push(call.client);
            }
        }
        seen
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.inner.addr
    }

    /// The bot token the fake accepts.
    pub fn token(&self) -> String {
        self.inner.state.token.clone()
    }

    /// Queues a raw update (`update_id` assigned when missing) and wakes long polls; returns
    /// its `update_id`. Chats found in it become known to the bot.
    pub fn push_update(&self, update: serde_json::Value) -> i64 {
        self.inner.state.change(|world| world.push_update(update))
    }

    /// Queues a text message from `from` in `chat`, with `bot_command`/`mention` entities and,
    /// in a forum topic, `message_thread_id`, `is_topic_message` and the topic's first message
    /// as `reply_to_message`. Returns the `update_id`.
    pub fn user_message(&self, chat: Chat, from: User, text: &str) -> i64 {
        self.inner.state.change(|world| {
            let update = updates::user_message(world, &chat, &from, text, None);
            world.push_update(update)
        })
    }

    /// Like `user_message`, replying to bot message `replied_message_id` (its text is filled
    /// in when the bot sent it). Returns the `update_id`.
    pub fn reply_to_bot(&self, chat: Chat, from: User, text: &str, replied_message_id: i64) -> i64 {
        self.inner.state.change(|world| {
            let replied = updates::bot_message(world, &chat, replied_message_id);
            let update = updates::user_message(world, &chat, &from, text, Some(replied));
            world.push_update(update)
        })
    }

    /// `from` presses the inline keyboard button with `data` under bot message `message_id`
    /// in `chat`: queues a `callback_query` update. Returns the query's id, or an error when
    /// the message has no such button (Telegram delivers presses of real buttons only).
    pub fn press_button(
        &self,
        chat: Chat,
        from: User,
        message_id: i64,
        data: &str,
    ) -> anyhow::Result<String> {
        let id = self.inner.state.change(|world| {
            world.next_callback += 1;
            format!("cq{}", world.next_callback)
        });
        self.press_button_again(chat, from, message_id, data, &id)?;
        Ok(id)
    }

    /// Queues the `callback_query` update of query `query_id` again (a redelivery: the same
    /// query id, a new `update_id`).
    pub fn press_button_again(
        &self,
        chat: Chat,
        from: User,
        message_id: i64,
        data: &str,
        query_id: &str,
    ) -> anyhow::Result<i64> {
        self.inner.state.change(|world| {
            let has_button = world
                .bot_texts
                .get(&(chat.id, message_id))
                .is_some_and(|m| {
                    types::inline_buttons(m.reply_markup.as_ref())
                        .iter()
                        .any(|(_, d)| d == data)
                });
            if !has_button {
                anyhow::bail!(
                    "message {message_id} in chat {} has no button {data:?}",
                    chat.id
                );
            }
            let update = updates::callback_query(world, &chat, &from, message_id, data, query_id);
            world.callbacks.entry(query_id.to_owned()).or_insert(false);
            Ok(world.push_update(update))
        })
    }

    /// Successful `editMessageText` calls, in order.
    pub fn edits(&self) -> Vec<EditedMessage> {
        self.inner.state.read(|world| world.edits.clone())
    }

    /// Successful `answerCallbackQuery` calls, in order.
    pub fn callback_answers(&self) -> Vec<CallbackAnswer> {
        self.inner
            .state
            .read(|world| world.callback_answers.clone())
    }

    /// Waits until at least `n` callback queries were answered; returns the answers.
    pub async fn wait_for_callback_answers(
        &self,
        n: usize,
        timeout: Duration,
    ) -> anyhow::Result<Vec<CallbackAnswer>> {
        self.inner
            .state
            .wait_until(timeout, |world| world.callback_answers.len() >= n)
            .await
            .with_context(|| {
                format!(
                    "fake Telegram: waited {timeout:?} for {n} callback answers, saw {:?}",
                    self.callback_answers()
                )
            })?;
        Ok(self.callback_answers())
    }

    /// Makes a future call of `method` (any case) fail; failures of one method are played in
    /// order, one per call.
    pub fn fail_next(&self, method: &str, failure: Failure) {
        self.fail_after(method, 0, failure);
    }

    /// Lets `successes` more calls of `method` (any case) through, then makes the next one fail
    /// (after any failures already scripted for it): e.g. the second part of a split message.
    pub fn fail_after(&self, method: &str, successes: usize, failure: Failure) {
        let key = methods::canonical(method).0.to_ascii_lowercase();
        self.inner.state.change(|world| {
            let script = world.failures.entry(key).or_default();
            script.extend(std::iter::repeat_n(None, successes));
            script.push_back(Some(failure));
        });
    }

    /// Queues a message from `from` in `chat` carrying a file: `field` is the message's
    /// media field (`photo`, `document`, `voice`, `audio`, `video`, `video_note`), `extra`
    /// its object's other fields (`file_name`, `mime_type`, `duration`, …); the file is held
    /// for `getFile` and its download URL. `caption` may be empty (none). Returns the
    /// `update_id`.
    pub fn user_file(
        &self,
        chat: Chat,
        from: User,
        field: &str,
        bytes: Vec<u8>,
        extra: serde_json::Value,
        caption: &str,
    ) -> i64 {
        self.inner.state.change(|world| {
            let n = world.files.len() + 1;
            let id = format!("F{n}");
            let dir = match field {
                "photo" => "photos",
                "voice" => "voice",
                "video_note" => "video_notes",
                "audio" => "music",
                "video" => "videos",
                _ => "documents",
            };
            let size = bytes.len();
            world.files.insert(
                id.clone(),
                files::HeldFile {
                    path: format!("{dir}/file_{n}.bin"),
                    bytes: Arc::new(bytes),
                },
            );
            let mut update = updates::user_message(world, &chat, &from, "", None);
            let message = &mut update["message"];
            if let Some(m) = message.as_object_mut() {
                m.remove("text");
                m.remove("entities");
            }
            let mut meta = serde_json::json!({"file_id": id, "file_unique_id": format!("u{id}"), "file_size": size});
            if let (Some(m), Some(e)) = (meta.as_object_mut(), extra.as_object()) {
                m.extend(e.clone());
            }
            message[field] = if field == "photo" {
                meta["width"] = serde_json::json!(1280);
                meta["height"] = serde_json::json!(960);
                serde_json::json!([{"file_id": format!("{id}s"), "file_unique_id": format!("u{id}s"), "file_size": 1000, "width": 90, "height": 67}, meta])
            } else {
                meta
            };
            if !caption.is_empty() {
                message["caption"] = serde_json::json!(caption);
            }
            world.push_update(update)
        })
    }

    /// Files the bot uploaded (`sendPhoto`, `sendDocument`), in order.
    pub fn sent_files(&self) -> Vec<SentFile> {
        self.inner.state.read(|world| world.sent_files.clone())
    }

    /// Waits until at least `n` files were uploaded; returns them all.
    pub async fn wait_for_files(
        &self,
        n: usize,
        timeout: Duration,
    ) -> anyhow::Result<Vec<SentFile>> {
        self.inner
            .state
            .wait_until(timeout, |world| world.sent_files.len() >= n)
            .await
            .with_context(|| format!("fake Telegram: waited {timeout:?} for {n} uploaded files"))?;
        Ok(self.sent_files())
    }

    /// Messages sent successfully, in order.
    pub fn sent_messages(&self) -> Vec<SentMessage> {
        self.inner.state.read(|world| world.sent.clone())
    }

    /// Waits until at least `n` messages were sent successfully; returns them all.
    pub async fn wait_for_sent(
        &self,
        n: usize,
        timeout: Duration,
    ) -> anyhow::Result<Vec<SentMessage>> {
        let state = &self.inner.state;
        state
            .wait_until(timeout, |world| world.sent.len() >= n)
            .await
            .with_context(|| {
                format!(
                    "fake Telegram: waited {timeout:?} for {n} sent messages, saw {:?}",
                    self.sent_messages()
                        .iter()
                        .map(|message| message.text.as_str())
                        .collect::<Vec<_>>()
                )
            })?;
        Ok(self.sent_messages())
    }

    /// Every call received (recorded on arrival; `status` filled in when answered).
    pub fn calls(&self) -> Vec<Call> {
        self.inner.state.read(|world| world.calls.clone())
    }

    /// The calls of one method, named in any case.
    pub fn calls_to(&self, method: &str) -> Vec<Call> {
        self.inner.state.read(|world| {
            world
                .calls
                .iter()
                .filter(|call| call.method.eq_ignore_ascii_case(method))
                .cloned()
                .collect()
        })
    }

    /// Waits until at least `n` calls of `method` (any case) arrived.
    pub async fn wait_for_call(
        &self,
        method: &str,
        n: usize,
        timeout: Duration,
    ) -> anyhow::Result<()> {
        let count = |calls: &[Call]| {
            calls
                .iter()
                .filter(|call| call.method.eq_ignore_ascii_case(method))
                .count()
        };
        self.inner
            .state
            .wait_until(timeout, |world| count(&world.calls) >= n)
            .await
            .with_context(|| {
                format!(
                    "fake Telegram: waited {timeout:?} for {n} {method} calls, saw {}",
                    self.calls_to(method).len()
                )
            })
    }

    /// The `offset` of each `getUpdates` call with the right token, in order.
    pub fn offsets(&self) -> Vec<Option<i64>> {
        self.inner.state.read(|world| world.offsets.clone())
    }

    /// The commands of the last successful `setMyCommands` (cleared by `deleteMyCommands`).
    pub fn commands(&self) -> Vec<(String, String)> {
        self.inner.state.read(|world| world.commands.clone())
    }

    /// `(chat_id, action)` of each successful `sendChatAction`.
    pub fn chat_actions(&self) -> Vec<(i64, String)> {
        self.inner.state.read(|world| world.chat_actions.clone())
    }

    /// Updates queued and not yet confirmed by an offset.
    pub fn pending_updates(&self) -> usize {
        self.inner.state.read(|world| world.updates.len())
    }

    /// `getUpdates` calls answered 409 because another one was in flight.
    pub fn conflicts(&self) -> usize {
        self.inner.state.read(|world| world.conflicts)
    }

    /// The webhook set with `setWebhook`, if any.
    pub fn webhook(&self) -> Option<Webhook> {
        self.inner.state.read(|world| world.webhook.clone())
    }

    /// Protocol violations seen so far.
    pub fn violations(&self) -> Vec<String> {
        self.inner.state.read(|world| world.violations.clone())
    }

    /// Panics listing the violations, if any.
    #[track_caller]
    pub fn assert_no_violations(&self) {
        crate::fake_support::assert_no_violations("fake Telegram", &self.violations());
    }

    /// Stops the server: long polls answer `[]`, hanging and stalled calls 503, open
    /// connections get `fake_support::SHUTDOWN_GRACE` to close, then the server is aborted.
    pub async fn shutdown(&self) {
        self.inner.server.stop().await;
    }
}
