//! End-to-end tests of `parse_config`: text in, `Config` or every error (path, line,
//! column, message) out; and the shipped `config.example.json5`.

use std::collections::BTreeSet;

use serde_json::Value;

use super::*;

const EXAMPLE: &str = include_str!("../../../config.example.json5");

fn env(name: &str) -> Option<String> {
    match name {
        "OPENAI_API_KEY" => Some("sk-test".into()),
        "TOKEN" => Some("t0k3n".into()),
        _ => None,
    }
}

/// Errors as (path, line, column, message), for whole-value comparison.
fn errors(src: &str) -> Vec<(String, Option<usize>, Option<usize>, String)> {
    parse_config(src, &env)
        .expect_err("config should be invalid")
        .into_iter()
        .map(|e| (e.path, e.line, e.column, e.message))
        .collect()
}

fn e(
    path: &str,
    line: usize,
    col: usize,
    message: &str,
) -> (String, Option<usize>, Option<usize>, String) {
    (path.into(), Some(line), Some(col), message.into())
}

#[test]
fn example_file_parses_with_defaults_where_it_says_so() {
    let config = parse_config(EXAMPLE, &env).unwrap_or_else(|errs| {
        panic!(
            "config.example.json5 is invalid:\n{}",
            errs.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        )
    });
    let d = Config::default();
    assert_eq!(config.gateway, d.gateway);
    assert_eq!(config.storage, d.storage);
    assert_eq!(config.tools, d.tools);
    assert_eq!(config.messages, d.messages);
    assert_eq!(config.channels, d.channels);
    assert_eq!(
        config.agents.defaults,
        AgentDefaults {
            model: Some("openai/gpt-4o-mini".into()),
            ..AgentDefaults::default()
        }
    );
    let openai = &config.models.providers["openai"];
    assert_eq!(openai.api_key.as_deref(), Some("sk-test"));
    assert_eq!(openai.max_retries, 3);
    assert_eq!(config.agents.list.len(), 1);
}

/// Every key the schema has (as serialized from the parsed example, which includes the
/// provider, model and agent entries) is written out in the example.
#[test]
fn example_file_has_every_key() {
    fn keys(v: &Value, prefix: &str, out: &mut BTreeSet<String>) {
        match v {
            Value::Object(map) => {
                for (k, v) in map {
                    let path = format!("{prefix}.{k}");
                    keys(v, &path, out);
                    out.insert(path);
                }
            }
            Value::Array(items) => {
                for v in items {
                    keys(v, &format!("{prefix}[]"), out);
                }
            }
            _ => {}
        }
    }
    let config = parse_config(EXAMPLE, &env).expect("valid example");
    let mut schema_keys = BTreeSet::new();
    keys(
        &serde_json::to_value(&config).expect("serializes"),
        "",
        &mut schema_keys,
    );
    keys(
        &serde_json::to_value(Config::default()).expect("serializes"),
        "",
        &mut schema_keys,
    );
    let mut written = BTreeSet::new();
    keys(
        &json5::from_str::<Value>(EXAMPLE).expect("json5"),
        "",
        &mut written,
    );
    let missing: Vec<_> = schema_keys.difference(&written).collect();
    assert!(
        missing.is_empty(),
        "keys missing from config.example.json5: {missing:?}"
    );
}

#[test]
fn unknown_key_has_path_and_line() {
    let src = "{\n  agents: {\n    defaults: {\n      maxConcurent: 2,\n    },\n  },\n}\n";
    assert_eq!(
        errors(src),
        vec![e(
            "agents.defaults.maxConcurent",
            4,
            7,
            "unknown key \"maxConcurent\" (did you mean \"maxConcurrent\"?); expected one of: model, workspace, maxConcurrent, timeout, stepTimeoutSeconds, maxSteps, subagents, sandbox, budget"
        )]
    );
    let err = parse_config(src, &env).expect_err("invalid");
    assert_eq!(
        err[0].to_string(),
        "agents.defaults.maxConcurent (line 4, col 7): unknown key \"maxConcurent\" (did you mean \"maxConcurrent\"?); expected one of: model, workspace, maxConcurrent, timeout, stepTimeoutSeconds, maxSteps, subagents, sandbox, budget"
    );
}

#[test]
fn wrong_type_has_path_and_line() {
    let src = "{ gateway: {\n    port: \"eighty\",\n    shutdownGrace: 10 } }";
    assert_eq!(
        errors(src),
        vec![
            e(
                "gateway.port",
                2,
                5,
                "invalid type: string \"eighty\", expected an integer from 0 to 65535"
            ),
            e(
                "gateway.shutdownGrace",
                3,
                5,
                "invalid type: integer `10`, expected a duration like \"90s\" or \"5m\""
            ),
        ]
    );
}

