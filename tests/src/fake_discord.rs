//! A fake Discord (REST API v10 and gateway WebSocket) for end-to-end tests of the Discord
//! adapter, driven by the real serenity 0.12 client.
//!
//! ```ignore
//! let discord = FakeDiscord::start("TEST-TOKEN").await?;
//! // serenity: HttpBuilder::new(token).proxy(discord.api_url()).ratelimiter_disabled(true)
//! discord.add_guild(100, "guild", &[200]);
//! discord.wait_ready(1, Duration::from_secs(10)).await?;
//! discord.guild_message(100, 200, DUser::new(42, "alice"), "<@2000> hello");
//! let sent = discord.wait_for_sent(1, Duration::from_secs(5)).await?;
//! assert_eq!(sent[0].channel_id, 200);
//! discord.assert_no_violations();
//! ```
//!
//! One port serves both: REST under `/api/v10/...` (serenity's `proxy` replaces
//! `https://discord.com` with [`FakeDiscord::api_url`]) and, for any request asking for a
//! WebSocket upgrade (any path; serenity uses `/?v=10`), the gateway. `GET /api/v10/gateway`
//! and `/gateway/bot` answer `ws://127.0.0.1:PORT`.
//!
//! Gateway: op 10 HELLO on connect (interval [`FakeDiscord::set_heartbeat_interval`], 1 s by
//! default); op 2 IDENTIFY (token `Bot X` or `X`, integer `intents`) → READY (`s` 1, guilds
//! listed unavailable) then one GUILD_CREATE per known guild, then queued events; op 1
//! HEARTBEAT → op 11 ACK (unless stopped); op 6 RESUME → the missed dispatches (`s` above the
//! given `seq`) then RESUMED, or op 9 INVALID SESSION (`d: false`) for an unknown or
//! invalidated session; ops 3, 4, 8, 31 are accepted and ignored. Close codes: 4001 unknown
//! opcode, 4002 undecodable payload, 4003 op before IDENTIFY, 4004 bad token, 4005 second
//! IDENTIFY, 4007 RESUME seq ahead of the session, 4013 no intents. Frames are uncompressed
//! JSON text (serenity asks `compress: true` in IDENTIFY, which only allows compression).
//! Intents are honoured: without GUILD_MESSAGES / DIRECT_MESSAGES the messages are not sent,
//! without MESSAGE_CONTENT guild messages not mentioning the bot arrive with empty content.
//!
//! Events pushed while no session is live are queued and written, in order and each with the
//! next `s`, once one IDENTIFYs or RESUMEs. Events a RESUME refused by op 9 had not seen are
//! queued again for the next session (Discord would lose them; tests check the client neither
//! loses nor doubles messages).
//!
//! REST: the routes are listed in `fake_discord/rest.rs` (`ROUTES`); route names such as
//! `createMessage` key [`FakeDiscord::fail_next`] and [`Call::route`]. Errors are
//! `{"message","code"}` as Discord sends them; answers carry `X-RateLimit-*` headers.
//! Violations (the client broke a rule Discord enforces): unknown routes, bodies that are not
//! JSON, content over 2000 characters or empty (an edit's too: `PATCH …/messages/{id}`,
//! see `edits.rs`), writing to an unknown channel, bad command
//! definitions, interaction callbacks that are late (3 s), repeated, of a wrong type or for an
//! unknown interaction, follow-ups before the callback, and gateway payloads that break the
//! protocol. A wrong token is not a violation: it gets 401, or close code 4004.

mod edits;
mod events;
mod files;
mod gateway;
mod interactions;
mod objects;
mod presses;
mod rest;
mod routes;
mod state;
mod types;

#[cfg(test)]
mod tests;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

use crate::fake_support::ServerTask;

pub use edits::EditedMessage;
pub use files::SentAttachment;
use state::State;
pub use types::{
    intents, Call, DUser, Failure, Followup, FollowupKind, InteractionResponse, RegisteredCommand,
    SentMessage, APPLICATION_ID, BOT_ID, BOT_USERNAME, DEFAULT_HEARTBEAT_MS, MAX_CONTENT_CHARS,
};

/// Handle to a running fake Discord; clones share the server, which stops when the last
/// handle is dropped or on `shutdown`.
#[derive(Debug, Clone)]
pub struct FakeDiscord {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    state: Arc<State>,
    addr: SocketAddr,
    server: ServerTask,
}

impl FakeDiscord {
    /// Binds `127.0.0.1:0` and serves the bot with this token (`Bot ` prefix optional).
    pub async fn start(token: &str) -> anyhow::Result<FakeDiscord> {
        let (listener, addr) = crate::fake_support::bind("fake Discord").await?;
        let state = Arc::new(State::new(token, format!("ws://{addr}")));
        let app = rest::router(Arc::clone(&state));
        let server = ServerTask::spawn("fake Discord", state.cancel.clone(), |stop| {
            axum::serve(listener, app).with_graceful_shutdown(stop)
        });
        Ok(FakeDiscord {
            inner: Arc::new(Inner {
                state,
                addr,
                server,
            }),
        })
    }

    /// `http://127.0.0.1:PORT`: serenity's `HttpBuilder::proxy`, `channels.discord.apiUrl`.
    pub fn api_url(&self) -> String {
        format!("http://{}", self.inner.addr)
    }

