//! `switchboard subagents list|info|log|stop`: sub-agent runs of the running daemon, by
//! run id or a unique prefix of it, as tables or the API's JSON.

use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::{json, Value};

use super::client::{segment, Client, ClientArgs, ClientError, REQUEST_TIMEOUT};
use super::daemon::{ago, now_ms, print_json, print_transcript, short, text, with_client};
use super::table::{age, Table};

#[derive(Debug, Args)]
pub struct SubagentsArgs {
    #[command(subcommand)]
    pub action: SubagentsAction,
    #[command(flatten)]
    pub client: ClientArgs,
}

#[derive(Debug, Subcommand)]
pub enum SubagentsAction {
    /// Sub-agent runs, newest first.
    List {
        /// Only the children of this session.
        #[arg(long)]
        requester: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
    /// One run in detail (ID: its run id, or a unique prefix of it).
    Info { id: String },
    /// The transcript of a run's child session.
    Log {
        id: String,
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Stop a run (its announce then says `Status: unknown`).
    Stop { id: String },
}

pub async fn subagents(args: SubagentsArgs, env: &dyn Fn(&str) -> Option<String>) -> ExitCode {
    let json = args.client.json;
    with_client(&args.client, env, |c| async move {
        match args.action {
            SubagentsAction::List { requester, limit } => {
                let mut path = format!("/api/subagents?limit={limit}");
                if let Some(r) = requester {
                    path.push_str(&format!("&requester={}", segment(&r)));
                }
                let v = c.get_json(&path).await?;
                if json {
                    print_json(&v);
                    return Ok(());
                }
                let rows = v["subagents"].as_array().cloned().unwrap_or_default();
                if rows.is_empty() {
                    println!("no sub-agent runs");
                    return Ok(());
                }
                let mut t = Table::new(&[
                    "ID",
                    "STATUS",
                    "LABEL",
                    "AGENT",
                    "MODEL",
                    "REQUESTER",
                    "RUNTIME",
                    "TOKENS",
                    "COST",
                ]);
                for r in rows {
                    t.row(summary(&r));
                }
                print!("{}", t.render());
                Ok(())
            }
            SubagentsAction::Info { id } => {
                let row = find(&c, &id).await?;
                if json {
                    print_json(&row);
                    return Ok(());
                }
                let mut t = Table::new(&["FIELD", "VALUE"]);
                for key in [
                    "runId",
                    "status",
                    "label",
                    "agentId",
                    "model",
                    "thinking",
                    "childSessionKey",
                    "requesterSessionKey",
                    "task",
                    "outcome",
                    "error",
                    "stopNote",
                    "announceState",
                    "inputTokens",
                    "outputTokens",
                    "costUsd",
                    "runTimeoutSeconds",
                ] {
                    t.row(vec![key.into(), text(&row[key])]);
                }
                let s = summary(&row);
                t.row(vec!["runtime".into(), s[6].clone()]);
                t.row(vec!["created".into(), ago(row["createdAt"].as_i64())]);
                t.row(vec!["ended".into(), ago(row["endedAt"].as_i64())]);
                print!("{}", t.render());
                Ok(())
            }
            SubagentsAction::Log { id, limit } => {
                let row = find(&c, &id).await?;
                let path = format!(
                    "/api/sessions/{}/transcript?sessionId={}",
                    segment(row["childSessionKey"].as_str().unwrap_or("")),
                    segment(row["sessionId"].as_str().unwrap_or(""))
                );
                print_transcript(&c, &path, limit, json).await
            }
            SubagentsAction::Stop { id } => {
                let row = find(&c, &id).await?;
                let run_id = row["runId"].as_str().unwrap_or("").to_string();
                let v = c
                    .post_json(
                        &format!("/api/subagents/{}/stop", segment(&run_id)),
                        &json!({}),
                        REQUEST_TIMEOUT,
                    )
                    .await?;
                if json {
                    print_json(&v);
                } else if v["stopped"] == true {
                    println!("stopped {run_id}");
                } else {
                    println!("{run_id} was not running ({})", text(&row["status"]));
                }
                Ok(())
            }
        }
    })
    .await
}

/// A run's row of the `subagents list` table.
fn summary(r: &Value) -> Vec<String> {
    let started = r["startedAt"].as_i64();
    let runtime = match (started, r["endedAt"].as_i64()) {
        (Some(s), Some(e)) => age((e - s) / 1000),
        (Some(s), None) => age((now_ms() - s) / 1000),
        _ => "-".into(),
    };
    let tokens = r["inputTokens"].as_i64().unwrap_or(0) + r["outputTokens"].as_i64().unwrap_or(0);
    vec![
        short(r["runId"].as_str().unwrap_or("")),
        text(&r["status"]),
        text(&r["label"]),
        text(&r["agentId"]),
        text(&r["model"]),
        text(&r["requesterSessionKey"]),
        runtime,
        tokens.to_string(),
        r["costUsd"]
            .as_f64()
            .map_or("-".into(), |c| format!("${c:.4}")),
    ]
}

/// Most runs a prefix is matched against.
const PREFIX_SEARCH: u32 = 10_000;

/// A run by its id, or by a unique prefix of it.
async fn find(c: &Client, id: &str) -> Result<Value, ClientError> {
    if let Ok(row) = c.get_json(&format!("/api/subagents/{}", segment(id))).await {
        return Ok(row);
    }
    let all = c
        .get_json(&format!("/api/subagents?limit={PREFIX_SEARCH}"))
        .await?;
    let matches: Vec<Value> = all["subagents"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["runId"].as_str().is_some_and(|r| r.starts_with(id)))
        .cloned()
        .collect();
    match matches.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(ClientError {
            code: 1,
            message: format!("no sub-agent run {id}"),
        }),
        many => Err(ClientError {
            code: 1,
            message: format!("{id} matches {} runs; give more of the id", many.len()),
        }),
    }
}