#[test]
fn errors_in_every_section_are_all_reported() {
    let src = r#"{
  gateway: { bind: "0.0.0.0", maxBodyBytes: 10 },
  storage: { url: "mysql://db" },
  models: { providers: { local: { api: "openai-chat", baseUrl: "localhost:8080" } } },
  agents: {
    defaults: { model: "gpt-4o", maxConcurrent: 0, stepTimeoutSeconds: 0 },
    list: [
      { id: "main" },
      { id: "Main", model: "remote/x" },
      { id: "main", default: true, color: "red" },
    ],
  },
  tools: { deny: "shell" },
  messages: { queue: { mode: "later" } },
  channels: { webchat: { enabled: "yes" }, irc: {} },
}"#;
    assert_eq!(
        errors(src),
        vec![
            e("gateway.bind", 2, 14, "refusing to bind a non-loopback address without gateway.auth.token"),
            e("gateway.maxBodyBytes", 2, 31, "must be at least 1024, got 10"),
            e("storage.url", 3, 14, "must be a sqlite: URL (e.g. \"sqlite:///var/lib/switchboard/switchboard.db\") or a postgres:// or postgresql:// URL (e.g. \"postgres://switchboard:${PGPASSWORD}@db:5432/switchboard\"), got \"mysql://db\""),
            e("models.providers.local.baseUrl", 4, 55, "must start with http:// or https://, got \"localhost:8080\""),
            e("agents.defaults.model", 6, 17, "model \"gpt-4o\" must be written as \"provider/model\", e.g. \"openai/gpt-4o-mini\""),
            e("agents.defaults.maxConcurrent", 6, 34, "must be between 1 and 1024, got 0"),
            e("agents.defaults.stepTimeoutSeconds", 6, 52, "must be between 1 and 1800 seconds, got 0"),
            e("agents.list[1].id", 9, 9, "agent id \"Main\" must be lowercase letters, digits, '_' or '-', starting with a letter or digit"),
            e("agents.list[1].model", 9, 21, "unknown provider \"remote\" in model \"remote/x\"; known providers (models.providers): local"),
            e("agents.list[2].id", 10, 9, "duplicate agent id \"main\" (also agents.list[0])"),
            e("agents.list[2].color", 10, 36, "unknown key \"color\"; expected one of: id, default, name, description, aliases, model, workspace, systemPrompt, subagents, tools, sandbox"),
            e("tools.deny", 13, 12, "invalid type: string \"shell\", expected an array"),
            e("messages.queue.mode", 14, 24, "unknown value \"later\"; expected one of: collect, followup, interrupt, steer"),
            e("channels.webchat.enabled", 15, 26, "invalid type: string \"yes\", expected a boolean"),
            e("channels.irc", 15, 44, "unknown key \"irc\"; expected one of: webchat, telegram, discord, slack"),
        ]
    );
}

#[test]
fn env_substitution_and_missing_variables() {
    let src = r#"{
  gateway: { bind: "0.0.0.0", auth: { token: "${TOKEN}" } },
  models: { providers: { openai: {
    api: "openai-chat",
    apiKey: "${OPENAI_API_KEY}",
    baseUrl: "${OPENAI_BASE_URL}",
  } } },
  agents: { defaults: { workspace: "$${HOME}/ws" } },
}"#;
    assert_eq!(
        errors(src),
        vec![e(
            "models.providers.openai.baseUrl",
            6,
            5,
            "environment variable OPENAI_BASE_URL is not set (referenced as \"${OPENAI_BASE_URL}\")"
        )],
        "the unexpanded baseUrl is not also reported as a bad URL"
    );
    assert_eq!(
        errors("{ agents: { defaults: { timeout: '${RUN_TIMEOUT}' } } }"),
        vec![e(
            "agents.defaults.timeout",
            1,
            25,
            "environment variable RUN_TIMEOUT is not set (referenced as \"${RUN_TIMEOUT}\")"
        )],
        "not also reported as a bad duration"
    );
    let ok = src.replace("${OPENAI_BASE_URL}", "https://api.example.com/v1");
    let config = parse_config(&ok, &env).expect("valid");
    assert_eq!(config.gateway.auth.token.as_deref(), Some("t0k3n"));
    let openai = &config.models.providers["openai"];
    assert_eq!(openai.api_key.as_deref(), Some("sk-test"));
    assert_eq!(
        openai.base_url.as_deref(),
        Some("https://api.example.com/v1")
    );
    assert_eq!(config.agents.defaults.workspace, Some("${HOME}/ws".into()));
}

