//! A fake Slack (the Web API and Socket Mode) for end-to-end tests of the Slack adapter.
//!
//! ```ignore
//! let slack = FakeSlack::start("xoxb-test", "xapp-test").await?;
//! slack.add_channel("C100");
//! // channels.slack: {botToken: "xoxb-test", appToken: "xapp-test", apiUrl: slack.api_url()}
//! slack.wait_connected(1, WAIT).await?;
//! slack.dm(&ann, "hello");
//! let posted = slack.wait_posted(1, WAIT).await?;
//! slack.assert_no_violations();
//! ```
//!
//! Web API (`web.rs`): `POST {api_url}/<method>`; `auth.test`, `apps.connections.open` (app
//! token; answers `ws://127.0.0.1:PORT/link/?ticket=…`), `chat.postMessage`, `chat.update`,
//! `chat.postEphemeral`, `files.getUploadURLExternal` + `POST /upload/<id>` +
//! `files.completeUploadExternal`, `files.info`, and shared files' bytes at
//! `GET /files-pri/…` (bot token only; `shared.rs`). Errors are HTTP 200
//! `{ok:false,error}`; [`Failure`]s are played per method; a 429 carries `Retry-After` and a call of that method before it
//! ends is a violation. Violations also: unknown methods or paths, bodies neither JSON nor
//! form, Block Kit Slack would refuse, text past 40,000 characters, a `thread_ts` of no
//! message, upload lengths that differ from the declared one.
//!
//! Socket Mode (`socket.rs`): `hello` on connect; envelopes (`events_api`,
//! `slash_commands`, `interactive`) written to the newest connection or queued until one
//! opens; an envelope not acked within 3 s (see [`FakeSlack::set_redeliver_after`]) is
//! written again with `retry_attempt` + 1, up to 3 times, and unacked ones again on each new
//! connection; acks of unknown envelopes and frames that are not JSON are violations.

mod payloads;
mod shared;
mod socket;
mod state;
mod types;
mod web;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use tokio_util::task::AbortOnDropHandle;

use crate::fake_support::ServerTask;
pub use shared::{check_file_info, Download};
use state::{Msg, State};
pub use types::{
    Call, Envelope, Ephemeral, Failure, Posted, SUser, Update, Upload, APP_ID, BOT_ID, BOT_USER,
    MAX_BUTTON_LABEL, MAX_SECTION_CHARS, MAX_TEXT_CHARS, TEAM_ID,
};

/// Handle to a running fake Slack; clones share the server, which stops when the last
/// handle is dropped.
#[derive(Debug, Clone)]
pub struct FakeSlack {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    state: Arc<State>,
    addr: SocketAddr,
    _server: ServerTask,
    _redeliver: AbortOnDropHandle<()>,
}

impl FakeSlack {
    /// Binds `127.0.0.1:0`; Web API calls need `bot_token`, `apps.connections.open`
    /// needs `app_token`.
    pub async fn start(bot_token: &str, app_token: &str) -> anyhow::Result<FakeSlack> {
        let (listener, addr) = crate::fake_support::bind("fake Slack").await?;
        let state = Arc::new(State::new(bot_token, app_token, format!("http://{addr}")));
        let app = web::router(Arc::clone(&state));
        let server = ServerTask::spawn("fake Slack", state.cancel.clone(), |stop| {
            axum::serve(listener, app).with_graceful_shutdown(stop)
        });
        let redeliver = AbortOnDropHandle::new(tokio::spawn(state::redeliver(state.clone())));
        Ok(FakeSlack {
            inner: Arc::new(Inner {
                state,
                addr,
                _server: server,
                _redeliver: redeliver,
            }),
        })
    }

    /// `http://127.0.0.1:PORT/api`: `channels.slack.apiUrl`.
    pub fn api_url(&self) -> String {
        format!("http://{}/api", self.inner.addr)
    }

    fn state(&self) -> &Arc<State> {
        &self.inner.state
    }

    /// A public channel the bot is in (`C…`).
    pub fn add_channel(&self, id: &str) {
        self.state().change(|w| {
            w.channels.entry(id.to_owned()).or_default();
        });
    }

    /// The DM channel between `user` and the bot (`D` + the user id), created on first use.
    pub fn dm_channel(&self, user: &SUser) -> String {
        let id = format!("D{}", user.id.trim_start_matches('U'));
        self.add_channel(&id);
        id
    }

    /// Redeliver unacked envelopes after `after` instead of 3 s.
    pub fn set_redeliver_after(&self, after: Duration) {
        self.state().change(|w| w.redeliver_after = Some(after));
    }

    /// A person's message: recorded in `channel`, pushed as a `message` event (and an
    /// `app_mention` too when it mentions the bot, as Slack does). Returns its `ts`.
    fn message(
        &self,
        channel: &str,
        kind: &str,
        user: &SUser,
        text: &str,
        thread: Option<&str>,
    ) -> String {
        self.message_with(channel, kind, user, text, thread, Vec::new())
    }

