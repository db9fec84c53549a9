//! Shared state of the fake Discord: the world (guilds, channels, users), the gateway session
//! and its event queue, the call log, and wake-ups.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::{mpsc, oneshot, Notify};
use tokio_util::sync::CancellationToken;

use super::objects;
use super::types::{
    Call, DUser, Failure, Followup, InteractionResponse, RegisteredCommand, SentMessage,
    DEFAULT_HEARTBEAT_MS,
};

/// How long Discord gives an interaction for its first answer.
pub(super) const INTERACTION_DEADLINE: Duration = Duration::from_secs(3);

/// A guild the fake knows, with its text channels and threads in creation order.
#[derive(Debug, Clone)]
pub(super) struct Guild {
    pub(super) name: String,
    pub(super) channels: Vec<u64>,
    /// `(thread, parent channel)`.
    pub(super) threads: Vec<(u64, u64)>,
}

/// What a channel id is.
#[derive(Debug, Clone)]
pub(super) enum Channel {
    Text { guild: u64 },
    Thread { guild: u64, parent: u64 },
    Dm { recipient: DUser },
}

/// An interaction pushed to the client.
#[derive(Debug, Clone)]
pub(super) struct Interaction {
    pub(super) token: String,
    pub(super) channel: u64,
    /// When its `INTERACTION_CREATE` was written to a connection.
    pub(super) delivered: Option<Instant>,
    /// The callback type of the first answer.
    pub(super) answered: Option<u64>,
    /// For a button press (a component interaction): the message the button is on.
    pub(super) pressed: Option<u64>,
}

/// A frame for a gateway connection's writer.
#[derive(Debug)]
pub(super) enum Outbound {
    Text(String),
    /// Send a close frame with this code, then end; `done` fires when the socket is gone.
    Close(u16, String, Option<oneshot::Sender<()>>),
    /// End without a close frame (the client sees 1006); `done` fires when the socket is gone.
    Cut(Option<oneshot::Sender<()>>),
}

/// The connection that completed IDENTIFY or RESUME and gets the dispatches.
#[derive(Debug)]
pub(super) struct Live {
    pub(super) conn: usize,
    pub(super) tx: mpsc::UnboundedSender<Outbound>,
}

/// A gateway session: everything dispatched in it, for RESUME.
#[derive(Debug)]
pub(super) struct Session {
    pub(super) id: String,
    pub(super) seq: u64,
    /// `(seq, payload text)` of every dispatch.
    pub(super) log: Vec<(u64, String)>,
    pub(super) intents: u64,
}

/// A dispatch waiting for a live connection; it gets its `s` when written.
#[derive(Debug, Clone)]
pub(super) struct Pending {
    pub(super) t: String,
    pub(super) d: Value,
}

/// Everything the fake knows, behind one lock.
#[derive(Debug)]
pub(super) struct World {
    pub(super) calls: Vec<Call>,
    pub(super) violations: Vec<String>,
    /// Scripted failures by lowercased route name.
    pub(super) failures: HashMap<String, VecDeque<Failure>>,
    pub(super) guilds: BTreeMap<u64, Guild>,
    pub(super) channels: HashMap<u64, Channel>,
    pub(super) users: HashMap<u64, DUser>,
    /// DM channel id by user id.
    pub(super) dms: HashMap<u64, u64>,
    last_id: u64,
    pub(super) heartbeat_ms: u64,
    pub(super) ack_heartbeats: bool,
    pub(super) invalidate_next_resume: bool,
    pub(super) interaction_deadline: Option<Duration>,
    pub(super) session: Option<Session>,
    pub(super) live: Option<Live>,
    pub(super) pending: VecDeque<Pending>,
    pub(super) connections: usize,
    pub(super) identifies: usize,
    pub(super) resumes: usize,
    /// READY and RESUMED handshakes completed.
    pub(super) handshakes: usize,
    pub(super) heartbeats: usize,
    /// `d` of the last heartbeat: the last `s` the client saw.
    pub(super) last_heartbeat_seq: Option<u64>,
    /// `d` of every IDENTIFY (token included).
    pub(super) identify_payloads: Vec<Value>,
    /// Path and query of every gateway WebSocket request.
    pub(super) gateway_requests: Vec<String>,
    pub(super) sent: Vec<SentMessage>,
    /// Attachments of users' messages, by `<id>/<name>`.
    pub(super) attachments: HashMap<String, Arc<Vec<u8>>>,
    /// Uploaded file parts held until their route takes them, by id.
    pub(super) uploads: HashMap<u64, crate::multipart::Part>,
    /// Each bot message's content and components as they stand now (type 7 updates them).
    pub(super) bot_messages: HashMap<u64, (String, Option<Value>)>,
    /// Users' messages: id → channel (editing one is 403 `50005`).
    pub(super) user_messages: HashMap<u64, u64>,
    pub(super) edits: Vec<super::edits::EditedMessage>,
    pub(super) interactions: HashMap<u64, Interaction>,
    pub(super) interaction_responses: Vec<InteractionResponse>,
    pub(super) followups: Vec<Followup>,
    pub(super) commands: Vec<RegisteredCommand>,
    pub(super) typing: Vec<u64>,
}

