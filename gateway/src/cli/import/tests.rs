//! Tests of the OpenClaw import on the sample configs in `tests/fixtures/openclaw/`
//! (written from OpenClaw's documented keys): what each key becomes, that the result
//! loads, and that every key of the input has a row.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::source::{self, Outcome, Row};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/openclaw")
        .join(name)
        .join("openclaw.json")
}

/// Imports a fixture; the config it wrote (parsed, after validation) and the rows.
async fn import(name: &str) -> (Value, Vec<Row>) {
    let imported = super::import_openclaw(&fixture(name), Some("/home/op"))
        .await
        .unwrap();
    let placeholder = |n: &str| Some(format!("placeholder-{n}"));
    crate::config::parse_config(&imported.text, &placeholder)
        .unwrap_or_else(|e| panic!("{e:?}\n{}", imported.text));
    let config: Value = json5::from_str(&imported.text).unwrap();
    (config, imported.rows)
}

pub(super) fn outcome<'a>(rows: &'a [Row], key: &str) -> &'a Outcome {
    &rows
        .iter()
        .find(|r| r.key == key)
        .unwrap_or_else(|| panic!("no row for {key}: {rows:#?}"))
        .outcome
}

fn leaves(v: &Value, at: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, c) in m {
                leaves(c, &source::join(at, k), out);
            }
        }
        Value::Array(a) if !a.is_empty() && a.iter().any(|i| i.is_object()) => {
            for (i, c) in a.iter().enumerate() {
                leaves(c, &format!("{at}[{i}]"), out);
            }
        }
        _ => out.push(at.to_string()),
    }
}

/// Catches: a setting dropped without a row (the report must account for every key).
async fn every_key_has_a_row(name: &str, rows: &[Row]) {
    let src = source::read(&fixture(name)).await.unwrap();
    let mut all = Vec::new();
    leaves(&src.value, "", &mut all);
    for leaf in all {
        let covered = rows.iter().any(|r| {
            leaf == r.key
                || leaf
                    .strip_prefix(r.key.as_str())
                    .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
        });
        assert!(covered, "{name}: {leaf} has no row");
    }
}

/// The config onboarding writes: carried over whole where Switchboard has the setting,
/// and its bookkeeping listed as not carried. (Catches: the token or the DM policy lost,
/// `~` left unexpanded, wizard keys passed into the config.)
#[tokio::test]
async fn onboarding_config() {
    let (c, rows) = import("onboarding").await;
    assert_eq!(
        c["gateway"],
        json!({"auth": {"token": "9c2e4f0a6b1d8e3f7a5c0b9d2e4f6a8c"}, "bind": "127.0.0.1", "port": 18789})
    );
    assert_eq!(
        c["channels"]["telegram"],
        json!({"enabled": true, "botToken": "7213458812:AAE-onboarding-made-up-token", "dmPolicy": "pairing", "groupPolicy": "allowlist"})
    );
    assert_eq!(
        c["agents"]["defaults"]["model"],
        "anthropic/claude-opus-4-6"
    );
    assert_eq!(
        c["agents"]["defaults"]["workspace"],
        "/home/op/.openclaw/workspace"
    );
    assert_eq!(c["session"]["dmScope"], "per-channel-peer");
    assert!(
        c["models"].is_null(),
        "anthropic works through ANTHROPIC_API_KEY: no provider needed"
    );
    assert!(c["tools"]["allow"]
        .as_array()
        .unwrap()
        .contains(&json!("sessions_spawn")));
    assert!(
        matches!(
            outcome(&rows, "messages.ackReactionScope"),
            Outcome::NotCarried { .. }
        ),
        "a shared section's keys are named one by one"
    );
    assert!(matches!(
        outcome(&rows, "wizard"),
        Outcome::NotCarried { .. }
    ));
    assert!(matches!(
        outcome(&rows, "channels.telegram.streaming"),
        Outcome::NotCarried { .. }
    ));
    every_key_has_a_row("onboarding", &rows).await;
}