#[test]
fn durations_parse_from_strings() {
    let config = parse_config(
        "{ gateway: { shutdownGrace: '1h 30m', reload: { debounce: '75ms' } }, agents: { defaults: { timeout: '5m' } } }",
        &env,
    )
    .expect("valid");
    assert_eq!(
        config.gateway.shutdown_grace,
        std::time::Duration::from_secs(5400)
    );
    assert_eq!(
        config.gateway.reload.debounce,
        std::time::Duration::from_millis(75)
    );
    assert_eq!(
        config.agents.defaults.timeout,
        Some(std::time::Duration::from_secs(300))
    );
    let errs = errors("{ agents: { defaults: { timeout: 'soon' } } }");
    assert_eq!(errs.len(), 1);
    assert_eq!(
        (errs[0].0.as_str(), errs[0].1),
        ("agents.defaults.timeout", Some(1))
    );
    assert!(
        errs[0]
            .3
            .ends_with("expected a duration like \"90s\" or \"5m\""),
        "{}",
        errs[0].3
    );
}

#[test]
fn missing_required_key_points_at_its_object() {
    let src = "{\n  models: { providers: {\n    p: { baseUrl: 'http://x', models: [{ cost: { input: 1, output: 2 } }] },\n  } },\n}";
    assert_eq!(
        errors(src),
        vec![
            e("models.providers.p", 3, 5, "missing required key \"api\""),
            e(
                "models.providers.p.models[0]",
                3,
                40,
                "missing required key \"id\""
            ),
        ]
    );
}

#[test]
fn syntax_errors_and_wrong_root() {
    let errs = parse_config("{ a: 1 ", &env).expect_err("syntax");
    assert_eq!(errs.len(), 1);
    assert_eq!((errs[0].path.as_str(), errs[0].line), ("", Some(1)));
    assert!(
        errs[0].to_string().starts_with("<root> (line 1, col "),
        "{}",
        errs[0]
    );
    assert_eq!(
        errors("[]"),
        vec![e("", 1, 1, "invalid type: sequence, expected an object")]
    );
}

#[test]
fn production_env_lookup() {
    // Only reads the environment; PATH is set wherever cargo runs.
    assert!(process_env("PATH").is_some());
    assert_eq!(process_env("SWITCHBOARD_SURELY_UNSET_VARIABLE_4711"), None);
}

/// OpenClaw configs write ids as bare numbers; Discord's are 18-19 digits, beyond f64's
/// exact integers: they must arrive digit for digit.
#[test]
fn numeric_ids_in_allowlists_are_taken_exactly() {
    let config = parse_config(
        "{ channels: { discord: { allowFrom: [987654321012345678], guilds: { '111111111111111111': { channels: [222222222222222222], allowFrom: [1] } } }, telegram: { allowFrom: [123456789, '@ann'], groupAllowFrom: [5], groups: { '-1001234567890': {} } } } }",
        &env,
    )
    .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(config.channels.discord.allow_from, ["987654321012345678"]);
    let guild = &config.channels.discord.guilds["111111111111111111"];
    assert_eq!(guild.channels, ["222222222222222222"]);
    assert_eq!(guild.allow_from, Some(vec!["1".to_string()]));
    assert_eq!(config.channels.telegram.allow_from, ["123456789", "@ann"]);
    assert_eq!(
        config.channels.telegram.group_allow_from,
        Some(vec!["5".to_string()])
    );
    assert!(config
        .channels
        .telegram
        .groups
        .contains_key("-1001234567890"));
    let errs =
        errors("{ channels: { telegram: { allowFrom: [1.5, 'ann'], groups: { team: {} } } } }");
    let messages: Vec<&str> = errs.iter().map(|e| e.3.as_str()).collect();
    assert!(
        messages.iter().any(|m| m.contains("not a whole number")),
        "{messages:?}"
    );
    let paths: Vec<&str> = errs.iter().map(|e| e.0.as_str()).collect();
    assert!(paths.contains(&"channels.telegram.groups.team"), "{errs:?}");
    assert!(
        errs.iter().any(
            |e| e.3 == "must be a numeric Telegram user id, an @username or \"*\", got \"ann\""
        ),
        "{errs:?}"
    );
}

/// A secret written with the wrong type is named in the error but never quoted: config
/// errors go to logs. Catches: serde's "invalid type: integer `12345`" reaching stderr.
#[test]
fn secrets_are_never_quoted_in_errors() {
    let errs = errors(
        "{ gateway: { auth: { token: 987654321 } }, channels: { telegram: { botToken: ['s3cr3t-value'] } }, models: { providers: { p: { api: 'openai-chat', apiKey: 4242 } } } }",
    );
    assert_eq!(errs.len(), 3, "{errs:?}");
    for (path, _, _, message) in &errs {
        assert!(
            !message.contains("987654321")
                && !message.contains("s3cr3t")
                && !message.contains("4242"),
            "{path}: {message}"
        );
        assert!(message.contains("invalid type"), "{path}: {message}");
    }
}