impl World {
    fn new() -> World {
        World {
            calls: Vec::new(),
            violations: Vec::new(),
            failures: HashMap::new(),
            guilds: BTreeMap::new(),
            channels: HashMap::new(),
            users: HashMap::new(),
            dms: HashMap::new(),
            last_id: objects::first_snowflake(),
            heartbeat_ms: DEFAULT_HEARTBEAT_MS,
            ack_heartbeats: true,
            invalidate_next_resume: false,
            interaction_deadline: Some(INTERACTION_DEADLINE),
            session: None,
            live: None,
            pending: VecDeque::new(),
            connections: 0,
            identifies: 0,
            resumes: 0,
            handshakes: 0,
            heartbeats: 0,
            last_heartbeat_seq: None,
            identify_payloads: Vec::new(),
            gateway_requests: Vec::new(),
            sent: Vec::new(),
            attachments: HashMap::new(),
            uploads: HashMap::new(),
            interactions: HashMap::new(),
            bot_messages: HashMap::new(),
            user_messages: HashMap::new(),
            edits: Vec::new(),
            interaction_responses: Vec::new(),
            followups: Vec::new(),
            commands: Vec::new(),
            typing: Vec::new(),
        }
    }

    pub(super) fn violation(&mut self, violation: String) {
        tracing::warn!(%violation, "fake Discord saw a protocol violation");
        self.violations.push(violation);
    }

    /// A fresh snowflake, later than every one handed out before.
    pub(super) fn next_id(&mut self) -> u64 {
        self.last_id += 1;
        self.last_id
    }

    pub(super) fn remember_user(&mut self, user: &DUser) {
        self.users.insert(user.id, user.clone());
    }

    /// A user by id: the bot, one seen before, or `user<ID>`.
    pub(super) fn user(&self, id: u64) -> DUser {
        if id == super::types::BOT_ID {
            return DUser::bot();
        }
        self.users
            .get(&id)
            .cloned()
            .unwrap_or_else(|| DUser::new(id, &format!("user{id}")))
    }

    /// The DM channel with `user`, created when new.
    pub(super) fn dm_channel(&mut self, user: &DUser) -> u64 {
        if let Some(id) = self.dms.get(&user.id) {
            return *id;
        }
        let id = self.next_id();
        self.dms.insert(user.id, id);
        self.channels.insert(
            id,
            Channel::Dm {
                recipient: user.clone(),
            },
        );
        id
    }

    /// Makes sure the guild is known and, unless `channel_id` is known already (as a channel
    /// or thread), that it is one of its text channels.
    pub(super) fn ensure_guild_channel(&mut self, guild_id: u64, channel_id: u64) {
        let guild = self.guilds.entry(guild_id).or_insert_with(|| Guild {
            name: format!("guild-{guild_id}"),
            channels: Vec::new(),
            threads: Vec::new(),
        });
        if let std::collections::hash_map::Entry::Vacant(entry) = self.channels.entry(channel_id) {
            guild.channels.push(channel_id);
            entry.insert(Channel::Text { guild: guild_id });
        }
    }

