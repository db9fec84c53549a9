//! The config file's shape: serde types mirroring the JSON5 file, strict
//! (`deny_unknown_fields`), with defaults. Semantic checks live in `validate.rs`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::duration;

/// The whole config file. Every section is optional; an empty file means all defaults.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct Config {
    pub gateway: GatewayConfig,
    pub storage: StorageConfig,
    pub models: ModelsConfig,
    pub agents: AgentsConfig,
    pub tools: super::tools::ToolsConfig,
    pub messages: MessagesConfig,
    pub session: SessionConfig,
    pub channels: ChannelsConfig,
    pub mcp: super::mcp_cron::McpConfig,
    pub cron: super::mcp_cron::CronConfig,
    pub hooks: super::hooks::HooksConfig,
    pub media: super::media::MediaConfig,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct GatewayConfig {
    /// Address to bind the HTTP/WebSocket server to. A non-loopback address needs `auth.token`.
    pub bind: String,
    pub port: u16,
    pub auth: AuthConfig,
    /// Web origins (`scheme://host[:port]`) besides the daemon's own whose pages may use
    /// the web chat, `/ws` and the API, e.g. a TLS proxy's `https://chat.example.com`.
    pub allowed_origins: Vec<String>,
    pub reload: ReloadConfig,
    /// How long running turns may take to finish on SIGINT/SIGTERM before they are cancelled.
    #[serde(with = "duration")]
    #[schemars(with = "String")]
    pub shutdown_grace: Duration,
    /// Largest accepted HTTP request body, in bytes.
    pub max_body_bytes: usize,
    /// The HTTP server's request timeout and concurrency limit.
    pub http: HttpConfig,
}

/// `gateway.http`: how long a request may take, how many are served at once, and how
/// long a connection may sit without one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct HttpConfig {
    /// Requests served at once; one more is answered 503 with `Retry-After` at once,
    /// never queued. (WebSockets count only while their upgrade is answered.)
    pub max_concurrent: usize,
    /// Longest time from a request's arrival to its answer (408 past it). A message post
    /// with `wait: true` gets this on top of the longest wait it may ask for.
    #[serde(with = "duration")]
    #[schemars(with = "String")]
    pub timeout: Duration,
    /// Longest a connection may wait for its next request's headers: a kept-alive
    /// connection nobody uses is closed after this long, and so is one whose headers
    /// arrive slower than that. WebSockets are not timed by it.
    #[serde(with = "duration")]
    #[schemars(with = "String")]
    pub idle_timeout: Duration,
    /// Connections open at once (requests in flight and kept-alive connections; a
    /// WebSocket counts until it is upgraded). One more waits in the OS's accept queue
    /// until one closes.
    pub max_connections: usize,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            max_concurrent: 512,
            timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(5),
            max_connections: 1024,
        }
    }
}

