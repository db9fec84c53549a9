//! `switchboard doctor`: checks a setup and prints a table of what is fine and what is
//! not — the config (every error), the state directory and the database (SQLite:
//! permissions, integrity; PostgreSQL: reachable, schema, lease holders), each enabled channel's token against its platform, each model provider,
//! and security warnings. Exit 0 only when nothing is wrong (no warning, no failure).
//!
//! What it changes: nothing, unless `--fix`: then it tightens permissions that are too
//! open (state dir 0700; database and its WAL files 0600; a config file holding secrets
//! 0600), on files the current user may change. Everything else is only reported.

mod local;
mod remote;
mod security;
mod slack;
mod user;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde::Serialize;

use super::table::Table;
use crate::config::Paths;

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Config file (default: $SWITCHBOARD_CONFIG, else ~/.switchboard/config.json5).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Tighten permissions that are too open (state dir, database, a config with secrets).
    #[arg(long)]
    pub fix: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    /// Was wrong, and `--fix` fixed it.
    Fixed,
    /// Not checked (disabled, or nothing to check against).
    Skip,
    Warn,
    Fail,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Fixed => "fixed",
            Status::Skip => "skip",
            Status::Warn => "WARN",
            Status::Fail => "FAIL",
        }
    }

    fn is_problem(self) -> bool {
        matches!(self, Status::Warn | Status::Fail)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub check: String,
    pub status: Status,
    pub detail: String,
}

/// The checks made so far.
#[derive(Debug, Default)]
pub struct Report {
    pub checks: Vec<Check>,
}

impl Report {
    pub fn add(&mut self, check: impl Into<String>, status: Status, detail: impl Into<String>) {
        self.checks.push(Check {
            check: check.into(),
            status,
            detail: detail.into(),
        });
    }

    fn problems(&self) -> usize {
        self.checks.iter().filter(|c| c.status.is_problem()).count()
    }
}

pub async fn run(args: DoctorArgs, env: &dyn Fn(&str) -> Option<String>) -> ExitCode {
    let paths = Paths::resolve(args.config, env);
    let mut report = Report::default();
    let cfg = local::config(&paths.config, env, &mut report).await;
    local::state_dir(&paths.state_dir, args.fix, &mut report);
    user::daemon_user(&paths.state_dir, &mut report);
    local::config_file(&paths.config, args.fix, &mut report).await;
    let db_cfg = cfg.clone().unwrap_or_default();
    let approved = local::database(
        &db_cfg.database_url(&paths.state_dir),
        args.fix,
        &mut report,
    )
    .await;
    match &cfg {
        Some(cfg) => {
            remote::channels(cfg, env, &mut report).await;
            slack::check(cfg, env, &mut report).await;
            remote::models(cfg, env, &mut report).await;
            security::warnings(cfg, env, &paths.state_dir, &approved, &mut report);
            match crate::agent::tools::exec::sandbox::state(cfg).await {
                None => report.add(
                    "sandbox",
                    Status::Ok,
                    "off (agents.defaults.sandbox.mode \"off\")",
                ),
                Some(Ok(text)) => report.add("sandbox", Status::Ok, text),
                Some(Err(text)) => report.add("sandbox", Status::Warn, text),
            }
            remote::daemon(cfg, &mut report).await;
        }
        None => report.add(
            "channels, models, security",
            Status::Skip,
            "not checked: the config is invalid",
        ),
    }
    print(&report, args.json);
    if report.problems() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn print(report: &Report, json: bool) {
    let problems = report.problems();
    if json {
        let v = serde_json::json!({"ok": problems == 0, "checks": report.checks});
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        return;
    }
    let mut t = Table::new(&["CHECK", "STATUS", "DETAIL"]);
    for c in &report.checks {
        t.row(vec![
            c.check.clone(),
            c.status.as_str().into(),
            c.detail.clone(),
        ]);
    }
    print!("{}", t.render());
    println!();
    match problems {
        0 => println!("no problems found"),
        1 => println!("1 problem found"),
        n => println!("{n} problems found"),
    }
}
