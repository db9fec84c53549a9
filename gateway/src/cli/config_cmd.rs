//! `switchboard config validate|get|set|unset|print|schema`: the config file from the
//! command line. `set`/`unset` edit the file in place (only the value's bytes change, see
//! `config::edit`) and refuse an edit that would make the config invalid; a running
//! daemon picks the change up as it would a hand edit.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::Value;

use super::{exit, print_config_errors};
use crate::config::edit::{self, Change, FileEditError, KeyPathArg, Outcome};
use crate::config::{self, Paths};

#[derive(Debug, Args)]
pub struct ConfigArgs {
    #[command(subcommand)]
    pub action: ConfigAction,
    /// Config file (default: $SWITCHBOARD_CONFIG, else ~/.switchboard/config.json5).
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum ConfigAction {
    /// Check a config file and print every error with its key path and line.
    Validate {
        /// The file to check (default: the daemon's config path).
        path: Option<PathBuf>,
    },
    /// Print the value at KEY (e.g. `agents.defaults.maxConcurrent`,
    /// `channels.telegram.allowFrom[0]`): as written in the file, else its default.
    Get {
        key: KeyPathArg,
        /// Print JSON (strings quoted).
        #[arg(long)]
        json: bool,
    },
    /// Set KEY to VALUE in the file, keeping its comments and layout. VALUE is read as
    /// JSON5 (`8`, `true`, `null`, `["a", 1]`), else taken as a string (`0.0.0.0`).
    Set {
        key: KeyPathArg,
        value: String,
        /// Take VALUE as a string even if it reads as JSON5 (`--string 8` sets "8").
        #[arg(long)]
        string: bool,
    },
    /// Remove KEY from the file (it takes its default again).
    Unset { key: KeyPathArg },
    /// Print the effective config (defaults filled in, ${VAR} resolved, secrets redacted).
    Print,
    /// Print the config file's JSON Schema (for editor completion).
    Schema,
}

pub async fn run(args: ConfigArgs, env: &(dyn Fn(&str) -> Option<String> + Sync)) -> ExitCode {
    let config_path = || Paths::resolve(args.config.clone(), env).config;
    match args.action {
        ConfigAction::Validate { path } => validate(&path.unwrap_or_else(config_path), env).await,
        ConfigAction::Get { key, json } => get(&config_path(), &key, json, env).await,
        ConfigAction::Set { key, value, string } => {
            let value = if string {
                Value::String(value)
            } else {
                edit::parse_value(&value)
            };
            change(&config_path(), &key, Change::Set(value), env).await
        }
        ConfigAction::Unset { key } => change(&config_path(), &key, Change::Unset, env).await,
        ConfigAction::Print => print(&config_path(), env).await,
        ConfigAction::Schema => {
            println!("{}", pretty(&config::json_schema()));
            ExitCode::SUCCESS
        }
    }
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

async fn validate(path: &std::path::Path, env: &dyn Fn(&str) -> Option<String>) -> ExitCode {
    match config::load_file(path, env).await {
        Ok(Some(cfg)) => {
            println!("{}: ok", path.display());
            // The agent files the daemon would read with this config, checked too.
            let state_dir = config::Paths::resolve(Some(path.to_path_buf()), env).state_dir;
            crate::agents::sources::report(&cfg, &state_dir)
        }
        Ok(None) => {
            eprintln!("{}: no such file", path.display());
            ExitCode::from(exit::USAGE)
        }
        Err(errors) => {
            print_config_errors(path, &errors);
            ExitCode::from(exit::USAGE)
        }
    }
}

/// The file's text, `""` when there is none.
async fn read(path: &std::path::Path) -> Result<String, ExitCode> {
    match config::load::read_bounded(path).await {
        Ok(src) => Ok(src),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => {
            eprintln!("cannot read {}: {e}", path.display());
            Err(ExitCode::from(exit::IOERR))
        }
    }
}

async fn get(
    path: &std::path::Path,
    key: &KeyPathArg,
    json: bool,
    env: &dyn Fn(&str) -> Option<String>,
) -> ExitCode {
    let src = match read(path).await {
        Ok(src) => src,
        Err(code) => return code,
    };
    let doc = match config::load::parse_json5(&src, &config::source_map::SourceMap::new(&src)) {
        Ok(doc) => doc,
        Err(e) => {
            print_config_errors(path, &[e]);
            return ExitCode::from(exit::USAGE);
        }
    };
    let (value, default) = match edit::get(&doc, key) {
        Some(v) => (v.clone(), false),
        None => {
            // Not in the file: its value in force is its default (nothing to resolve, so
            // nothing secret: the file does not mention it).
            let effective = config::parse_config(&src, env)
                .ok()
                .and_then(|c| serde_json::to_value(c).ok());
            match effective.as_ref().and_then(|c| edit::get(c, key)) {
                Some(v) => (v.clone(), true),
                None => {
                    eprintln!("{key} is not set in {}", path.display());
                    return ExitCode::FAILURE;
                }
            }
        }
    };
    match &value {
        Value::String(s) if !json => println!("{s}"),
        Value::Object(_) | Value::Array(_) => println!("{}", pretty(&value)),
        other => println!("{other}"),
    }
    if default {
        eprintln!("({key} is not in the file: this is its default)");
    }
    ExitCode::SUCCESS
}

async fn change(
    path: &std::path::Path,
    key: &KeyPathArg,
    change: Change,
    env: &dyn Fn(&str) -> Option<String>,
) -> ExitCode {
    let report = match edit::edit_file(path, key, &change, env).await {
        Ok(report) => report,
        Err(FileEditError::Invalid(errors)) => {
            eprintln!(
                "refused: the edit would make {} invalid; the file is unchanged",
                path.display()
            );
            for e in &errors {
                eprintln!("  {e}");
            }
            return ExitCode::from(exit::USAGE);
        }
        Err(e @ (FileEditError::Edit(_) | FileEditError::Unparsable { .. })) => {
            eprintln!("refused: {e}; the file is unchanged");
            return ExitCode::from(exit::USAGE);
        }
        Err(e @ (FileEditError::Read { .. } | FileEditError::Write { .. })) => {
            eprintln!("{e}");
            return ExitCode::from(exit::IOERR);
        }
    };
    let file = report.path.display();
    match (report.outcome, &change) {
        (Outcome::Written, Change::Set(_)) => println!("set {key} in {file}"),
        (Outcome::Written, Change::Unset) => println!("removed {key} from {file}"),
        (Outcome::Unchanged, _) => {
            println!("{key} already has that value in {file}; nothing written")
        }
        (Outcome::NotSet, _) => println!("{key} is not in {file}; nothing written"),
    }
    for e in &report.warnings {
        eprintln!("warning: {e}");
    }
    if !report.restart_required.is_empty() {
        eprintln!(
            "note: a running daemon applies {} only after a restart",
            report.restart_required.join(", ")
        );
    }
    ExitCode::SUCCESS
}

async fn print(path: &std::path::Path, env: &dyn Fn(&str) -> Option<String>) -> ExitCode {
    let cfg = match config::load_file(path, env).await {
        Ok(Some(cfg)) => cfg,
        Ok(None) => config::Config::default(),
        Err(errors) => {
            print_config_errors(path, &errors);
            return ExitCode::from(exit::USAGE);
        }
    };
    let mut value = serde_json::to_value(&cfg).unwrap_or(Value::Null);
    redact(&mut value);
    println!("{}", pretty(&value));
    ExitCode::SUCCESS
}

/// Hides every secret of a config as JSON (`config::redact`): tokens, keys, passwords
/// (in URLs too), and the values of `env` and `headers` maps.
pub fn redact(value: &mut Value) {
    config::redact::redact(value);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    /// Catches: `config print` showing a token, key or webhook secret.
    #[test]
    fn secrets_are_redacted() {
        let mut v = json!({
            "gateway": {"auth": {"token": "t"}, "port": 1},
            "models": {"providers": {"x": {"apiKey": "k", "baseUrl": "u"}}},
            "channels": {"telegram": {"botToken": "b", "webhookSecret": "s", "allowFrom": ["1"]}, "discord": {"token": null}},
        });
        super::redact(&mut v);
        assert_eq!(
            v,
            json!({
                "gateway": {"auth": {"token": "<redacted>"}, "port": 1},
                "models": {"providers": {"x": {"apiKey": "<redacted>", "baseUrl": "u"}}},
                "channels": {"telegram": {"botToken": "<redacted>", "webhookSecret": "<redacted>", "allowFrom": ["1"]}, "discord": {"token": null}},
            })
        );
    }
}
