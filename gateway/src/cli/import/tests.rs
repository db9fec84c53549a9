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

fn outcome<'a>(rows: &'a [Row], key: &str) -> &'a Outcome {
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

/// Catches: an `$include` that reads outside the config's folder, or loops forever.
#[tokio::test]
async fn includes_stay_inside_and_do_not_loop() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("openclaw.json");
    std::fs::write(&main, r#"{ agents: { $include: "../outside.json5" } }"#).unwrap();
    let err = source::read(&main).await.err().unwrap().to_string();
    assert!(
        err.contains("must stay inside the config's folder"),
        "{err}"
    );
    std::fs::write(&main, r#"{ a: { $include: "./b.json5" } }"#).unwrap();
    std::fs::write(
        dir.path().join("b.json5"),
        r#"{ x: 1, $include: "./openclaw.json" }"#,
    )
    .unwrap();
    let err = source::read(&main).await.err().unwrap().to_string();
    assert!(err.contains("circular"), "{err}");
    std::fs::write(dir.path().join("b.json5"), r#"{ x: 1, y: { z: 2 } }"#).unwrap();
    std::fs::write(&main, r#"{ a: { $include: ["./b.json5"], y: { w: 3 } } }"#).unwrap();
    let src = source::read(&main).await.unwrap();
    assert_eq!(
        src.value,
        json!({"a": {"x": 1, "y": {"z": 2, "w": 3}}}),
        "siblings merged over the file"
    );
}

/// Catches: a key with a line separator (U+2028/U+2029, `\r`: line ends to JSON5) ending
/// the header comment that lists it, so the rest of the line became config text.
#[tokio::test]
async fn odd_keys_stay_inside_the_header_comment() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("openclaw.json");
    // Escaped in the input (the JSON5 parser takes them raw only in comments).
    let input = r#"{ channels: { telegram: { groups: { "x\u2028gateway: {}\u2029y\rz": { enabled: false } } } } }"#;
    std::fs::write(&main, input).unwrap();
    let imported = super::import_openclaw(&main, None).await.unwrap();
    let placeholder = |n: &str| Some(format!("placeholder-{n}"));
    crate::config::parse_config(&imported.text, &placeholder)
        .unwrap_or_else(|e| panic!("{e:?}\n{}", imported.text));
    for line in imported
        .text
        .split(['\n', '\r', '\u{2028}', '\u{2029}'])
        .take_while(|l| !l.starts_with('{'))
    {
        assert!(
            line.starts_with("//"),
            "a header line outside a comment: {line:?}"
        );
    }
}

/// Multi-account channels: the default account's token is the bot's, the other accounts
/// are listed as not carried. (Catches: a Discord config in OpenClaw's `accounts` form
/// imported without its token.)
#[tokio::test]
async fn the_default_account_token_is_used() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("openclaw.json");
    let input = r#"{ channels: {
        discord: { accounts: { default: { token: "${DISCORD_MAIN}" }, alerts: { token: "x" } } },
        telegram: { accounts: { default: { botToken: "1:A" } } },
    } }"#;
    std::fs::write(&main, input).unwrap();
    let imported = super::import_openclaw(&main, None).await.unwrap();
    let placeholder = |n: &str| Some(format!("placeholder-{n}"));
    crate::config::parse_config(&imported.text, &placeholder)
        .unwrap_or_else(|e| panic!("{e:?}\n{}", imported.text));
    let c: Value = json5::from_str(&imported.text).unwrap();
    assert_eq!(c["channels"]["discord"]["token"], "${DISCORD_MAIN}");
    assert_eq!(c["channels"]["telegram"]["botToken"], "1:A");
    let rows = &imported.rows;
    assert!(matches!(
        outcome(rows, "channels.discord.accounts.default.token"),
        Outcome::Adapted { .. }
    ));
    assert!(matches!(
        outcome(rows, "channels.discord.accounts"),
        Outcome::NotCarried { .. }
    ));
}

/// OpenClaw's `tools.allow` adds to the profile's base list (its docs: "messaging-only by
/// default, allow Slack + Discord tools too"). (Catches: the profile's tools lost when
/// `tools.allow` is also set.)
#[tokio::test]
async fn tools_allow_adds_to_the_profile() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("openclaw.json");
    std::fs::write(&main, r#"{ tools: { profile: "messaging", allow: ["web_fetch", "message"], deny: ["group:runtime"] } }"#).unwrap();
    let imported = super::import_openclaw(&main, None).await.unwrap();
    let c: Value = json5::from_str(&imported.text).unwrap();
    assert_eq!(
        c["tools"]["allow"],
        json!([
            "message",
            "sessions_list",
            "sessions_history",
            "sessions_send",
            "session_status",
            "web_fetch"
        ])
    );
    assert_eq!(c["tools"]["deny"], json!(["exec", "process"]));
    assert!(matches!(
        outcome(&imported.rows, "tools.profile"),
        Outcome::Adapted { .. }
    ));
}

/// OpenClaw's access groups (`accessGroup:<name>` in an allowlist) are expanded into the
/// members listed for that channel and for every channel (`"*"`). (Catches: the reference
/// carried as a literal sender name — nobody matches it, and the group's members are
/// locked out — or a Discord one turned into `@accessGroup:…`.)
#[tokio::test]
async fn access_groups_are_expanded_into_the_allowlists() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("openclaw.json");
    let input = r#"{
        accessGroups: { operators: { type: "message.senders", members: {
            "*": ["111"], discord: ["discord:222"], telegram: ["333"], whatsapp: ["+1555"] } } },
        channels: {
            telegram: { botToken: "1:A", dmPolicy: "allowlist", allowFrom: ["accessGroup:operators", "444"], groupAllowFrom: ["accessGroup:nobody"] },
            discord: { token: "t", dmPolicy: "allowlist", allowFrom: ["accessGroup:operators"] },
        },
    }"#;
    std::fs::write(&main, input).unwrap();
    let imported = super::import_openclaw(&main, None).await.unwrap();
    let c: Value = json5::from_str(&imported.text).unwrap();
    assert_eq!(
        c["channels"]["telegram"]["allowFrom"],
        json!(["111", "333", "444"])
    );
    assert_eq!(c["channels"]["discord"]["allowFrom"], json!(["111", "222"]));
    assert_eq!(
        c["channels"]["telegram"]["groupAllowFrom"],
        json!([]),
        "an unknown group admits nobody"
    );
    let rows = &imported.rows;
    assert!(
        matches!(outcome(rows, "channels.telegram.groupAllowFrom"), Outcome::Adapted { how, .. } if how.contains("accessGroup:nobody"))
    );
    assert!(matches!(
        outcome(rows, "accessGroups"),
        Outcome::Adapted { .. }
    ));
}
