//! `switchboard approvals list|revoke`: the programs agents may run without asking
//! (allow-always answers to exec approvals) and the requests still waiting for an answer.
//! Like `pairing`, these work on the database directly; the daemon reads the allowlist
//! from the database at each exec, so a revoke applies to the next command.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::store::Store;

#[derive(Debug, Args)]
pub struct ApprovalsArgs {
    #[command(subcommand)]
    pub action: ApprovalsAction,
    /// Config file (for the state dir and storage.url).
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum ApprovalsAction {
    /// Show the programs allowed for good in chat (allow-always) and pending requests.
    List,
    /// Stop allowing PATH without asking (for every agent, or only --agent).
    Revoke {
        path: String,
        #[arg(long)]
        agent: Option<String>,
    },
}

pub async fn run(args: ApprovalsArgs, env: &dyn Fn(&str) -> Option<String>) -> ExitCode {
    let store = match super::local_store(args.config, env).await {
        Ok(s) => s,
        Err(code) => return code,
    };
    let code = act(&store, args.action).await;
    store.close().await;
    code
}

/// Tab-separated lines (one per program, then one per pending request), for people and
/// `cut` alike.
async fn act(store: &Store, action: ApprovalsAction) -> ExitCode {
    match action {
        ApprovalsAction::List => {
            match (
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
                            p.id,
                            p.agent_id,
                            p.origin.channel,
                            p.origin.chat_id,
                            super::table::scrub(&p.command)
                        );
                    }
                    ExitCode::SUCCESS
                }
                (Err(e), _) | (_, Err(e)) => {
                    eprintln!("cannot list: {e}");
                    ExitCode::FAILURE
                }
            }
        }
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
    }
}
