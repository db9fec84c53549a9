//! The channel registry: every chat channel the gateway runs registers here once, as a
//! [`ChannelKind`]: its id, its capabilities, how its adapter is built from its config
//! section, and its `switchboard doctor` probe. Its config section (a type implementing
//! [`switchboard_channels::section::ChannelSection`], living with the adapter) tells the
//! rest: enabled, secrets (kept out of commands' environments), allowlists, owners, link
//! previews, its own config checks. Everything that lists channels (the adapters, config
//! validation, `exec`'s environment, cron delivery targets, doctor, access checks) goes
//! through [`kinds`] or `ChannelsConfig::sections`, never a channel's name.
//!
//! # Adding a channel
//!
//! 1. `channels/src/<name>/`: the adapter (`impl Channel`), `CHANNEL_ID`, and its config
//!    section type (serde + `JsonSchema`, `deny_unknown_fields`, camelCase,
//!    `impl ChannelSection`: `enabled`, `to_json`, and as it applies `secrets`,
//!    `secret_env`, `access`, `group_rule`, `link_preview`, `check`).
//! 2. `gateway/src/channels/<name>.rs`: a unit struct implementing [`ChannelKind`]:
//!    `id`, `capabilities`, `build` (read the section from `cfg.channels.<name>`, the
//!    token through [`BuildContext::token`], return [`Built::new`]), and `probe` (doctor:
//!    one cheap authenticated call, with [`probe::call`] and [`probe::token`]).
//! 3. Here: `mod <name>;` and `&<name>::Kind` in [`KINDS`].
//! 4. `gateway/src/config/schema.rs`: the field in `ChannelsConfig` and its line in
//!    `ChannelsConfig::sections`.
//!
//! Session keys, routing, access checks, approvals, the outbox and cron delivery then work
//! for it unchanged. docs/channels.md says the same for readers of the docs.

mod discord;
pub mod probe;
mod slack;
mod telegram;
mod webchat;

use std::any::Any;
use std::sync::Arc;

use futures::future::{BoxFuture, LocalBoxFuture};
use parking_lot::Mutex;
use switchboard_channels::webchat::WebChat;
use switchboard_channels::{Capabilities, Channel, InboundSink};
use tokio_util::sync::CancellationToken;

use crate::config::{Config, SharedEnv};
use crate::runtime::Runtime;
use crate::store::Lease;

pub use probe::Probe;

/// Every channel kind, in the order doctor reports them.
pub static KINDS: &[&dyn ChannelKind] = &[
    &telegram::Kind,
    &discord::Kind,
    &slack::Kind,
    &webchat::Kind,
];

/// One kind of chat channel, registered once in [`KINDS`].
pub trait ChannelKind: Send + Sync {
    /// The channel id: `Origin::channel`, the config key `channels.<id>`, the lease
    /// `channel:<id>`.
    fn id(&self) -> &'static str;

    /// What the platform can do.
    fn capabilities(&self) -> Capabilities;

    /// Whether, with several active processes (shared mode), the inbound side runs only
    /// in the process holding the channel's lease (`channel:<id>`): true for a platform
    /// session one bot may hold once (a poller, a gateway connection); false for the web
    /// chat, which every process serves to the browsers connected to it.
    fn leased(&self) -> bool {
        true
    }

    /// Build the adapter from the channel's section of `cfg` (called when the channel is
    /// enabled, and again when its section changes). An error says why it cannot start
    /// (it is logged; the channel stays off until the section changes).
    fn build(&self, cx: &BuildContext<'_>, cfg: &Config) -> Result<Built, String>;

    /// `switchboard doctor`'s network check of the channel (its token tried against the
    /// platform); `None`: nothing to check.
    fn probe<'a>(
        &'a self,
        cfg: &'a Config,
        env: &'a dyn Fn(&str) -> Option<String>,
        http: &'a reqwest::Client,
    ) -> LocalBoxFuture<'a, Option<Probe>> {
        let _ = (cfg, env, http);
        Box::pin(async { None })
    }
}

/// The registered kind of channel `id`.
pub fn kind(id: &str) -> Option<&'static dyn ChannelKind> {
    KINDS.iter().copied().find(|k| k.id() == id)
}

/// What channel `id` can do (nothing for a channel not registered, e.g. the HTTP API).
pub fn capabilities(id: &str) -> Capabilities {
    kind(id).map(|k| k.capabilities()).unwrap_or_default()
}

/// The lease an adapter's durable writes are fenced by (Telegram's update offset): set
/// once at start in standby mode, by the lease loop at each takeover in shared mode
/// (`None` until this process first holds it: no write then).
pub type FenceSlot = Arc<Mutex<Option<Lease>>>;

/// Inbound work every process does in shared mode besides the leased side (Telegram's
/// webhook calls, which a load balancer may send to any process), until the token fires.
pub type Everywhere =
    Box<dyn FnOnce(InboundSink, CancellationToken) -> BoxFuture<'static, ()> + Send>;

/// What [`ChannelKind::build`] gets: the runtime and the process's settings.
pub struct BuildContext<'a> {
    pub rt: &'a Arc<Runtime>,
    pub env: &'a SharedEnv,
    /// The `gateway` lease this process holds (PostgreSQL, standby mode).
    pub standby_lease: Option<&'a Lease>,
    /// The web chat (one per process, shared with the HTTP server).
    pub webchat: &'a Arc<WebChat>,
}

impl BuildContext<'_> {
    /// A token: as configured, else from the environment variable `var`; blank is none.
    pub fn token(&self, configured: &Option<String>, var: &str) -> Option<String> {
        configured
            .clone()
            .or_else(|| (self.env)(var))
            .filter(|t| !t.trim().is_empty())
    }

    /// The fence for durable writes: shared mode, an empty slot the lease loop fills at
    /// each takeover; standby mode, the held `gateway` lease; SQLite, none.
    pub fn fence_slot(&self) -> Option<FenceSlot> {
        if self.rt.home.member.is_some() {
            Some(FenceSlot::default())
        } else {
            self.standby_lease
                .cloned()
                .map(|l| Arc::new(Mutex::new(Some(l))))
        }
    }
}

/// A built adapter.
pub struct Built {
    pub adapter: Arc<dyn Channel>,
    /// The adapter as its own type, for routes that need it (Telegram's webhook):
    /// `Adapters::handle::<T>(id)`.
    pub handle: Arc<dyn Any + Send + Sync>,
    /// Filled with the channel's lease at each takeover (shared mode).
    pub fence: Option<FenceSlot>,
    pub everywhere: Option<Everywhere>,
}

impl Built {
    pub fn new<T: Channel>(adapter: Arc<T>) -> Built {
        Built {
            handle: adapter.clone(),
            adapter,
            fence: None,
            everywhere: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ChannelsConfig;

    /// Catches: a registered channel without a config section (or the reverse), two kinds
    /// with one id, or a kind's capabilities not reaching callers.
    #[test]
    fn every_kind_has_a_section_and_one_id() {
        let ids: Vec<&str> = KINDS.iter().map(|k| k.id()).collect();
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), ids.len(), "{ids:?}");
        let mut sections = ChannelsConfig::ids();
        sections.sort_unstable();
        assert_eq!(sorted, sections);
        assert!(capabilities("telegram").threads && capabilities("discord").buttons);
        assert!(capabilities("webchat").files && !capabilities("webchat").threads);
        assert_eq!(capabilities("api"), Capabilities::default());
    }
}