    /// The `Channel` object of a known channel.
    pub(super) fn channel_json(&self, id: u64) -> Option<Value> {
        Some(match self.channels.get(&id)? {
            Channel::Text { guild } => {
                let position = self
                    .guilds
                    .get(guild)
                    .and_then(|g| g.channels.iter().position(|c| *c == id))
                    .unwrap_or(0);
                objects::text_channel(id, Some(*guild), position)
            }
            Channel::Thread { guild, parent } => objects::thread(id, *guild, *parent),
            Channel::Dm { recipient } => objects::dm_channel(id, recipient),
        })
    }

    /// The `GUILD_CREATE` payload of a known guild.
    pub(super) fn guild_json(&self, id: u64) -> Option<Value> {
        let guild = self.guilds.get(&id)?;
        let channels = guild
            .channels
            .iter()
            .enumerate()
            .map(|(position, channel)| objects::text_channel(*channel, None, position))
            .collect();
        let threads = guild
            .threads
            .iter()
            .map(|(thread, parent)| objects::thread(*thread, id, *parent))
            .collect();
        Some(objects::guild(id, &guild.name, channels, threads))
    }

    /// Queues a dispatch and writes it at once when a session is live.
    pub(super) fn push_dispatch(&mut self, t: &str, d: Value) {
        self.pending.push_back(Pending { t: t.to_owned(), d });
        self.flush();
    }

    /// Writes the queued dispatches to the live connection, in order.
    pub(super) fn flush(&mut self) {
        while self.live.is_some() && self.session.is_some() {
            let Some(pending) = self.pending.pop_front() else {
                return;
            };
            self.dispatch(&pending.t, pending.d);
        }
    }

    /// Gives a dispatch the session's next `s`, logs it, and writes it to the live connection.
    /// Events the session's intents exclude are dropped, as Discord does.
    pub(super) fn dispatch(&mut self, t: &str, d: Value) {
        let Some(session) = self.session.as_mut() else {
            return;
        };
        let Some(d) = super::gateway::shape_for_intents(session.intents, t, d) else {
            tracing::info!(
                event = t,
                "fake Discord: event not sent, the intents exclude it"
            );
            return;
        };
        let interaction = (t == "INTERACTION_CREATE")
            .then(|| objects::read_sf(&d["id"]))
            .flatten();
        session.seq += 1;
        let seq = session.seq;
        let text = serde_json::json!({"op": 0, "s": seq, "t": t, "d": d}).to_string();
        session.log.push((seq, text.clone()));
        self.send(Outbound::Text(text));
        if let Some(interaction) = interaction.and_then(|id| self.interactions.get_mut(&id)) {
            interaction.delivered.get_or_insert_with(Instant::now);
        }
    }

    /// Writes a frame to the live connection, if any.
    pub(super) fn send(&mut self, frame: Outbound) {
        if let Some(live) = &self.live {
            if live.tx.send(frame).is_err() {
                self.live = None;
            }
        }
    }
}

/// State shared by the handle, the REST handlers and the gateway connections.
#[derive(Debug)]
pub(super) struct State {
    world: Mutex<World>,
    /// Woken after every change to the world.
    pub(super) changed: Notify,
    /// Fired on shutdown: hanging answers and gateway connections give up.
    pub(super) cancel: CancellationToken,
    /// The bot token, without `Bot `.
    pub(super) token: String,
    /// `ws://127.0.0.1:PORT`.
    pub(super) gateway_url: String,
}

impl State {
    pub(super) fn new(token: &str, gateway_url: String) -> State {
        State {
            world: Mutex::new(World::new()),
            changed: Notify::new(),
            cancel: CancellationToken::new(),
            token: token.strip_prefix("Bot ").unwrap_or(token).to_owned(),
            gateway_url,
        }
    }

    /// Locks ignoring poisoning: a panicking test thread must not hide the log from the others.
    fn world(&self) -> MutexGuard<'_, World> {
        self.world.lock().unwrap_or_else(PoisonError::into_inner)
    }

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

    /// Whether `header` is `Bot <token>`.
    pub(super) fn authorized(&self, header: Option<&str>) -> bool {
        header.and_then(|value| value.strip_prefix("Bot ")) == Some(self.token.as_str())
    }
}
