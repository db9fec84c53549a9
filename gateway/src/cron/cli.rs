//! `switchboard cron list|add|rm|run`: the job table from the shell, on the database
//! directly (SQLite in WAL mode is safe to share with the running daemon), so it works
//! while the daemon is down too. The daemon's scheduler looks at the table at least every
//! 15 s, so an added job or a `run` is picked up within that (or at the next start).

use std::path::PathBuf;
use std::process::ExitCode;

use crate::config::{self, CronJobConfig, CronSession, DeliverConfig, Paths, ScheduleConfig};
use crate::store::{JobSource, Store};

use super::jobs;

#[derive(Debug, clap::Subcommand)]
pub enum CronAction {
    /// Show every job: schedule, next time, runs, and where it comes from.
    List,
    /// Add a job (give one of --every, --cron or --at).
    Add(Box<AddArgs>),
    /// Remove a job added by the tool or the CLI.
    Rm { id: String },
    /// Run a job now: it is marked due, and the daemon starts it within 15 s.
    Run { id: String },
}

/// `switchboard cron add`.
#[derive(Debug, clap::Args)]
pub struct AddArgs {
    /// Letters, digits, `-` and `_`.
    pub id: String,
    /// What the agent is told each time.
    #[arg(long)]
    pub message: String,
    /// A fixed interval, e.g. `30m` (at least 1s).
    #[arg(long)]
    pub every: Option<String>,
    /// A cron expression, e.g. `"0 9 * * 1-5"`.
    #[arg(long)]
    pub cron: Option<String>,
    /// The IANA time zone of --cron (default UTC).
    #[arg(long)]
    pub tz: Option<String>,
    /// One run at this RFC 3339 time.
    #[arg(long)]
    pub at: Option<String>,
    /// Heading of its answers (default: the id).
    #[arg(long)]
    pub name: Option<String>,
    /// The agent it runs as (default: the default agent).
    #[arg(long)]
    pub agent: Option<String>,
    /// Run in the agent's main session instead of the job's own.
    #[arg(long)]
    pub main_session: bool,
    /// Deliver the answer to this channel (telegram, discord, webchat) …
    #[arg(long, requires = "chat")]
    pub channel: Option<String>,
    /// … and chat id …
    #[arg(long, requires = "channel")]
    pub chat: Option<String>,
    /// … and thread.
    #[arg(long, requires = "chat")]
    pub thread: Option<String>,
}

/// Run `action` against the database of the config at `config_path`.
pub async fn main(
    action: CronAction,
    config_path: Option<PathBuf>,
    env: config::SharedEnv,
) -> ExitCode {
    let paths = Paths::resolve(config_path, env.as_ref());
    let cfg = match config::load_file(&paths.config, env.as_ref()).await {
        Ok(Some(cfg)) => cfg,
        Ok(None) => match config::parse_config("{}", env.as_ref()) {
            Ok(cfg) => cfg,
            Err(_) => return ExitCode::FAILURE,
        },
        Err(errors) => {
            eprintln!("{}: {} error(s)", paths.config.display(), errors.len());
            for e in errors {
                eprintln!("  {e}");
            }
            return ExitCode::from(64);
        }
    };
    if let Err(e) = tokio::fs::create_dir_all(&paths.state_dir).await {
        eprintln!("cannot create {}: {e}", paths.state_dir.display());
        return ExitCode::FAILURE;
    }
    let store = match Store::connect(&cfg.database_url(&paths.state_dir)).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("cannot open the database: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = match act(&store, &cfg, action).await {
        Ok(out) => {
            println!("{out}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    };
    store.close().await;
    code
}

async fn act(store: &Store, cfg: &config::Config, action: CronAction) -> Result<String, String> {
    let err = |e: jobs::JobError| e.to_string();
    match action {
        CronAction::List => {
            let all = store.cron_jobs().await.map_err(|e| e.to_string())?;
            if all.is_empty() {
                return Ok("No scheduled jobs.".into());
            }
            Ok(all
                .iter()
                .map(jobs::describe)
                .collect::<Vec<_>>()
                .join("\n"))
        }
        CronAction::Add(add) => {
            let AddArgs {
                id,
                message,
                every,
                cron,
                tz,
                at,
                name,
                agent,
                main_session,
                channel,
                chat,
                thread,
            } = *add;
            let every = every
                .map(|e| humantime::parse_duration(&e).map_err(|x| format!("--every: {x}")))
                .transpose()?;
            let job = CronJobConfig {
                id,
                name,
                schedule: ScheduleConfig {
                    cron,
                    tz,
                    every,
                    at,
                },
                agent_id: agent,
                message,
                session: if main_session {
                    CronSession::Main
                } else {
                    CronSession::Isolated
                },
                deliver: channel.zip(chat).map(|(channel, chat_id)| DeliverConfig {
                    channel,
                    chat_id,
                    thread_id: thread,
                }),
                enabled: true,
            };
            let row = jobs::add(store, cfg, &job, JobSource::Cli)
                .await
                .map_err(err)?;
            Ok(format!("added {}", jobs::describe(&row)))
        }
        CronAction::Rm { id } => {
            let row = jobs::remove(store, &id).await.map_err(err)?;
            Ok(format!("removed {}", row.id))
        }
        CronAction::Run { id } => {
            let row = jobs::found(store, &id).await.map_err(err)?;
            if !row.enabled {
                return Err(format!(
                    "the job `{id}` is disabled: enable it first (/cron enable {id}), or use /cron run {id} in a chat"
                ));
            }
            store
                .set_cron_job_enabled(&id, true, Some(crate::store::now_ms()))
                .await
                .map_err(|e| e.to_string())?;
            Ok(format!(
                "{id} is due now: the running daemon starts it within {}s",
                super::scheduler::MAX_SLEEP.as_secs()
            ))
        }
    }
}
