//! The `switchboard` binary: parse the CLI, load and validate config before binding
//! anything (exit 64 on an invalid config), run the daemon until SIGINT/SIGTERM.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use switchboard::config::{self, Paths};
use switchboard::{app, cli};
use tokio_util::sync::CancellationToken;

/// Exit code for an invalid config (EX_USAGE... sysexits' EX_DATAERR is 65; the
/// contract says 64).
const EXIT_CONFIG: u8 = cli::exit::USAGE;

#[derive(Parser)]
#[command(
    name = "switchboard",
    version,
    about = "A chat gateway daemon for LLM agents"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Log lines as text (default) or one JSON object per line, with each run's session,
    /// run id and channel as fields.
    #[arg(
        long,
        global = true,
        env = "SWITCHBOARD_LOG_FORMAT",
        value_enum,
        default_value_t
    )]
    log_format: switchboard::logging::LogFormat,
}

#[derive(Subcommand)]
enum Command {
    /// Run the daemon in the foreground.
    Run {
        /// Config file (default: $SWITCHBOARD_CONFIG, else ~/.switchboard/config.json5).
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Work with the config file: validate, get, set, unset, print, schema.
    Config(cli::config_cmd::ConfigArgs),
    /// Approve, reject, revoke or list people who asked to talk to the bot (dmPolicy "pairing").
    Pairing(cli::pairing::PairingArgs),
    /// List or revoke the programs agents may run without asking (exec approvals).
    Approvals(cli::approvals::ApprovalsArgs),
    /// What the running daemon is doing: lanes, runs, channels, outbox.
    Status(cli::client::ClientArgs),
    /// The running daemon's sessions.
    Sessions(cli::daemon::SessionsArgs),
    /// The running daemon's sub-agent runs.
    Subagents(cli::daemon::SubagentsArgs),
    /// Send a message to a session of the running daemon.
    Send(cli::daemon::SendArgs),
    /// Check the setup: config, state dir, database, channel tokens, model providers, security.
    Doctor(cli::doctor::DoctorArgs),
    /// Turn another gateway's config into a Switchboard config.
    Import(cli::import::ImportArgs),
    /// List, add, remove or run scheduled jobs.
    Cron {
        #[command(subcommand)]
        action: switchboard::cron::cli::CronAction,
        /// Config file (for the state dir and storage.url).
        #[arg(long, global = true)]
        config: Option<PathBuf>,
    },
}

/// mimalloc rather than glibc's malloc: under load the daemon spent a fifth of its CPU in
/// glibc's allocator (arena locks, `malloc_consolidate`); see docs/performance.md.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    switchboard::logging::init(cli.log_format);
    let env: config::SharedEnv = Arc::new(config::process_env);
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        // After a quiet spell each worker gives its allocator's free pages back
        // (`memory::release_when_quiet`, started by `app`).
        .on_thread_park(switchboard::memory::on_park)
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    rt.block_on(async move {
        let env = env.as_ref();
        match cli.command {
            Command::Run { config } => run(config, Arc::new(config::process_env)).await,
            Command::Config(args) => cli::config_cmd::run(args, env).await,
            Command::Pairing(args) => cli::pairing::run(args, env).await,
            Command::Approvals(args) => cli::approvals::run(args, env).await,
            Command::Status(args) => cli::daemon::status(args, env).await,
            Command::Sessions(args) => cli::daemon::sessions(args, env).await,
            Command::Subagents(args) => cli::daemon::subagents(args, env).await,
            Command::Send(args) => cli::daemon::send(args, env).await,
            Command::Doctor(args) => cli::doctor::run(args, env).await,
            Command::Import(args) => cli::import::run(args, env).await,
            Command::Cron { action, config } => {
                switchboard::cron::cli::main(action, config, Arc::new(config::process_env)).await
            }
        }
    })
}

async fn run(config_path: Option<PathBuf>, env: config::SharedEnv) -> ExitCode {
    non_dumpable();
    let paths = Paths::resolve(config_path, env.as_ref());
    let cfg = match config::load_file(&paths.config, env.as_ref()).await {
        Ok(Some(cfg)) => cfg,
        Ok(None) => {
            tracing::info!(path = %paths.config.display(), "no config file; running on built-in defaults");
            match config::parse_config("{}", env.as_ref()) {
                Ok(cfg) => cfg,
                Err(errors) => {
                    cli::print_config_errors(&paths.config, &errors);
                    return ExitCode::from(EXIT_CONFIG);
                }
            }
        }
        Err(errors) => {
            cli::print_config_errors(&paths.config, &errors);
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    let clashes = config::workspace_issues(&cfg, &paths);
    if !clashes.is_empty() {
        cli::print_config_errors(&paths.config, &clashes);
        return ExitCode::from(EXIT_CONFIG);
    }
    let shutdown = CancellationToken::new();
    let signal_token = shutdown.clone();
    tokio::spawn(async move {
        wait_for_signal().await;
        signal_token.cancel();
    });
    let lease_lost = CancellationToken::new();
    let opts = app::Options {
        config_path: paths.config,
        state_dir: paths.state_dir,
        config: cfg,
        env,
        lease_lost: lease_lost.clone(),
    };
    let outcome = tokio::select! {
        outcome = app::run(opts, shutdown) => outcome,
        _ = lease_lost.cancelled() => {
            // Another process may be active already: stop acting now, without the drain
            // (runs resume from their transcripts there, the outbox is delivered there).
            // `process::exit`, not a return: the runtime's drop would wait for blocking work.
            eprintln!("switchboard: lost the gateway lease; exiting");
            std::process::exit(i32::from(switchboard::standby::EXIT_LEASE_LOST));
        }
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "switchboard failed to start");
            eprintln!("switchboard: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A daemon not running as root makes itself non-dumpable: a process of the same user —
/// an agent's command — can then read neither its environment (`/proc/<pid>/environ`: the
/// API keys and tokens) nor its memory or descriptors, nor attach a debugger to it. The
/// commands it starts are dumpable again (exec resets the flag). Root is left as it is:
/// root reads every process anyway (`doctor` warns about running as root).
fn non_dumpable() {
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{geteuid, set_dumpable_behavior, DumpableBehavior};
        if geteuid().is_root() {
            tracing::warn!("running as root: agents' commands run as root and can read the daemon's environment and files; run it as a user of its own (deploy/switchboard.service)");
            return;
        }
        match set_dumpable_behavior(DumpableBehavior::NotDumpable) {
            Ok(()) => tracing::debug!(
                "the daemon is not dumpable: its /proc files are closed to its own user"
            ),
            Err(e) => {
                tracing::warn!(error = %e, "cannot make the daemon non-dumpable: commands of its user can read its environment")
            }
        }
    }
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