impl Default for GatewayConfig {
    fn default() -> Self {
        GatewayConfig {
            bind: "127.0.0.1".into(),
            port: 18789,
            auth: AuthConfig::default(),
            allowed_origins: Vec::new(),
            reload: ReloadConfig::default(),
            shutdown_grace: Duration::from_secs(10),
            max_body_bytes: 1024 * 1024,
            http: HttpConfig::default(),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct AuthConfig {
    /// `token` (the default): every route but `/healthz` needs the bearer token, on
    /// loopback too. `none`: no token at all; accepted only on a loopback bind.
    pub mode: AuthMode,
    /// Bearer token for everything but `/healthz`. Env fallback: `SWITCHBOARD_TOKEN`; with
    /// neither, the daemon makes one in `<state_dir>/gateway.token` (mode 0600).
    pub token: Option<String>,
}

/// `gateway.auth.mode`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AuthMode {
    /// A bearer token guards every route but `/healthz`.
    #[default]
    Token,
    /// No token: anything that reaches the (loopback) address is served.
    None,
}

impl AuthConfig {
    /// The token in force from the config or the environment: the configured one, else a
    /// non-blank `SWITCHBOARD_TOKEN`; `None` with `mode: "none"` and when neither is set
    /// (then the daemon uses its generated token, `server::token_file`). (A blank
    /// configured token is a config error, never "no token"; it yields `None` here only so
    /// that an unvalidated config cannot turn it into an open door.) `run`, `config
    /// validate` and the CLI all go through this.
    pub fn effective_token(&self, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
        if self.mode == AuthMode::None {
            return None;
        }
        match &self.token {
            Some(t) if t.trim().is_empty() => None,
            Some(t) => Some(t.clone()),
            None => env(TOKEN_ENV).filter(|t| !t.trim().is_empty()),
        }
    }
}

/// Environment variable with the gateway token when `gateway.auth.token` is not set.
pub const TOKEN_ENV: &str = "SWITCHBOARD_TOKEN";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct ReloadConfig {
    pub mode: ReloadMode,
    /// Quiet time after the last file event before the file is read: 0s to 1m
    /// (`limits::MAX_DEBOUNCE`).
    #[serde(with = "duration")]
    #[schemars(with = "String")]
    pub debounce: Duration,
}

impl Default for ReloadConfig {
    fn default() -> Self {
        ReloadConfig {
            mode: ReloadMode::Hybrid,
            debounce: Duration::from_millis(250),
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReloadMode {
    /// Apply what can be applied live; log "restart required" for the rest.
    #[default]
    Hybrid,
    /// Same as hybrid (kept for users of the reference gateway).
    Hot,
    /// Log that a restart is required; apply nothing.
    Restart,
    /// Do not watch the file.
    Off,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct StorageConfig {
    /// `sqlite://PATH` (default `sqlite://<state dir>/data/switchboard.db`) or
    /// `postgres://user:password@host:5432/db` (`postgresql://` too).
    pub url: Option<String>,
    /// PostgreSQL only: how long the active process's lease lasts without a renewal. A
    /// standby takes over at most this long after the active process dies; it is renewed
    /// every third of it. 2s to 10m (`limits::LEASE_TIMEOUT`).
    #[serde(with = "duration")]
    #[schemars(with = "String")]
    pub lease_timeout: Duration,
    /// PostgreSQL only: how several processes on one database divide the work.
    /// `standby` (default): one process is active, the others stand by and take over when
    /// it dies. `shared`: every process is active and they share the work under leases
    /// (docs/postgres.md, "Shared mode").
    pub processes: Processes,
}

impl Default for StorageConfig {
    fn default() -> Self {
        StorageConfig {
            url: None,
            lease_timeout: Duration::from_secs(15),
            processes: Processes::Standby,
        }
    }
}

/// `storage.processes`: how several gateway processes on one PostgreSQL database divide
/// the work.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Processes {
    /// One active process (the `gateway` lease); the others stand by.
    #[default]
    Standby,
    /// Every process is active: channels, cron, runs, outbox rows and timers are held
    /// under leases, each by one process at a time.
    Shared,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct ModelsConfig {
    pub providers: BTreeMap<String, ProviderConfig>,
    /// How long a model that failed with an outage is passed over for its fallbacks
    /// before it is tried again (humantime, 0s to 1h; default 1m). docs/models.md.
    #[serde(with = "duration")]
    #[schemars(with = "String")]
    pub outage_cooldown: Duration,
}

impl Default for ModelsConfig {
    fn default() -> Self {
        ModelsConfig {
            providers: BTreeMap::new(),
            outage_cooldown: super::models::outage_cooldown_default(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProviderConfig {
    pub api: ProviderApi,
    /// Base URL, e.g. `https://api.openai.com/v1`. Defaults per `api`.
    #[serde(default)]
    pub base_url: Option<String>,
    #[serde(default)]
    pub api_key: Option<String>,
    #[serde(default)]
    pub models: Vec<ModelEntry>,
    /// Retries on 429/5xx/network errors before the step fails: 0 to 10.
    #[serde(default = "default_max_retries")]
    pub max_retries: u32,
    /// HTTP headers sent on every request to this provider (e.g. Azure's `api-key`);
    /// values may use `${ENV}` and are redacted wherever the config is shown.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
}

fn default_max_retries() -> u32 {
    3
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ProviderApi {
    OpenaiChat,
    Anthropic,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ModelEntry {
    pub id: String,
    #[serde(default)]
    pub cost: Option<ModelCost>,
    /// In tokens: 1 to 100,000,000. Requests are fitted to it (docs/context.md); a model
    /// without it is taken to have 128,000.
    #[serde(default)]
    pub context_window: Option<u32>,
    /// Most tokens of one answer: 1 to 1,000,000; default 4096.
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// An OpenAI reasoning model (`max_completion_tokens` instead of `max_tokens`).
    /// Unset: decided by the id (o1, o3, o4, gpt-5 families).
    #[serde(default)]
    pub reasoning: Option<bool>,
    /// What the model takes: `["text", "image"]` (the default: images are sent as image
    /// parts) or `["text"]` (a text-only model gets an image's note only).
    #[serde(default)]
    pub input: Option<Vec<super::media::ModelInput>>,
}

impl ModelEntry {
    /// Whether images are sent to this model as images (unset `input`: yes).
    pub fn takes_images(&self) -> bool {
        self.input
            .as_ref()
            .is_none_or(|i| i.contains(&super::media::ModelInput::Image))
    }
}

/// Price in USD per million tokens: 0 to 1,000,000.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ModelCost {
    pub input: f64,
    pub output: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentsConfig {
    pub defaults: AgentDefaults,
    pub list: Vec<AgentEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentDefaults {
    /// `provider/model`, or `{ primary, fallbacks: [...] }`. Unset: picked from
    /// OPENAI_API_KEY / ANTHROPIC_API_KEY if present.
    pub model: Option<super::models::AgentModel>,
    /// Folder with the bootstrap files (`AGENTS.md`, `TOOLS.md`, ...). Default: the state dir's `workspace/`.
    pub workspace: Option<PathBuf>,
    /// Cap of the `main` lane.
    pub max_concurrent: u32,
    /// Whole-run timeout (humantime, e.g. "10m"), 1s to 7 days; unset = none.
    #[serde(with = "duration::option")]
    #[schemars(with = "Option<String>")]
    pub timeout: Option<Duration>,
    /// Per model call timeout in seconds, clamped to 1..=1800.
    pub step_timeout_seconds: u64,
    /// Most model calls one run may make before it stops: 1 to 1000.
    pub max_steps: u32,
    pub subagents: SubagentDefaults,
    /// Running `exec` under bubblewrap (`config/sandbox.rs`).
    pub sandbox: super::sandbox::SandboxConfig,
    /// The most a day's runs may cost (`config/budget.rs`, docs/usage.md).
    pub budget: super::budget::BudgetConfig,
}

impl Default for AgentDefaults {
    fn default() -> Self {
        AgentDefaults {
            model: None,
            workspace: None,
            max_concurrent: 4,
            timeout: None,
            step_timeout_seconds: 120,
            max_steps: 32,
            subagents: SubagentDefaults::default(),
            sandbox: Default::default(),
            budget: Default::default(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct SubagentDefaults {
    pub model: Option<String>,
    pub thinking: Option<String>,
    /// Cap of the `subagent` lane.
    pub max_concurrent: u32,
    /// Minutes after a child's run ends before its session is archived: 0 (never) to
    /// 525600 (a year).
    pub archive_after_minutes: u64,
    /// Default run timeout of a child, in seconds: 0 (none) to 604800 (seven days); the
    /// same range as `sessions_spawn`'s `runTimeoutSeconds`.
    pub run_timeout_seconds: u64,
    pub on_restart: OnRestart,
    /// A child's run with no progress (no streamed model output, no tool activity) for
    /// this long (humantime) is cancelled and ends `timeout`. Default 5m; clamped to
    /// 30s..1h (`agent/run/heartbeat.rs`).
    #[serde(with = "duration")]
    #[schemars(with = "String")]
    pub stale_after: Duration,
}

impl SubagentDefaults {
    /// `archiveAfterMinutes` as milliseconds (`None`: never).
    pub fn archive_after_ms(&self) -> Option<i64> {
        let minutes = self.archive_after_minutes;
        (minutes > 0).then(|| minutes.saturating_mul(60_000) as i64)
    }
}

impl Default for SubagentDefaults {
    fn default() -> Self {
        SubagentDefaults {
            model: None,
            thinking: None,
            max_concurrent: 8,
            archive_after_minutes: 60,
            run_timeout_seconds: 0,
            on_restart: OnRestart::Resume,
            stale_after: Duration::from_secs(5 * 60),
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OnRestart {
    #[default]
    Resume,
    Interrupt,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentEntry {
    pub id: String,
    /// The agent that gets messages no binding claims. At most one; default: the first.
    pub default: bool,
    pub name: Option<String>,
    /// What the agent is for, shown by `agents_list`.
    pub description: Option<String>,
    /// Other names `sessions_spawn` takes for this agent (case-insensitive).
    pub aliases: Vec<String>,
    /// `provider/model`, or `{ primary, fallbacks: [...] }`.
    pub model: Option<super::models::AgentModel>,
    pub workspace: Option<PathBuf>,
    /// Extra system prompt text for this agent.
    pub system_prompt: Option<String>,
    pub subagents: Option<AgentSubagents>,
    /// This agent's tool policy, applied after the global `tools` one.
    pub tools: Option<super::tools::AgentToolsConfig>,
    /// This agent's sandbox settings, over `agents.defaults.sandbox`.
    pub sandbox: Option<super::sandbox::AgentSandbox>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentSubagents {
    /// Agent ids this agent may spawn under; `["*"]` = any. Default: only its own id.
    pub allow_agents: Option<Vec<String>>,
    pub model: Option<String>,
}

// `ToolsConfig` and the per-agent `AgentToolsConfig` live in `tools.rs`.

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct MessagesConfig {
    pub queue: QueueConfig,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct SessionConfig {
    pub dm_scope: DmScope,
    /// When the older turns are summarized to keep a session inside its model's window.
    pub compaction: super::context::CompactionConfig,
    /// When a quiet session starts fresh by itself.
    pub reset: super::context::ResetConfig,
}

/// Which session a direct message goes to (README, Security).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DmScope {
    /// Every DM of an agent shares `agent:<id>:main` (one conversation across people and
    /// channels: right for a personal assistant with one owner).
    #[default]
    Main,
    /// One session per sender: `agent:<id>:dm:<senderId>`.
    PerPeer,
    /// One session per channel and sender: `agent:<id>:<channel>:dm:<senderId>`.
    PerChannelPeer,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct QueueConfig {
    pub mode: QueueMode,
}

/// What happens to a message that arrives while its session is busy (docs/decisions.md:
/// busy sessions).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum QueueMode {
    /// Batch waiting messages into the next turn.
    #[default]
    Collect,
    /// One turn per message, in order.
    Followup,
    /// Abort the running turn and start anew with everything waiting.
    Interrupt,
    /// Inject into the running turn at its next model call.
    Steer,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct ChannelsConfig {
    pub webchat: super::channels::WebchatConfig,
    pub telegram: super::channels::TelegramConfig,
    pub discord: super::channels::DiscordConfig,
    pub slack: switchboard_channels::slack::SlackConfig,
}

impl ChannelsConfig {
    /// Every channel's section by channel id (its key here), in the order checks and
    /// doctor report them. A new channel adds its field above and its line here.
    pub fn sections(&self) -> Vec<(&'static str, &dyn super::channels::ChannelSection)> {
        use switchboard_channels::{discord, slack, telegram, webchat};
        vec![
            (telegram::CHANNEL_ID, &self.telegram),
            (discord::CHANNEL_ID, &self.discord),
            (slack::CHANNEL_ID, &self.slack),
            (webchat::CHANNEL_ID, &self.webchat),
        ]
    }
}
