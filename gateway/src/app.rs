//! Building and running the daemon: open the store, start the runtime, channels, the
//! outbox worker, the config watcher and the HTTP server; then drain on shutdown.
//! Every background task is spawned into one `TaskTracker` owned here.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use switchboard_channels::webchat::WebChat;
use switchboard_channels::Inbound;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::adapters::Adapters;
use crate::agent::dispatch;
use crate::config::{spawn_watcher, Config, SharedEnv};
use crate::runtime::{EnvKeys, Runtime};
use crate::server::{self, AppState};
use crate::store::Store;
use crate::{outbox, routing, standby};

/// Inbound messages buffered between adapters and routing (backpressure beyond this).
const INBOUND_QUEUE: usize = 1024;
/// How long runs cancelled at shutdown get to checkpoint.
const CHECKPOINT_GRACE: Duration = Duration::from_secs(3);

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot create the state directory {0}: {1}")]
    StateDir(PathBuf, std::io::Error),
    #[error("cannot open the database: {0}")]
    Store(#[from] crate::store::StoreError),
    #[error("cannot listen on {0}: {1}")]
    Bind(String, std::io::Error),
    #[error("{0}")]
    Token(#[from] server::token_file::TokenFileError),
}

/// Everything `run` needs, resolved by `main`.
pub struct Options {
    pub config_path: PathBuf,
    pub state_dir: PathBuf,
    pub config: Config,
    pub env: SharedEnv,
    /// Fired when this process lost the gateway lease (PostgreSQL): the caller exits at
    /// once with `standby::EXIT_LEASE_LOST`, without the graceful drain.
    pub lease_lost: CancellationToken,
}

/// What the floors above the runtime keep for the whole process, wired together: the
/// agent's built-in tools with sub-agents', cron's and the MCP servers' added to them.
pub fn parts() -> crate::runtime::Parts {
    let mcp = Arc::new(crate::mcp::McpHub::default());
    let mut tools = crate::agent::tools::ToolRegistry::builtin().with_provider(mcp.clone());
    for tool in crate::subagents::spawn::tools() {
        tools.add(tool);
    }
    tools.add(Arc::new(crate::subagents::progress_tool::Progress));
    tools.add(Arc::new(crate::cron::tool::CronTool));
    let run_ends: Vec<Arc<dyn crate::agent::hooks::RunEndHook>> =
        vec![Arc::new(crate::subagents::announce::OnChildEnd)];
    crate::runtime::Parts::default()
        .with_shared(mcp)
        .with(tools)
        .with(crate::agent::hooks::RunEndHooks::new(run_ends))
}

/// How to open the web chat, on stdout just before the ready line. The generated token is shown
/// in the link once, the start that makes it (later: where it is, and `switchboard
/// status` prints the link); that start also says in the log that the token now guards
/// what was open on loopback.
fn announce_token(local: SocketAddr, source: &server::token_file::TokenSource) {
    use server::token_file::TokenSource;
    match source {
        TokenSource::File(file) if file.created => {
            println!("web chat: http://{local}/?token={}", file.token);
            tracing::warn!(
                file = %file.path.display(),
                "no gateway.auth.token is set: the API, /ws and /api/events now need the token made in this file, on loopback too (the CLI reads it; `switchboard status` prints the web chat's link; gateway.auth.mode \"none\" serves loopback without a token)"
            );
        }
        TokenSource::File(file) => {
            println!(
                "web chat: http://{local}/ (token in {}; `switchboard status` prints the link)",
                file.path.display()
            );
            tracing::info!(file = %file.path.display(), "gateway token from the state dir");
        }
        TokenSource::Configured => {
            println!("web chat: http://{local}/?token=<gateway.auth.token>");
        }
        TokenSource::Off => {
            println!("web chat: http://{local}/");
            tracing::warn!("gateway.auth.mode is \"none\": anything that reaches this address is served without a token");
        }
    }
}

/// Run the daemon until `shutdown` fires; then drain and return.
pub async fn run(opts: Options, shutdown: CancellationToken) -> Result<(), StartError> {
    let started = Instant::now();
    crate::store::private_dir(&opts.state_dir)
        .map_err(|e| StartError::StateDir(opts.state_dir.clone(), e))?;
    let cfg = opts.config;
    // The token before anything else: a refused token file stops the start at once.
    let token =
        server::token_file::for_daemon(&cfg.gateway.auth, opts.env.as_ref(), &opts.state_dir)?;
    // No log line shows a secret from here on (`secrets::LogWriter`).
    crate::secrets::remember_config(&cfg);
    crate::secrets::remember(token.token.iter());
    crate::secrets::remember(
        crate::secrets::env_secrets()
            .into_iter()
            .filter_map(|k| (opts.env)(k)),
    );
    let db_url = cfg.database_url(&opts.state_dir);
    // On SQLite, one process per database file: a second one stands by, before it opens
    // the database, until the first is gone (`standby::file_lock`).
    let _file_lock = match crate::store::health::sqlite_file(&db_url) {
        Some(db) => {
            if let Some(dir) = db.parent().filter(|d| !d.as_os_str().is_empty()) {
                crate::store::private_dir(dir)
                    .map_err(|e| StartError::StateDir(dir.to_owned(), e))?;
            }
            match standby::file_lock::acquire(&db, &shutdown).await {
                Some(lock) => lock,
                None => {
                    tracing::info!("stopped while standing by");
                    return Ok(());
                }
            }
        }
        None => None,
    };
    // This process's owner id on PostgreSQL (its leases; in shared mode, its rows' too).
    let owner = standby::owner_id();
    let timeout = cfg.storage.lease_timeout;
    let shared = cfg.storage.processes == crate::config::Processes::Shared;
    let store = if shared && crate::config::is_postgres_url(&db_url) {
        let member = crate::store::RowLeases {
            owner: owner.clone(),
            ttl: timeout,
        };
        Store::open_postgres_shared(&db_url, member).await?
    } else {
        Store::connect(&db_url).await?
    };
    tracing::info!(db = %crate::config::redact_url(&db_url), engine = store.engine_name(), "store ready");
    let tasks = TaskTracker::new();
    // On PostgreSQL nothing acts (recovery, channels, outbox, timers, HTTP) before this
    // process holds the gateway lease; another process's holds it, this one stands by.
    let lost = opts.lease_lost.clone();
    let active = match standby::start(&store, owner, timeout, shared, &shutdown, &tasks, lost).await
    {
        standby::Start::Stopped => {
            store.close().await;
            tracing::info!("stopped while standing by");
            return Ok(());
        }
        standby::Start::Alone => None,
        standby::Start::Active(active) => Some(active),
    };

    // Shared mode: this process is one of several active on the database.
    let member = active
        .as_ref()
        .filter(|a| a.shared())
        .map(|a| crate::cluster::Member {
            owner: Arc::from(a.owner()),
            lease_timeout: timeout,
        });
    let env_keys = EnvKeys {
        openai: (opts.env)("OPENAI_API_KEY"),
        anthropic: (opts.env)("ANTHROPIC_API_KEY"),
    };
    let (cfg_tx, cfg_rx) = watch::channel(Arc::new(cfg.clone()));
    // Runs are children of `runs_cancel`; the server and adapters stop on `accept_cancel`.
    let runs_cancel = CancellationToken::new();
    let accept_cancel = CancellationToken::new();
    let rt = Runtime::new(
        store.clone(),
        cfg_rx.clone(),
        env_keys,
        crate::runtime::Home::new(opts.state_dir.clone(), member.clone()),
        runs_cancel.clone(),
        parts(),
    );
    // Read the agent files now, so a bad one is reported at start, not at first use.
    rt.agents(&rt.config());
    if rt.config().tools.message.allow_any_chat {
        tracing::warn!("tools.message.allowAnyChat is an old key: it lets runs write to any chat, as tools.message.allowTargets: [\"*\"] does; list the chats instead");
    }
    crate::agent::tools::exec::sandbox::set_config_file(&opts.config_path);

    match spawn_watcher(
        opts.config_path.clone(),
        opts.env.clone(),
        cfg_tx,
        accept_cancel.clone(),
    ) {
        Ok(handle) => {
            tasks.spawn(async move {
                let _ = handle.await;
            });
        }
        Err(e) => tracing::warn!(error = %e, "config hot reload is unavailable"),
    }

    // Channels.
    let (inbound_tx, inbound_rx) = mpsc::channel::<Inbound>(INBOUND_QUEUE);
    let webchat = Arc::new(WebChat::new());
    webchat.set_upload_dir(crate::server::webchat_files::upload_dir(&rt.home.state_dir));
    let adapters = Arc::new(Adapters::new(
        rt.clone(),
        inbound_tx.clone(),
        opts.env.clone(),
        tasks.clone(),
        accept_cancel.clone(),
        active
            .as_ref()
            .filter(|a| !a.shared())
            .map(|a| a.lease().clone()),
        webchat.clone(),
    ));
    adapters.apply(&cfg);
    drop(inbound_tx);
    tasks.spawn(apply_live_config(
        rt.clone(),
        adapters.clone(),
        cfg_rx.clone(),
        accept_cancel.clone(),
    ));

    let outbox_cancel = CancellationToken::new();
    // Open sockets (web chats, event streams) stay until the outbox is flushed: a turn that
    // finishes during the shutdown grace still reaches the browser that asked.
    let sockets_cancel = CancellationToken::new();
    let outbox_task = tokio::spawn(outbox::run(rt.clone(), outbox_cancel.clone()));
    // Sent files' copies and stale uploads: swept now (what a crash left) and hourly.
    tasks.spawn(crate::media::sweep::run(rt.clone(), accept_cancel.clone()));
    // Shared mode: the bus to the other processes, up before any run starts here, and
    // until the sockets close (stops reach runs that drain; events reach other clients).
    if let Some(member) = &member {
        crate::cluster::bus::start(&rt, member, &tasks, sockets_cancel.clone()).await?;
    }

    warn_shared_dm_session(&rt, &cfg).await;
    // Worktrees a crash left half made or unfinished, before their runs resume.
    crate::subagents::worktree::sweep(&rt).await;
    let recovered = dispatch::recover(&rt).await?;
    let announces = crate::subagents::announce::recover(&rt).await?;
    crate::subagents::progress::recover(&rt).await;
    if recovered + announces > 0 {
        tracing::info!(runs = recovered, announces, "recovered unfinished work");
    }
    // Shared mode: from now on, the work of processes that die is taken over here too.
    if let Some(member) = &member {
        tasks.spawn(crate::cluster::takeover::run(
            rt.clone(),
            member.clone(),
            accept_cancel.clone(),
        ));
    }
    // Only now are new messages routed (until then they wait unacknowledged): a new run
    // must queue behind its session's recovered ones, or it would claim their messages.
    tasks.spawn(route_inbound(rt.clone(), inbound_rx, accept_cancel.clone()));
    tasks.spawn(crate::subagents::archive::run(
        rt.clone(),
        accept_cancel.clone(),
    ));
    // Scheduled jobs from the config are synced into the job table before the scheduler
    // looks at it.
    if let Err(e) = crate::cron::jobs::sync_config(&rt.store, &cfg).await {
        tracing::error!(error = %e, "cron: cannot sync the config's jobs");
    }
    tasks.spawn(crate::cron::scheduler::run_or_hold(
        rt.clone(),
        accept_cancel.clone(),
    ));

    // HTTP server.
    let addr = format!("{}:{}", cfg.gateway.bind, cfg.gateway.port);
    let listener = TcpListener::bind(&addr)
        .await
        .map_err(|e| StartError::Bind(addr.clone(), e))?;
    let local: SocketAddr = listener
        .local_addr()
        .map_err(|e| StartError::Bind(addr.clone(), e))?;
    let state = AppState {
        rt: rt.clone(),
        webchat: webchat.clone(),
        doors: Arc::new(server::Doors::from_config(
            &cfg.gateway,
            token.token.clone(),
        )),
        started,
        closing: sockets_cancel.clone(),
        adapters: adapters.clone(),
        lease_owner: active.as_ref().map(|a| Arc::from(a.owner())),
    };
    let app = server::router(state, &server::HttpLimits::from_config(&cfg.gateway));
    tasks.spawn(server::serve(
        listener,
        app,
        server::ConnLimits::from_config(&cfg.gateway.http),
        accept_cancel.clone(),
    ));
    // How to open the web chat, then the ready line: tests and scripts wait for it.
    announce_token(local, &token.source);
    println!("switchboard listening on http://{local}");
    tracing::info!(addr = %local, startup_ms = started.elapsed().as_millis() as u64, "switchboard ready");
    // What the sandbox settings do on this host, said once the daemon serves: the probe
    // starts bubblewrap (milliseconds), and commands probe for themselves anyway.
    let (sandbox_cfg, stop) = (rt.config(), accept_cancel.clone());
    tasks.spawn(async move {
        tokio::select! {
            _ = stop.cancelled() => {}
            _ = crate::agent::tools::exec::sandbox::announce(&sandbox_cfg) => {}
        }
    });
    // Memory a burst of work freed goes back to the OS once the daemon is quiet.
    tasks.spawn(crate::memory::release_when_quiet(accept_cancel.clone()));
    // MCP servers start once the daemon serves: nothing waits for them, and their start
    // (a child process each) does not take CPU from the daemon's own.
    rt.parts.get::<crate::mcp::McpHub>().start(
        crate::mcp::HubContext {
            tasks: tasks.clone(),
            cancel: runs_cancel.child_token(),
            state_dir: opts.state_dir.clone(),
            keys: rt.http.keys.clone(),
            host_env: opts.env.clone(),
        },
        &cfg,
    );

    shutdown.cancelled().await;
    tracing::info!("shutting down: no new messages; waiting for running turns");
    accept_cancel.cancel();
    rt.lanes.close();
    let grace = rt.config().gateway.shutdown_grace;
    if tokio::time::timeout(grace, rt.lanes.wait_idle())
        .await
        .is_err()
    {
        tracing::warn!(grace = ?grace, runs = rt.runs.all().len(), "turns still running after the grace period; cancelling them (they resume at the next start)");
        runs_cancel.cancel();
        if tokio::time::timeout(CHECKPOINT_GRACE, rt.lanes.wait_idle())
            .await
            .is_err()
        {
            tracing::warn!("some runs did not checkpoint in time; they resume from their transcript at the next start");
        }
    }
    runs_cancel.cancel();
    rt.tasks.tracker.close();
    if tokio::time::timeout(CHECKPOINT_GRACE, rt.tasks.tracker.wait())
        .await
        .is_err()
    {
        tracing::warn!("background jobs did not stop in time");
    }
    outbox_cancel.cancel();
    let _ = outbox_task.await;
    if let Some(active) = active {
        active.release().await;
    }
    sockets_cancel.cancel();
    tasks.close();
    if tokio::time::timeout(Duration::from_secs(5), tasks.wait())
        .await
        .is_err()
    {
        tracing::warn!("background tasks did not stop in time");
    }
    store.close().await;
    tracing::info!("stopped");
    Ok(())
}

/// Route inbound messages one at a time (keeps each chat's order). The adapter's ack
/// fires once routing has committed (or deliberately dropped) the message, never for a
/// message that could not be stored.
async fn route_inbound(
    rt: Arc<Runtime>,
    mut rx: mpsc::Receiver<Inbound>,
    cancel: CancellationToken,
) {
    // Unrouted messages are not acked, so platforms that redeliver will send them again.
    while let Some(inbound) = tokio::select! { m = rx.recv() => m, _ = cancel.cancelled() => None }
    {
        if let Some(press) = inbound.msg.press.clone() {
            // A button press is acknowledged with its answer (none if it was not handled).
            let answer = routing::press::handle(&rt, &inbound.msg, &press).await;
            if let Some((tx, answer)) = inbound.answer.zip(answer) {
                let _ = tx.send(answer);
            }
            continue;
        }
        let handled = routing::handle_inbound(&rt, inbound.msg).await;
        // A message that was not stored is not acknowledged: dropping the ack tells the
        // adapter, which leaves it to the platform to deliver again.
        if let Some(ack) = inbound.ack.filter(|_| handled.ack()) {
            let _ = ack.send(());
        }
    }
}

/// Apply the live parts of a reloaded config: lane sizes and channel adapters.
async fn apply_live_config(
    rt: Arc<Runtime>,
    adapters: Arc<Adapters>,
    mut rx: watch::Receiver<Arc<Config>>,
    cancel: CancellationToken,
) {
    loop {
        tokio::select! {
            changed = rx.changed() => if changed.is_err() { return },
            _ = cancel.cancelled() => return,
        }
        let cfg = rx.borrow_and_update().clone();
        crate::secrets::remember_config(&cfg);
        rt.lanes
            .get(crate::queue::MAIN)
            .resize(cfg.agents.defaults.max_concurrent as usize);
        rt.lanes
            .get(crate::queue::SUBAGENT)
            .resize(cfg.agents.defaults.subagents.max_concurrent as usize);
        rt.lanes
            .get(crate::queue::CRON)
            .resize(cfg.cron.max_concurrent as usize);
        adapters.apply(&cfg);
        rt.parts.get::<crate::mcp::McpHub>().apply(&cfg);
        if let Err(e) = crate::cron::jobs::sync_config(&rt.store, &cfg).await {
            tracing::error!(error = %e, "cron: cannot sync the config's jobs");
        }
        rt.tasks.cron_wake.notify_one();
        warn_shared_dm_session(&rt, &cfg).await;
        tracing::info!(
            main = cfg.agents.defaults.max_concurrent,
            subagent = cfg.agents.defaults.subagents.max_concurrent,
            "config applied"
        );
    }
}

/// Warn when several allowed DM senders share one session (`session.dmScope: "main"`).
async fn warn_shared_dm_session(rt: &Runtime, cfg: &Config) {
    let approved: Vec<(String, String)> = match rt.store.list_pairings().await {
        Ok(rows) => rows
            .into_iter()
            .filter(|p| p.status == "approved")
            .map(|p| (p.channel, p.sender_id))
            .collect(),
        Err(e) => {
            tracing::warn!(error = %e, "cannot read the approved pairings");
            Vec::new()
        }
    };
    if let Some(warning) = routing::shared_dm_warning(cfg, &approved) {
        tracing::warn!("{warning}");
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use switchboard_channels::{ChatKind, InboundMessage, Origin};

    use super::*;
    use crate::runtime::EnvKeys;

    fn message(id: &str) -> InboundMessage {
        InboundMessage {
            origin: Origin::webchat("main", ChatKind::Direct),
            sender_id: "webchat:main".into(),
            sender_name: None,
            sender_username: None,
            text: "hello".into(),
            message_id: Some(id.into()),
            addressed: true,
            press: None,
            media: Vec::new(),
        }
    }

    /// The ack that lets an adapter confirm a message to its platform (Telegram's offset)
    /// fires once the message is stored, and never when storing it failed. Catches: acking
    /// after routing whatever happened, which moved the offset past lost messages.
    #[tokio::test]
    async fn a_message_is_acknowledged_only_once_it_is_stored() {
        let store = Store::open_in_memory().await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let (_cfg_tx, cfg_rx) = watch::channel(Arc::new(Config::default()));
        let rt = Runtime::new(
            store.clone(),
            cfg_rx,
            EnvKeys::default(),
            crate::runtime::Home::new(dir.path().to_path_buf(), None),
            CancellationToken::new(),
            Default::default(),
        );
        let (tx, rx) = mpsc::channel(4);
        let cancel = CancellationToken::new();
        let router = tokio::spawn(route_inbound(rt.clone(), rx, cancel.clone()));

        let (inbound, taken) = Inbound::with_ack(message("1"));
        tx.send(inbound).await.unwrap();
        assert_eq!(taken.await, Ok(()), "stored, so acknowledged");

        store
            .execute_for_tests(
                "CREATE TRIGGER fail BEFORE INSERT ON inbox BEGIN SELECT RAISE(ABORT, 'disk on fire'); END",
            )
            .await
            .unwrap();
        let (inbound, taken) = Inbound::with_ack(message("2"));
        tx.send(inbound).await.unwrap();
        assert!(taken.await.is_err(), "not stored, so not acknowledged");

        cancel.cancel();
        router.await.unwrap();
        rt.lanes.close();
        rt.tasks.shutdown.cancel();
    }

    /// Catches: a tool of a floor above the agent (sub-agents', cron's) left out of the
    /// daemon's registry, or a tool name the config's tool policy does not know.
    #[test]
    fn every_tool_is_offered_by_default_and_known_to_the_config() {
        let reg = parts().get::<crate::agent::tools::ToolRegistry>();
        let cfg = Config::default();
        assert_eq!(
            reg.for_run(&cfg, None, false)
                .into_keys()
                .collect::<Vec<_>>(),
            vec![
                "agents_list",
                "cron",
                "edit",
                "exec",
                "glob",
                "grep",
                "ls",
                "message",
                "process",
                "read",
                "sessions_history",
                "sessions_list",
                "sessions_send",
                "sessions_spawn",
                "subagents",
                "task",
                "web_fetch",
                "write"
            ]
        );
        let main = reg.for_run(&cfg, None, false);
        for name in main.keys().chain(reg.for_run(&cfg, None, true).keys()) {
            assert_eq!(crate::config::check_entry(name), None, "{name}");
        }
    }
}
