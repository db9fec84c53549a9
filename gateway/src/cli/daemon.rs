//! Commands that ask the running daemon: `status`, `sessions list|show`,
//! `send` (`subagents list|info|log|stop` are in `subagents.rs`). Each is one or two API calls (see `client`),
//! printed as aligned tables, or as the API's JSON with `--json`.

use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};
use serde_json::{json, Value};

use super::client::{segment, Client, ClientArgs, ClientError, REQUEST_TIMEOUT};
pub use super::subagents::{subagents, SubagentsArgs};
use super::table::{age, scrub, Table};

#[derive(Debug, Args)]
pub struct SessionsArgs {
    #[command(subcommand)]
    pub action: SessionsAction,
    #[command(flatten)]
    pub client: ClientArgs,
}

#[derive(Debug, Subcommand)]
pub enum SessionsAction {
    /// Sessions, most recently active first.
    List {
        /// Archived sessions instead of active ones.
        #[arg(long)]
        archived: bool,
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
    /// The last messages of a session (KEY as `sessions list` shows it).
    Show {
        key: String,
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
}

#[derive(Debug, Args)]
pub struct SendArgs {
    /// Session key, e.g. agent:main:main.
    pub session: String,
    pub text: String,
    /// Wait for the reply and print it.
    #[arg(long)]
    pub wait: bool,
    /// How long --wait waits, in seconds (the daemon allows up to 600).
    #[arg(long, default_value_t = 120)]
    pub timeout: u64,
    #[command(flatten)]
    pub client: ClientArgs,
}

/// Runs `f` with a client; its error becomes the exit code.
pub(super) async fn with_client<F, Fut>(
    args: &ClientArgs,
    env: &dyn Fn(&str) -> Option<String>,
    f: F,
) -> ExitCode
where
    F: FnOnce(Client) -> Fut,
    Fut: std::future::Future<Output = Result<(), ClientError>>,
{
    let client = match Client::new(args, env).await {
        Ok(c) => c,
        Err(e) => return e.report(),
    };
    match f(client).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => e.report(),
    }
}

pub(super) fn print_json(v: &Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
    );
}

pub(super) fn now_ms() -> i64 {
    crate::store::now_ms()
}

pub(super) fn ago(ms: Option<i64>) -> String {
    ms.map_or("-".into(), |t| {
        format!("{} ago", age((now_ms() - t) / 1000))
    })
}

pub(super) fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    }
}