    /// [`FakeSlack::message`] carrying `files` (a `file_share`).
    fn message_with(
        &self,
        channel: &str,
        kind: &str,
        user: &SUser,
        text: &str,
        thread: Option<&str>,
        files: Vec<serde_json::Value>,
    ) -> String {
        self.state().change(|w| {
            let ts = w.ts();
            w.channels.entry(channel.to_owned()).or_default().push(Msg {
                ts: ts.clone(),
                by_bot: false,
            });
            let ev = w.id("Ev");
            w.push_envelope(
                "events_api",
                shared::with_files(
                    payloads::message(&ev, channel, kind, user, text, &ts, thread),
                    &files,
                ),
            );
            if kind != "im" && text.contains(&format!("<@{BOT_USER}>")) {
                let ev = w.id("Ev");
                w.push_envelope(
                    "events_api",
                    shared::with_files(
                        payloads::app_mention(&ev, channel, user, text, &ts, thread),
                        &files,
                    ),
                );
            }
            ts
        })
    }

    /// `user` writes `text` to the bot in their DM. Returns the message's `ts`.
    pub fn dm(&self, user: &SUser, text: &str) -> String {
        let channel = self.dm_channel(user);
        self.message(&channel, "im", user, text, None)
    }

    /// `user` writes `text` at the top of `channel` (mention the bot with `<@BOT_USER>`).
    pub fn channel_message(&self, channel: &str, user: &SUser, text: &str) -> String {
        self.message(channel, "channel", user, text, None)
    }

    /// `user` replies in the thread under `thread_ts` in `channel`.
    pub fn thread_reply(&self, channel: &str, thread_ts: &str, user: &SUser, text: &str) -> String {
        self.message(channel, "channel", user, text, Some(thread_ts))
    }

    /// `user` runs `/command text` in `channel`. Returns the envelope id.
    pub fn slash_command(&self, channel: &str, user: &SUser, command: &str, text: &str) -> String {
        self.state().change(|w| {
            let trigger = w.id("trigger-");
            w.push_envelope(
                "slash_commands",
                payloads::slash_command(&trigger, channel, user, command, text),
            )
        })
    }

    /// `user` presses the button `action_id` on the bot's message `ts`. Returns the
    /// envelope id; a button the message does not have is an error.
    pub fn press(&self, user: &SUser, ts: &str, action_id: &str) -> anyhow::Result<String> {
        self.state().change(|w| {
            let m = w
                .posted
                .iter()
                .find(|m| m.ts == ts)
                .cloned()
                .with_context(|| format!("fake Slack: no bot message {ts}"))?;
            let (label, _) = m
                .buttons()
                .into_iter()
                .find(|(_, id)| id == action_id)
                .with_context(|| format!("fake Slack: message {ts} has no button {action_id}"))?;
            let trigger = w.id("trigger-");
            Ok(w.push_envelope(
                "interactive",
                payloads::block_actions(
                    &trigger,
                    &m.channel,
                    user,
                    ts,
                    m.thread_ts.as_deref(),
                    &m.text,
                    &label,
                    action_id,
                ),
            ))
        })
    }

    /// Write envelope `id` again (with `retry_attempt` + 1) even if it was acked, as Slack
    /// does when an ack is lost.
    pub fn redeliver(&self, id: &str) {
        self.state().change(|w| w.deliver(id, "timeout"));
    }

    /// Send `disconnect` (`refresh_requested`, `link_disabled`, …) and close the socket.
    /// False without a live connection.
    pub fn disconnect(&self, reason: &str) -> bool {
        socket::disconnect(self.state(), reason)
    }

    /// Drop the live socket without a close frame. False without a live connection.
    pub fn drop_socket(&self) -> bool {
        socket::cut(self.state())
    }

    /// Make the next call of `method` (e.g. `chat.postMessage`) fail; in order per method.
    pub fn fail_next(&self, method: &str, failure: Failure) {
        self.state().change(|w| {
            w.failures
                .entry(method.to_owned())
                .or_default()
                .push_back(failure)
        });
    }

    pub fn posted(&self) -> Vec<Posted> {
        self.state().read(|w| w.posted.clone())
    }

    pub fn updates(&self) -> Vec<Update> {
        self.state().read(|w| w.updates.clone())
    }

    pub fn ephemerals(&self) -> Vec<Ephemeral> {
        self.state().read(|w| w.ephemerals.clone())
    }

    pub fn uploads(&self) -> Vec<Upload> {
        self.state().read(|w| w.uploads.clone())
    }

    pub fn calls(&self) -> Vec<Call> {
        self.state().read(|w| w.calls.clone())
    }

    pub fn envelopes(&self) -> Vec<Envelope> {
        self.state().read(|w| w.envelopes.clone())
    }

