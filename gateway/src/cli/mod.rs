//! The command line beyond `run`: editing the config (`config get|set|unset|print|schema`),
//! talking to the running daemon over its HTTP API (`status`, `sessions`, `subagents`,
//! `send`), pairing, `import openclaw` and `doctor`. Each command is a module; `main.rs`
//! only dispatches to them. Commands print aligned tables for people and JSON with
//! `--json`, and exit with sysexits codes (see [`exit`]).

pub mod approvals;
pub mod client;
pub mod config_cmd;
pub mod daemon;
pub mod doctor;
pub mod import;
pub mod pairing;
pub mod subagents;
pub mod table;

/// Exit codes (sysexits.h), shared by every command.
pub mod exit {
    /// A usage error, and an invalid config (the contract says 64 for both).
    pub const USAGE: u8 = 64;
    /// The input (a config to import) is unreadable as data.
    pub const DATAERR: u8 = 65;
    /// The input (a config to import, or a file it includes) cannot be read.
    pub const NOINPUT: u8 = 66;
    /// The daemon is not running (nothing answers at its address).
    pub const UNAVAILABLE: u8 = 69;
    /// The output file exists (an import without `--force`) or cannot be created.
    pub const CANTCREAT: u8 = 73;
    /// Reading or writing a file failed.
    pub const IOERR: u8 = 74;
    /// `switchboard run` lost the `gateway` lease on PostgreSQL (another process took
    /// over, or the database stopped answering): run it again and it stands by.
    pub const TEMPFAIL: u8 = crate::standby::EXIT_LEASE_LOST;
    /// The daemon refused the token.
    pub const NOPERM: u8 = 77;
}

/// Environment lookup shared by the commands (the process environment in `main`).
pub type Env = dyn Fn(&str) -> Option<String> + Send + Sync;

/// Prints every config error under a header naming the file.
pub fn print_config_errors(path: &std::path::Path, errors: &[crate::config::ConfigError]) {
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

/// The daemon's database, for the commands that work on it directly (`pairing`,
/// `approvals`): SQLite in WAL mode is safe to share with the running daemon, so these
/// need no token and work while the daemon is down. A missing config file means the
/// defaults; an invalid one is reported and refused (exit 64).
pub async fn local_store(
    config_path: Option<std::path::PathBuf>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<crate::store::Store, std::process::ExitCode> {
    use std::process::ExitCode;
    let paths = crate::config::Paths::resolve(config_path, env);
    let cfg = match crate::config::load_file(&paths.config, env).await {
        Ok(Some(cfg)) => cfg,
        Ok(None) => crate::config::Config::default(),
        Err(errors) => {
            print_config_errors(&paths.config, &errors);
            return Err(ExitCode::from(exit::USAGE));
        }
    };
    if let Err(e) = tokio::fs::create_dir_all(&paths.state_dir).await {
        eprintln!("cannot create {}: {e}", paths.state_dir.display());
        return Err(ExitCode::from(exit::IOERR));
    }
    crate::store::Store::connect(&cfg.database_url(&paths.state_dir))
        .await
        .map_err(|e| {
            eprintln!("cannot open the database: {e}");
            ExitCode::FAILURE
        })
}
