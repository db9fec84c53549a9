//! `switchboard pairing list|approve|reject|revoke`: who may talk to the bot under
//! dmPolicy "pairing".
//!
//! These work on the database directly, whether or not the daemon runs: SQLite in WAL
//! mode is safe to share, the daemon reads a sender's pairing from the database on every
//! message (nothing is cached), so a change applies at the sender's next message; and no
//! API token is needed — access to the state directory is the authority, as it is for the
//! daemon itself.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use super::table::Table;
use crate::server::views::PairingView;
use crate::store::{PairingRow, Store};

#[derive(Debug, Args)]
pub struct PairingArgs {
    #[command(subcommand)]
    pub action: PairingAction,
    /// Config file (for the state dir and storage.url).
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum PairingAction {
    /// Show pending, approved and recently rejected senders.
    List,
    /// Let the sender who was given CODE talk to the bot.
    Approve { channel: String, code: String },
    /// Refuse the request with CODE: the sender is ignored and gets no new code for an hour.
    Reject { channel: String, code: String },
    /// Take back an approval: SENDER (an id, as `pairing list` shows it) is a stranger again.
    Revoke { channel: String, sender: String },
}

pub async fn run(args: PairingArgs, env: &dyn Fn(&str) -> Option<String>) -> ExitCode {
    let store = match super::local_store(args.config, env).await {
        Ok(s) => s,
        Err(code) => return code,
    };
    let code = act(&store, args.action, args.json).await;
    store.close().await;
    code
}

async fn act(store: &Store, action: PairingAction, json: bool) -> ExitCode {
    let (verb, result) = match &action {
        PairingAction::List => {
            return match store.list_pairings().await {
                Ok(rows) => {
                    list(&rows, json);
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("cannot list: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        PairingAction::Approve { channel, code } => {
            ("approved", store.approve_pairing(channel, code).await)
        }
        PairingAction::Reject { channel, code } => {
            ("rejected", store.reject_pairing(channel, code).await)
        }
        PairingAction::Revoke { channel, sender } => {
            ("revoked", store.revoke_pairing(channel, sender).await)
        }
    };
    match result {
        Ok(Some(p)) => {
            if json {
                println!(
                    "{}",
                    serde_json::to_string(&PairingView::from(&p)).unwrap_or_default()
                );
            } else {
                println!(
                    "{verb} {} {} ({})",
                    p.channel,
                    super::table::scrub(&p.sender_id),
                    super::table::scrub(p.sender_name.as_deref().unwrap_or("no name"))
                );
            }
            ExitCode::SUCCESS
        }
        Ok(None) => {
            match action {
                PairingAction::Revoke { channel, sender } => {
                    eprintln!("no approved sender {sender} on {channel}")
                }
                PairingAction::Approve { channel, code }
                | PairingAction::Reject { channel, code } => {
                    eprintln!("no pending pairing with code {code} on {channel}")
                }
                PairingAction::List => {}
            }
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("cannot update the pairing: {e}");
            ExitCode::FAILURE
        }
    }
}

fn list(rows: &[PairingRow], json: bool) {
    if json {
        let rows: Vec<PairingView> = rows.iter().map(PairingView::from).collect();
        println!("{}", serde_json::json!({ "pairings": rows }));
        return;
    }
    if rows.is_empty() {
        println!("no pairings");
        return;
    }
    let now = crate::store::now_ms();
    let mut t = Table::new(&["CHANNEL", "STATUS", "CODE", "SENDER", "NAME", "AGE"]);
    for p in rows {
        t.row(vec![
            p.channel.clone(),
            p.status.clone(),
            if p.status == "pending" {
                p.code.clone()
            } else {
                "-".into()
            },
            p.sender_id.clone(),
            p.sender_name.clone().unwrap_or_default(),
            super::table::age((now - p.approved_at.unwrap_or(p.created_at)) / 1000),
        ]);
    }
    print!("{}", t.render());
}