    /// Socket Mode connections opened so far.
    pub fn connections(&self) -> usize {
        self.state().read(|w| w.connections)
    }

    pub fn violations(&self) -> Vec<String> {
        self.state().read(|w| w.violations.clone())
    }

    #[track_caller]
    pub fn assert_no_violations(&self) {
        crate::fake_support::assert_no_violations("fake Slack", &self.violations());
    }

    /// Waits until `n` Socket Mode connections were opened and one is live.
    pub async fn wait_connected(&self, n: usize, timeout: Duration) -> anyhow::Result<()> {
        self.state()
            .wait_until(timeout, |w| w.connections >= n && w.live.is_some())
            .await
            .with_context(|| {
                format!(
                    "fake Slack: waited {timeout:?} for {n} connections, saw {}",
                    self.connections()
                )
            })
    }

    /// Waits until at least `n` messages were posted; returns them all.
    pub async fn wait_posted(&self, n: usize, timeout: Duration) -> anyhow::Result<Vec<Posted>> {
        self.state()
            .wait_until(timeout, |w| w.posted.len() >= n)
            .await
            .with_context(|| {
                let seen: Vec<String> = self.posted().into_iter().map(|m| m.text).collect();
                format!("fake Slack: waited {timeout:?} for {n} posts, saw {seen:?}")
            })?;
        Ok(self.posted())
    }

    /// Waits for a posted message that `found` picks.
    pub async fn wait_post(
        &self,
        timeout: Duration,
        found: impl Fn(&Posted) -> bool,
    ) -> anyhow::Result<Posted> {
        self.state()
            .wait_until(timeout, |w| w.posted.iter().any(&found))
            .await
            .with_context(|| {
                let seen: Vec<String> = self.posted().into_iter().map(|m| m.text).collect();
                format!("fake Slack: waited {timeout:?} for a post, saw {seen:?}")
            })?;
        self.posted()
            .into_iter()
            .find(found)
            .context("fake Slack: the post went away")
    }

    pub async fn wait_updates(&self, n: usize, timeout: Duration) -> anyhow::Result<Vec<Update>> {
        self.state()
            .wait_until(timeout, |w| w.updates.len() >= n)
            .await
            .with_context(|| {
                format!(
                    "fake Slack: waited {timeout:?} for {n} updates, saw {:?}",
                    self.updates()
                )
            })?;
        Ok(self.updates())
    }

    pub async fn wait_ephemerals(
        &self,
        n: usize,
        timeout: Duration,
    ) -> anyhow::Result<Vec<Ephemeral>> {
        self.state()
            .wait_until(timeout, |w| w.ephemerals.len() >= n)
            .await
            .with_context(|| format!("fake Slack: waited {timeout:?} for {n} ephemerals"))?;
        Ok(self.ephemerals())
    }

    pub async fn wait_uploads(&self, n: usize, timeout: Duration) -> anyhow::Result<Vec<Upload>> {
        self.state()
            .wait_until(timeout, |w| w.uploads.len() >= n)
            .await
            .with_context(|| {
                format!(
                    "fake Slack: waited {timeout:?} for {n} uploads, calls {:?}",
                    self.calls()
                )
            })?;
        Ok(self.uploads())
    }

    /// Waits until envelope `id` was acked at least `n` times.
    pub async fn wait_acked(
        &self,
        id: &str,
        n: u32,
        timeout: Duration,
    ) -> anyhow::Result<Envelope> {
        self.state()
            .wait_until(timeout, |w| {
                w.envelopes
                    .iter()
                    .any(|e| e.envelope_id == id && e.acks >= n)
            })
            .await
            .with_context(|| format!("fake Slack: waited {timeout:?} for {n} acks of {id}"))?;
        self.envelopes()
            .into_iter()
            .find(|e| e.envelope_id == id)
            .context("fake Slack: no such envelope")
    }

    /// Waits for an update that `found` picks; returns every update so far.
    pub async fn wait_update(
        &self,
        timeout: Duration,
        found: impl Fn(&Update) -> bool,
    ) -> anyhow::Result<Vec<Update>> {
        self.state()
            .wait_until(timeout, |w| w.updates.iter().any(&found))
            .await
            .with_context(|| {
                format!(
                    "fake Slack: waited {timeout:?} for an update, saw {:?}",
                    self.updates()
                )
            })?;
        Ok(self.updates())
    }

    /// Waits until every envelope delivered so far was acked; returns them.
    pub async fn wait_all_acked(&self, timeout: Duration) -> anyhow::Result<Vec<Envelope>> {
        self.state()
            .wait_until(timeout, |w| {
                w.queue.is_empty() && w.envelopes.iter().all(|e| e.acks > 0)
            })
            .await
            .with_context(|| {
                format!(
                    "fake Slack: waited {timeout:?} for every ack, envelopes {:?}",
                    self.envelopes()
                )
            })?;
        Ok(self.envelopes())
    }
}
