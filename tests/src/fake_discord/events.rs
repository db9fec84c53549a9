//! The world tests set up (guilds, channels, threads), the events they push through the
//! gateway, and control of the gateway connection.

use std::collections::hash_map::Entry;
use std::time::Duration;

use anyhow::Context as _;
use serde_json::{json, Value};
use tokio::sync::oneshot;

use super::objects::{self, sf, CommandParts, MessageParts};
use super::routes::mentions;
use super::state::{Channel, Guild, Interaction, Outbound};
use super::types::DUser;
use super::FakeDiscord;

/// How long `drop_connection` waits for the connection to be gone.
const DROP_WAIT: Duration = Duration::from_secs(5);

impl FakeDiscord {
    /// Sets the `heartbeat_interval` of future HELLOs, in milliseconds.
    pub fn set_heartbeat_interval(&self, ms: u64) {
        self.inner.state.change(|world| world.heartbeat_ms = ms);
    }

    /// How long after its INTERACTION_CREATE an interaction may get its first callback
    /// (Discord: 3 s); `None` for no limit.
    pub fn set_interaction_deadline(&self, deadline: Option<Duration>) {
        self.inner
            .state
            .change(|world| world.interaction_deadline = deadline);
    }

    /// Adds a guild with text channels (or more channels to a known guild). A session that
    /// exists gets GUILD_CREATE (new guild) or CHANNEL_CREATE (new channels); later sessions
    /// get the guild in their READY burst.
    pub fn add_guild(&self, guild_id: u64, name: &str, text_channels: &[u64]) {
        self.inner.state.change(|world| {
            let new_guild = !world.guilds.contains_key(&guild_id);
            let guild = world.guilds.entry(guild_id).or_insert_with(|| Guild {
                name: name.to_owned(),
                channels: Vec::new(),
                threads: Vec::new(),
            });
            guild.name = name.to_owned();
            let added: Vec<u64> = text_channels
                .iter()
                .copied()
                .filter(|channel| !guild.channels.contains(channel))
                .collect();
            guild.channels.extend(&added);
            for channel in &added {
                world
                    .channels
                    .insert(*channel, Channel::Text { guild: guild_id });
            }
            if world.session.is_none() {
                return;
            }
            if new_guild {
                if let Some(payload) = world.guild_json(guild_id) {
                    world.push_dispatch("GUILD_CREATE", payload);
                }
            } else {
                for channel in added {
                    if let Some(payload) = world.channel_json(channel) {
                        world.push_dispatch("CHANNEL_CREATE", payload);
                    }
                }
            }
        });
    }

    /// Adds a public thread under `parent_channel`; a session that exists gets THREAD_CREATE.
    pub fn add_thread(&self, guild_id: u64, parent_channel: u64, thread_id: u64) {
        self.inner.state.change(|world| {
            world.ensure_guild_channel(guild_id, parent_channel);
            if let Some(guild) = world.guilds.get_mut(&guild_id) {
                if !guild.threads.iter().any(|(thread, _)| *thread == thread_id) {
                    guild.threads.push((thread_id, parent_channel));
                }
            }
            world.channels.insert(
                thread_id,
                Channel::Thread {
                    guild: guild_id,
                    parent: parent_channel,
                },
            );
            if world.session.is_some() {
                let mut payload = objects::thread(thread_id, guild_id, parent_channel);
                payload["newly_created"] = json!(true);
                world.push_dispatch("THREAD_CREATE", payload);
            }
        });
    }

    /// Pushes MESSAGE_CREATE for a message in a guild text channel or thread (an unknown
    /// channel becomes a text channel of the guild). `<@2000>` in the text mentions the bot.
    /// Returns the message id.
    pub fn guild_message(
        &self,
        guild_id: u64,
        channel_id: u64,
        author: DUser,
        content: &str,
    ) -> u64 {
        self.inner.state.change(|world| {
            world.ensure_guild_channel(guild_id, channel_id);
            world.remember_user(&author);
            let id = world.next_id();
            world.user_messages.insert(id, channel_id);
            let mentions = mentions(world, content);
            let message = objects::message(MessageParts {
                id,
                channel_id,
                guild_id: Some(guild_id),
                author: objects::user(&author),
                content,
                mentions,
                member: Some(objects::member(None)),
                reply_to: None,
                webhook: false,
            });
            world.push_dispatch("MESSAGE_CREATE", message);
            id
        })
    }

    /// Pushes MESSAGE_CREATE for a DM from `author` (the DM channel is created on first use).
    /// Returns the DM channel id and the message id.
    pub fn dm_message(&self, author: DUser, content: &str) -> (u64, u64) {
        self.inner.state.change(|world| {
            world.remember_user(&author);
            let channel_id = world.dm_channel(&author);
            let id = world.next_id();
            world.user_messages.insert(id, channel_id);
            let mentions = mentions(world, content);
            let message = objects::message(MessageParts {
                id,
                channel_id,
                guild_id: None,
                author: objects::user(&author),
                content,
                mentions,
                member: None,
                reply_to: None,
                webhook: false,
            });
            world.push_dispatch("MESSAGE_CREATE", message);
            (channel_id, id)
        })
    }