/// A JSON5 config with `$include`, `${VAR}`s, providers, agents, groups and guilds.
/// (Catches: includes not merged, references expanded or lost, prefixed or numeric ids
/// mangled, a disabled group served, a channel allowed off, a provider Switchboard cannot
/// speak kept.)
#[tokio::test]
async fn team_config_with_includes() {
    let (c, rows) = import("team").await;
    assert_eq!(c["gateway"]["bind"], "0.0.0.0");
    assert_eq!(
        c["gateway"]["auth"]["token"], "${OPENCLAW_GATEWAY_TOKEN}",
        "references stay references"
    );
    let tg = &c["channels"]["telegram"];
    assert_eq!(tg["allowFrom"], json!(["123456789", 555000111, "@alice"]));
    assert_eq!(tg["groupAllowFrom"], json!(["42"]));
    assert_eq!(
        tg["groups"],
        json!({"*": {"requireMention": true}, "-1001234567890": {"allowFrom": ["@admin"], "requireMention": false}})
    );
    assert_eq!(
        (
            tg["mode"].as_str(),
            tg["groupPolicy"].as_str(),
            tg["enabled"].as_bool()
        ),
        (Some("webhook"), Some("allowlist"), Some(true))
    );
    let dc = &c["channels"]["discord"];
    assert_eq!(
        dc["allowFrom"],
        json!([
            "987654321012345678",
            123456789012345678u64,
            "111111111111111111"
        ])
    );
    assert_eq!(
        dc["guilds"]["123456789012345678"],
        json!({"requireMention": false, "allowFrom": ["987654321012345678"], "channels": ["222222222222222222"]})
    );
    assert_eq!(dc["textChunkLimit"], 2000);
    let providers = c["models"]["providers"].as_object().unwrap();
    assert_eq!(providers.keys().collect::<Vec<_>>(), ["litellm", "minimax"]);
    assert_eq!(providers["minimax"]["api"], "anthropic");
    assert_eq!(
        providers["litellm"]["models"][0],
        json!({"id": "llama-3.1-8b", "cost": {"input": 0.0, "output": 0.0}, "contextWindow": 128000})
    );
    assert_eq!(c["agents"]["defaults"]["model"], "litellm/llama-3.1-8b");
    assert_eq!(c["agents"]["defaults"]["timeout"], "600s");
    assert_eq!(
        c["agents"]["list"][0],
        json!({"id": "home", "default": true, "name": "Samantha", "workspace": "/home/op/.openclaw/workspace-home", "subagents": {"allowAgents": ["*"]}})
    );
    assert_eq!(c["agents"]["list"][1]["model"], "minimax/MiniMax-M2.5");
    assert_eq!(
        c["tools"]["allow"],
        json!([
            "read",
            "write",
            "edit",
            "apply_patch",
            "sessions_list",
            "sessions_history",
            "sessions_send",
            "sessions_spawn",
            "session_status",
            "web_fetch"
        ])
    );
    assert_eq!(c["tools"]["subagents"]["tools"]["deny"], json!(["exec"]));
    assert_eq!(c["messages"]["queue"]["mode"], "steer");
    assert_eq!(c["session"]["dmScope"], "per-channel-peer");
    assert!(matches!(
        outcome(&rows, "channels.telegram.groups.-1009999999999"),
        Outcome::NotCarried { .. }
    ));
    assert!(matches!(
        outcome(&rows, "models.providers.gemini"),
        Outcome::NotCarried { .. }
    ));
    assert!(matches!(
        outcome(&rows, "bindings"),
        Outcome::NotCarried { .. }
    ));
    assert!(matches!(outcome(&rows, "env"), Outcome::NotCarried { .. }));
    assert!(
        rows.iter().any(|r| r.key == "agents $include"),
        "the include is reported"
    );
    every_key_has_a_row("team", &rows).await;
}

/// Older Discord keys and what cannot be carried safely. (Catches: a guild listed by
/// channel names carried with no channels — Switchboard would then serve all of them —,
/// a reference to a provider Switchboard does not know left in, failing validation.)
#[tokio::test]
async fn legacy_discord_and_builtin_providers() {
    let (c, rows) = import("discord-legacy").await;
    let dc = &c["channels"]["discord"];
    assert_eq!(dc["token"], "${DISCORD_BOT_TOKEN}");
    assert_eq!(dc["dmPolicy"], "allowlist");
    assert_eq!(dc["allowFrom"], json!(["@alice", "987654321012345678"]));
    assert_eq!(
        dc["guilds"],
        json!({"*": {"requireMention": true}}),
        "the named-channel guild is left out"
    );
    assert!(matches!(
        outcome(&rows, "channels.discord.guilds.123456789012345678"),
        Outcome::NotCarried { .. }
    ));
    assert!(matches!(
        outcome(&rows, "channels.discord.guilds.friends-of-openclaw"),
        Outcome::NotCarried { .. }
    ));
    assert_eq!(
        c["agents"]["defaults"]["model"],
        "anthropic/claude-sonnet-4-5"
    );
    assert_eq!(
        c["models"]["providers"]["openrouter"]["baseUrl"],
        "https://openrouter.ai/api/v1"
    );
    assert_eq!(
        c["models"]["providers"]["anthropic"]["apiKey"],
        "${ANTHROPIC_API_KEY}"
    );
    assert!(c["agents"]["list"][0].get("model").is_none());
    assert!(matches!(
        outcome(&rows, "agents.list[0].model"),
        Outcome::NotCarried { .. }
    ));
    assert!(matches!(
        outcome(&rows, "gateway.bind"),
        Outcome::NotCarried { .. }
    ));
    assert!(c["gateway"].get("bind").is_none(), "stays on loopback");
    assert_eq!(
        c["messages"]["queue"]["mode"], "steer",
        "OpenClaw's \"queue\" is its legacy steering"
    );
    assert!(matches!(
        outcome(&rows, "messages.queue.mode"),
        Outcome::Adapted { .. }
    ));
    every_key_has_a_row("discord-legacy", &rows).await;
}
