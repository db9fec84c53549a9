//! The `switchboard` binary: parse the CLI, load and validate config before binding
//! anything (exit 64 on an invalid config), run the daemon until SIGINT/SIGTERM.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use switchboard::app;
use switchboard::config::{self, Paths};
use tokio_util::sync::CancellationToken;

/// Exit code for an invalid config (EX_USAGE... sysexits' EX_DATAERR is 65; the
/// contract says 64).
const EXIT_CONFIG: u8 = 64;

#[derive(Parser)]
#[command(
    name = "switchboard",
    version,
    about = "A chat gateway daemon for LLM agents"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the daemon in the foreground.
    Run {
        /// Config file (default: $SWITCHBOARD_CONFIG, else ~/.switchboard/config.json5).
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Work with the config file.
    Config {
        #[command(subcommand)]
        action: ConfigAction,
    },
    /// Approve or list people who asked to talk to the bot (dmPolicy "pairing").
    Pairing {
        #[command(subcommand)]
        action: PairingAction,
        /// Config file (for the state dir and storage.url).
        #[arg(long, global = true)]
        config: Option<PathBuf>,
    },
    /// List or revoke the programs agents may run without asking (exec approvals).
    Approvals {
        #[command(subcommand)]
        action: ApprovalsAction,
        /// Config file (for the state dir and storage.url).
        #[arg(long, global = true)]
        config: Option<PathBuf>,
    },
    /// List, add, remove or run scheduled jobs.
    Cron {
        #[command(subcommand)]
        action: switchboard::cron::cli::CronAction,
        /// Config file (for the state dir and storage.url).
        #[arg(long, global = true)]
        config: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum ApprovalsAction {
    /// Show the programs allowed for good in chat (allow-always) and pending requests.
    List,
    /// Stop allowing PATH without asking (for every agent, or only --agent).
    Revoke {
        path: String,
        #[arg(long)]
        agent: Option<String>,
    },
}

#[derive(Subcommand)]
enum PairingAction {
    /// Let the sender who was given CODE talk to the bot.
    Approve { channel: String, code: String },
    /// Show pending and approved senders.
    List,
}

#[derive(Subcommand)]
enum ConfigAction {
    /// Check a config file and print every error with its key path and line.
    Validate {
        /// The file to check (default: the daemon's config path).
        path: Option<PathBuf>,
    },
}

/// mimalloc rather than glibc's malloc: under load the daemon spent a fifth of its CPU in
/// glibc's allocator (arena locks, `malloc_consolidate`); see the README's Benchmarks.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing();
    let env: config::SharedEnv = Arc::new(config::process_env);
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    rt.block_on(async move {
        match cli.command {
            Command::Config {
                action: ConfigAction::Validate { path },
            } => {
                let path = path.unwrap_or_else(|| Paths::resolve(None, env.as_ref()).config);
                validate(&path, env.as_ref()).await
            }
            Command::Run { config } => run(config, env).await,
            Command::Pairing { action, config } => pairing(action, config, env).await,
            Command::Approvals { action, config } => approvals(action, config, env).await,
            Command::Cron { action, config } => {
                switchboard::cron::cli::main(action, config, env).await
            }
        }
    })
}

/// Pairing works on the database directly (SQLite in WAL mode is safe to share with the
/// running daemon), so it needs no token and works while the daemon is down.
async fn pairing(
    action: PairingAction,
    config_path: Option<PathBuf>,
    env: config::SharedEnv,
) -> ExitCode {
    let paths = Paths::resolve(config_path, env.as_ref());
    let cfg = match config::load_file(&paths.config, env.as_ref()).await {
        Ok(Some(cfg)) => cfg,
        Ok(None) => match config::parse_config("{}", env.as_ref()) {
            Ok(cfg) => cfg,
            Err(errors) => {
                print_errors(&paths.config, &errors);
                return ExitCode::from(EXIT_CONFIG);
            }
        },
        Err(errors) => {
            print_errors(&paths.config, &errors);
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    if let Err(e) = tokio::fs::create_dir_all(&paths.state_dir).await {
        eprintln!("cannot create {}: {e}", paths.state_dir.display());
        return ExitCode::FAILURE;
    }
    let store = match switchboard::store::Store::open(&cfg.database_url(&paths.state_dir)).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("cannot open the database: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = match action {
        PairingAction::Approve { channel, code } => {
            match store.approve_pairing(&channel, &code).await {
                Ok(Some(p)) => {
                    println!(
                        "approved {} {} ({})",
                        p.channel,
                        p.sender_id,
                        p.sender_name.as_deref().unwrap_or("no name")
                    );
                    ExitCode::SUCCESS
                }
                Ok(None) => {
                    eprintln!("no pending pairing with code {code} on {channel}");
                    ExitCode::FAILURE
                }
                Err(e) => {
                    eprintln!("cannot approve: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        PairingAction::List => match store.list_pairings().await {
            Ok(rows) if rows.is_empty() => {
                println!("no pairings");
                ExitCode::SUCCESS
            }
            Ok(rows) => {
                for p in rows {
                    println!(
                        "{}\t{}\t{}\t{}\t{}",
                        p.channel,
                        p.status,
                        p.code,
                        p.sender_id,
                        p.sender_name.unwrap_or_default()
                    );
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("cannot list: {e}");
                ExitCode::FAILURE
            }
        },
    };
    store.close().await;
    code
}

/// `switchboard approvals`: like pairing, on the database directly.
async fn approvals(
    action: ApprovalsAction,
    config_path: Option<PathBuf>,
    env: config::SharedEnv,
) -> ExitCode {
    let store = match open_store(config_path, &env).await {
        Ok(s) => s,
        Err(code) => return code,
    };
    let code = match action {
        ApprovalsAction::List => match (
            store.exec_allowlist().await,
            store.pending_approvals().await,
        ) {
            (Ok(allowed), Ok(pending)) => {
                if allowed.is_empty() {
                    println!("no programs allowed for good");
                }
                for a in allowed {
                    println!(
                        "{}\t{}\tapproval {}",
                        a.agent_id,
                        a.path,
                        a.approval_id.unwrap_or_default()
                    );
                }
                for p in pending {
                    println!(
                        "pending\t{}\t{}\t{}:{}\t{}",
                        p.id, p.agent_id, p.origin.channel, p.origin.chat_id, p.command
                    );
                }
                ExitCode::SUCCESS
            }
            (Err(e), _) | (_, Err(e)) => {
                eprintln!("cannot list: {e}");
                ExitCode::FAILURE
            }
        },
        ApprovalsAction::Revoke { path, agent } => {
            match store.revoke_exec_allowed(&path, agent.as_deref()).await {
                Ok(0) => {
                    eprintln!("{path} is not allowed for good");
                    ExitCode::FAILURE
                }
                Ok(n) => {
                    println!(
                        "revoked {path} ({n} entr{})",
                        if n == 1 { "y" } else { "ies" }
                    );
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("cannot revoke: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    };
    store.close().await;
    code
}

/// The daemon's database, for the commands that work on it directly.
async fn open_store(
    config_path: Option<PathBuf>,
    env: &config::SharedEnv,
) -> Result<switchboard::store::Store, ExitCode> {
    let paths = Paths::resolve(config_path, env.as_ref());
    let cfg = match config::load_file(&paths.config, env.as_ref()).await {
        Ok(Some(cfg)) => cfg,
        Ok(None) => config::parse_config("{}", env.as_ref()).map_err(|errors| {
            print_errors(&paths.config, &errors);
            ExitCode::from(EXIT_CONFIG)
        })?,
        Err(errors) => {
            print_errors(&paths.config, &errors);
            return Err(ExitCode::from(EXIT_CONFIG));
        }
    };
    if let Err(e) = tokio::fs::create_dir_all(&paths.state_dir).await {
        eprintln!("cannot create {}: {e}", paths.state_dir.display());
        return Err(ExitCode::FAILURE);
    }
    switchboard::store::Store::open(&cfg.database_url(&paths.state_dir))
        .await
        .map_err(|e| {
            eprintln!("cannot open the database: {e}");
            ExitCode::FAILURE
        })
}

async fn validate(path: &std::path::Path, env: &dyn Fn(&str) -> Option<String>) -> ExitCode {
    match config::load_file(path, env).await {
        Ok(Some(_)) => {
            println!("{}: ok", path.display());
            ExitCode::SUCCESS
        }
        Ok(None) => {
            eprintln!("{}: no such file", path.display());
            ExitCode::from(EXIT_CONFIG)
        }
        Err(errors) => {
            print_errors(path, &errors);
            ExitCode::from(EXIT_CONFIG)
        }
    }
}

fn print_errors(path: &std::path::Path, errors: &[config::ConfigError]) {
    eprintln!(
        "{}: {} error{}",
        path.display(),
        errors.len(),
        if errors.len() == 1 { "" } else { "s" }
    );
    for e in errors {
        eprintln!("  {e}");
    }
}

async fn run(config_path: Option<PathBuf>, env: config::SharedEnv) -> ExitCode {
    let paths = Paths::resolve(config_path, env.as_ref());
    let cfg = match config::load_file(&paths.config, env.as_ref()).await {
        Ok(Some(cfg)) => cfg,
        Ok(None) => {
            tracing::info!(path = %paths.config.display(), "no config file; running on built-in defaults");
            match config::parse_config("{}", env.as_ref()) {
                Ok(cfg) => cfg,
                Err(errors) => {
                    print_errors(&paths.config, &errors);
                    return ExitCode::from(EXIT_CONFIG);
                }
            }
        }
        Err(errors) => {
            print_errors(&paths.config, &errors);
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    let shutdown = CancellationToken::new();
    let signal_token = shutdown.clone();
    tokio::spawn(async move {
        wait_for_signal().await;
        signal_token.cancel();
    });
    let opts = app::Options {
        config_path: paths.config,
        state_dir: paths.state_dir,
        config: cfg,
        env,
    };
    match app::run(opts, shutdown).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "switchboard failed to start");
            eprintln!("switchboard: {e}");
            ExitCode::FAILURE
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

fn init_tracing() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
}