pub async fn status(args: ClientArgs, env: &dyn Fn(&str) -> Option<String>) -> ExitCode {
    with_client(&args.clone(), env, |c| async move {
        let s = c.get_json("/api/status").await?;
        if args.json {
            print_json(&s);
            return Ok(());
        }
        println!(
            "switchboard {} at {} (pid {}), up {}",
            text(&s["version"]),
            c.base(),
            text(&s["pid"]),
            age(s["uptimeSeconds"].as_i64().unwrap_or(0))
        );
        println!("web chat: {}", c.page_link());
        println!(
            "active runs: {}   web chat connections: {}",
            text(&s["activeRuns"]),
            text(&s["webchatConnections"])
        );
        if let Some(owner) = s["leaseOwner"].as_str() {
            println!("processes: {}, this process {owner}", text(&s["processes"]));
        }
        for l in s["leases"].as_array().into_iter().flatten() {
            let now = crate::store::now_ms();
            let since = l["since"].as_i64().unwrap_or(0);
            if l["expiresAt"].as_i64().unwrap_or(0) < now {
                println!(
                    "lease {}: free (last held by {}, fence {})",
                    text(&l["name"]),
                    text(&l["owner"]),
                    text(&l["fence"])
                );
                continue;
            }
            println!(
                "lease {}: {} (fence {}) since {}{}",
                text(&l["name"]),
                text(&l["owner"]),
                text(&l["fence"]),
                age((now - since).max(0) / 1000),
                if l["mine"] == true {
                    ", this process"
                } else {
                    ""
                }
            );
        }
        let mut lanes = Table::new(&["LANE", "ACTIVE", "CAPACITY", "QUEUED"]);
        for l in s["lanes"].as_array().into_iter().flatten() {
            lanes.row(vec![
                text(&l["name"]),
                text(&l["active"]),
                text(&l["capacity"]),
                text(&l["queued"]),
            ]);
        }
        println!();
        print!("{}", lanes.render());
        let mut channels = Table::new(&["CHANNEL", "STATE", "RESTARTS"]);
        for ch in s["channels"].as_array().into_iter().flatten() {
            let state = if ch["running"] == true && ch["inbound"] == false {
                // Shared mode: another process polls it; this one sends.
                "sending only"
            } else if ch["running"] == true {
                "running"
            } else {
                "restarting"
            };
            channels.row(vec![text(&ch["id"]), state.into(), text(&ch["restarts"])]);
        }
        if !channels.is_empty() {
            println!();
            print!("{}", channels.render());
        }
        let outbox: Vec<String> = s["outbox"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        println!();
        println!(
            "outbox: {}",
            if outbox.is_empty() {
                "empty".into()
            } else {
                outbox.join(", ")
            }
        );
        Ok(())
    })
    .await
}

pub async fn sessions(args: SessionsArgs, env: &dyn Fn(&str) -> Option<String>) -> ExitCode {
    let json = args.client.json;
    with_client(&args.client, env, |c| async move {
        match args.action {
            SessionsAction::List { archived, limit } => {
                let v = c
                    .get_json(&format!("/api/sessions?archived={archived}&limit={limit}"))
                    .await?;
                if json {
                    print_json(&v);
                    return Ok(());
                }
                let rows = v["sessions"].as_array().cloned().unwrap_or_default();
                if rows.is_empty() {
                    println!(
                        "no {} sessions",
                        if archived { "archived" } else { "active" }
                    );
                    return Ok(());
                }
                let mut t =
                    Table::new(&["KEY", "AGENT", "STATUS", "CHANNEL", "UPDATED", "RUNNING"]);
                for s in rows {
                    t.row(vec![
                        text(&s["sessionKey"]),
                        text(&s["agentId"]),
                        text(&s["status"]),
                        text(&s["origin"]["channel"]),
                        ago(s["updatedAt"].as_i64()),
                        s["running"].as_str().map_or("-".into(), short),
                    ]);
                }
                print!("{}", t.render());
                Ok(())
            }
            SessionsAction::Show { key, limit } => {
                let path = format!("/api/sessions/{}/transcript", segment(&key));
                print_transcript(&c, &path, limit, json).await
            }
        }
    })
    .await
}

/// The first 8 characters of an id: enough to tell runs apart, and a valid prefix.
pub(super) fn short(id: &str) -> String {
    id.chars().take(8).collect()
}

pub(super) async fn print_transcript(
    c: &Client,
    path: &str,
    limit: usize,
    json: bool,
) -> Result<(), ClientError> {
    let body = c.get_text(path).await?;
    let messages: Vec<Value> = body
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let tail = &messages[messages.len().saturating_sub(limit)..];
    if json {
        print_json(&Value::Array(tail.to_vec()));
        return Ok(());
    }
    if tail.is_empty() {
        println!("no messages");
    }
    for m in tail {
        let when = ago(m["createdAt"].as_i64());
        let role = text(&m["role"]);
        let who = match m["toolName"].as_str() {
            Some(tool) => format!("{role} {tool}"),
            None => role,
        };
        println!(
            "[{when}] {who}: {}",
            scrub(m["content"].as_str().unwrap_or("")).trim_end()
        );
        for call in m["toolCalls"].as_array().into_iter().flatten() {
            println!(
                "    → {}({})",
                scrub(&text(&call["name"])),
                scrub(&text(&call["arguments"]))
            );
        }
    }
    Ok(())
}

pub async fn send(args: SendArgs, env: &dyn Fn(&str) -> Option<String>) -> ExitCode {
    let json = args.client.json;
    with_client(&args.client, env, |c| async move {
        let mut body = json!({"text": args.text, "wait": args.wait});
        if args.wait {
            body["timeoutSeconds"] = json!(args.timeout);
        }
        // The daemon answers by itself after `timeout`; give the request a little longer.
        let limit = REQUEST_TIMEOUT.max(Duration::from_secs(args.timeout.saturating_add(15)));
        let v = c
            .post_json(
                &format!("/api/sessions/{}/messages", segment(&args.session)),
                &body,
                limit,
            )
            .await?;
        if json {
            print_json(&v);
            return Ok(());
        }
        match v["status"].as_str() {
            Some("accepted") => println!("accepted (run {})", text(&v["runId"])),
            Some("pending") => println!("no reply yet (run {}); still running", text(&v["runId"])),
            Some("succeeded") => {
                println!("{}", scrub(v["reply"].as_str().unwrap_or("")).trim_end())
            }
            _ => {
                return Err(ClientError {
                    code: 1,
                    message: format!(
                        "the run ended {}: {}",
                        text(&v["status"]),
                        scrub(&text(&v["error"]))
                    ),
                })
            }
        }
        Ok(())
    })
    .await
}