    /// Pushes INTERACTION_CREATE for slash command `/name` with string options, in a guild
    /// channel (`guild_id: Some`) or a DM (`None`; an unknown `channel_id` becomes the DM with
    /// `user`). Returns the interaction id.
    pub fn slash_command(
        &self,
        guild_id: Option<u64>,
        channel_id: u64,
        user: DUser,
        name: &str,
        options: &[(&str, &str)],
    ) -> u64 {
        self.inner.state.change(|world| {
            world.remember_user(&user);
            match guild_id {
                Some(guild) => world.ensure_guild_channel(guild, channel_id),
                None => {
                    if let Entry::Vacant(entry) = world.channels.entry(channel_id) {
                        entry.insert(Channel::Dm {
                            recipient: user.clone(),
                        });
                        world.dms.entry(user.id).or_insert(channel_id);
                    }
                }
            }
            let id = world.next_id();
            let token = format!("fake-interaction-{id}-{}", uuid::Uuid::new_v4().simple());
            let command_id = world
                .commands
                .iter()
                .filter(|command| command.name == name)
                .find(|command| command.guild_id.is_none() || command.guild_id == guild_id)
                .map(|command| command.id);
            let command_id = command_id.unwrap_or_else(|| world.next_id());
            let channel = world
                .channel_json(channel_id)
                .unwrap_or_else(|| json!({"id": sf(channel_id), "type": 0}));
            let interaction = objects::command_interaction(CommandParts {
                id,
                token: &token,
                guild_id,
                channel,
                user: &user,
                command_id,
                name,
                options,
            });
            world.interactions.insert(
                id,
                Interaction {
                    token,
                    channel: channel_id,
                    delivered: None,
                    answered: None,
                    pressed: None,
                },
            );
            world.push_dispatch("INTERACTION_CREATE", interaction);
            id
        })
    }

    /// Pushes any dispatch (`t` and `d` as Discord would send them).
    pub fn push_dispatch(&self, t: &str, d: Value) {
        self.inner.state.change(|world| world.push_dispatch(t, d));
    }

    /// Waits until `n` READY or RESUMED handshakes have completed in total.
    pub async fn wait_ready(&self, n: usize, timeout: Duration) -> anyhow::Result<()> {
        self.wait(timeout, |world| world.handshakes >= n)
            .await
            .with_context(|| {
                format!(
                    "fake Discord: waited {timeout:?} for {n} READY/RESUMED handshakes, saw {} \
                     ({} connections, {} IDENTIFY, {} RESUME, violations {:?})",
                    self.inner.state.read(|world| world.handshakes),
                    self.inner.state.read(|world| world.connections),
                    self.identifies(),
                    self.resumes(),
                    self.violations()
                )
            })
    }

    /// Ends the live gateway connection: `None` drops TCP without a close frame (the client
    /// sees 1006), `Some(code)` sends a close frame first. Returns once the socket is gone;
    /// events pushed from now on wait for the next session.
    pub async fn drop_connection(&self, close_code: Option<u16>) {
        let (done, gone) = oneshot::channel();
        let live = self.inner.state.change(|world| world.live.take());
        let Some(live) = live else {
            return;
        };
        let frame = match close_code {
            None => Outbound::Cut(Some(done)),
            Some(code) => {
                Outbound::Close(code, "closed by the fake Discord".to_owned(), Some(done))
            }
        };
        if live.tx.send(frame).is_ok() {
            let _ = tokio::time::timeout(DROP_WAIT, gone).await;
        }
    }

    /// Sends op 7 RECONNECT on the live connection.
    pub fn request_reconnect(&self) {
        self.inner.state.change(|world| {
            world.send(Outbound::Text(
                json!({"op": 7, "d": null, "s": null, "t": null}).to_string(),
            ));
        });
    }

    /// Stops (`true`) or resumes answering heartbeats with op 11.
    pub fn stop_acking_heartbeats(&self, stop: bool) {
        self.inner
            .state
            .change(|world| world.ack_heartbeats = !stop);
    }

    /// The next RESUME gets op 9 INVALID SESSION (`d: false`), so the client must IDENTIFY.
    pub fn invalidate_session(&self) {
        self.inner
            .state
            .change(|world| world.invalidate_next_resume = true);
    }

    /// IDENTIFYs accepted (right token, intents given).
    pub fn identifies(&self) -> usize {
        self.inner.state.read(|world| world.identifies)
    }

    /// RESUMEs received with the right token (answered with replay or op 9).
    pub fn resumes(&self) -> usize {
        self.inner.state.read(|world| world.resumes)
    }

    /// Heartbeats received.
    pub fn heartbeats(&self) -> usize {
        self.inner.state.read(|world| world.heartbeats)
    }

    /// `d` of the last heartbeat: the last `s` the client said it saw.
    pub fn last_heartbeat_seq(&self) -> Option<u64> {
        self.inner.state.read(|world| world.last_heartbeat_seq)
    }

    /// `d` of each accepted IDENTIFY (with `token`, `intents`, `properties`, …).
    pub fn identify_payloads(&self) -> Vec<Value> {
        self.inner
            .state
            .read(|world| world.identify_payloads.clone())
    }

    /// `intents` of the last accepted IDENTIFY.
    pub fn intents(&self) -> Option<u64> {
        self.inner.state.read(|world| {
            world
                .identify_payloads
                .last()
                .and_then(|d| d["intents"].as_u64())
        })
    }

    /// Path and query of each gateway WebSocket request (serenity: `/?v=10`).
    pub fn gateway_requests(&self) -> Vec<String> {
        self.inner
            .state
            .read(|world| world.gateway_requests.clone())
    }

    /// Whether a session is live (identified or resumed, connection open).
    pub fn is_connected(&self) -> bool {
        self.inner.state.read(|world| world.live.is_some())
    }
}