    /// `ws://127.0.0.1:PORT`, what `GET /api/v10/gateway` answers.
    pub fn gateway_url(&self) -> String {
        self.inner.state.gateway_url.clone()
    }

    pub fn addr(&self) -> SocketAddr {
        self.inner.addr
    }

    /// The bot token the fake accepts, without `Bot `.
    pub fn token(&self) -> String {
        self.inner.state.token.clone()
    }

    /// Makes a future call of `route` (e.g. `createMessage`, any case) fail; failures of one
    /// route are played in order, one per call.
    pub fn fail_next(&self, route: &str, failure: Failure) {
        let key = route.to_ascii_lowercase();
        self.inner
            .state
            .change(|world| world.failures.entry(key).or_default().push_back(failure));
    }

    /// Messages created successfully with `POST /channels/{id}/messages`, in order.
    pub fn sent_messages(&self) -> Vec<SentMessage> {
        self.inner.state.read(|world| world.sent.clone())
    }

    /// Waits until at least `n` messages were created; returns them all.
    pub async fn wait_for_sent(
        &self,
        n: usize,
        timeout: Duration,
    ) -> anyhow::Result<Vec<SentMessage>> {
        self.wait(timeout, |world| world.sent.len() >= n)
            .await
            .with_context(|| {
                let seen: Vec<String> = self
                    .sent_messages()
                    .into_iter()
                    .map(|m| m.content)
                    .collect();
                format!("fake Discord: waited {timeout:?} for {n} sent messages, saw {seen:?}")
            })?;
        Ok(self.sent_messages())
    }

    /// Interaction callbacks accepted, in order.
    pub fn interaction_responses(&self) -> Vec<InteractionResponse> {
        self.inner
            .state
            .read(|world| world.interaction_responses.clone())
    }

    /// Waits until at least `n` interaction callbacks were accepted; returns them all.
    pub async fn wait_for_interaction_responses(
        &self,
        n: usize,
        timeout: Duration,
    ) -> anyhow::Result<Vec<InteractionResponse>> {
        self.wait(timeout, |world| world.interaction_responses.len() >= n)
            .await
            .with_context(|| {
                format!(
                    "fake Discord: waited {timeout:?} for {n} interaction responses, saw {:?}",
                    self.interaction_responses()
                )
            })?;
        Ok(self.interaction_responses())
    }

    /// Follow-ups and edits of original answers, in order.
    pub fn followups(&self) -> Vec<Followup> {
        self.inner.state.read(|world| world.followups.clone())
    }

    /// Waits until at least `n` follow-ups or edits arrived; returns them all.
    pub async fn wait_for_followups(
        &self,
        n: usize,
        timeout: Duration,
    ) -> anyhow::Result<Vec<Followup>> {
        self.wait(timeout, |world| world.followups.len() >= n)
            .await
            .with_context(|| {
                format!(
                    "fake Discord: waited {timeout:?} for {n} follow-ups, saw {:?}",
                    self.followups()
                )
            })?;
        Ok(self.followups())
    }

    /// The application commands registered now (global ones have `guild_id: None`).
    pub fn registered_commands(&self) -> Vec<RegisteredCommand> {
        self.inner.state.read(|world| world.commands.clone())
    }

    /// Channel ids of each successful `POST /channels/{id}/typing`.
    pub fn typing_calls(&self) -> Vec<u64> {
        self.inner.state.read(|world| world.typing.clone())
    }

    /// Every REST call received (recorded on arrival; `status` filled in when answered).
    pub fn calls(&self) -> Vec<Call> {
        self.inner.state.read(|world| world.calls.clone())
    }

    /// The calls of one route, named in any case.
    pub fn calls_to(&self, route: &str) -> Vec<Call> {
        self.calls()
            .into_iter()
            .filter(|call| call.route.eq_ignore_ascii_case(route))
            .collect()
    }

    /// Waits until at least `n` calls of `route` (any case) arrived.
    pub async fn wait_for_call(
        &self,
        route: &str,
        n: usize,
        timeout: Duration,
    ) -> anyhow::Result<Vec<Call>> {
        let count = |calls: &[Call]| {
            calls
                .iter()
                .filter(|call| call.route.eq_ignore_ascii_case(route))
                .count()
        };
        self.wait(timeout, |world| count(&world.calls) >= n)
            .await
            .with_context(|| {
                format!(
                    "fake Discord: waited {timeout:?} for {n} {route} calls, saw {}",
                    self.calls_to(route).len()
                )
            })?;
        Ok(self.calls_to(route))
    }

    /// Protocol violations seen so far.
    pub fn violations(&self) -> Vec<String> {
        self.inner.state.read(|world| world.violations.clone())
    }

    /// Panics listing the violations, if any.
    #[track_caller]
    pub fn assert_no_violations(&self) {
        crate::fake_support::assert_no_violations("fake Discord", &self.violations());
    }

    /// Stops the server: hanging calls answer 503, gateway connections are dropped, open
    /// connections get `fake_support::SHUTDOWN_GRACE` to close, then the server is aborted.
    pub async fn shutdown(&self) {
        self.inner.server.stop().await;
    }

    async fn wait(
        &self,
        timeout: Duration,
        ready: impl Fn(&state::World) -> bool,
    ) -> Result<(), tokio::time::error::Elapsed> {
        self.inner.state.wait_until(timeout, ready).await
    }
}
