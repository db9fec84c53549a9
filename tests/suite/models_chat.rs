//! Models from the chat (docs/models.md): `/model` and `/think` on Telegram and the web
//! chat, kept across a restart and seen in the model request; fallbacks during a
//! provider outage, told once; provider `headers` on the wire and hidden by
//! `config print`.

use serde_json::{json, Value};
use switchboard_testkit::fake_model::{DefaultReply, FakeModel, RecordedRequest, Step};
use switchboard_testkit::fake_telegram::{Chat, FakeTelegram};
use switchboard_testkit::harness::GatewayBuilder;

use crate::common::{chat, cli, config_for, output, BIN, WAIT};
use crate::telegram::{ann, TOKEN};

/// The request whose last user message is `text`.
fn request_for(fake: &FakeModel, text: &str) -> RecordedRequest {
    fake.requests()
        .into_iter()
        .rfind(|r| {
            r.body["messages"]
                .as_array()
                .and_then(|m| m.iter().rfind(|m| m["role"] == "user"))
                .is_some_and(|m| m["content"] == text)
        })
        .unwrap_or_else(|| panic!("no request for {text:?}"))
}

fn telegram(tg: &FakeTelegram) -> Value {
    json!({"telegram": {"enabled": true, "botToken": TOKEN, "apiUrl": tg.api_url(),
        "allowFrom": ["42"], "pollTimeoutSeconds": 1}})
}

/// Three models of one provider; `other` with its own `maxTokens`.
fn models(fake: &FakeModel) -> Value {
    json!({"providers": {"fake": {
    "api": "openai-chat", "baseUrl": fake.base_url(), "apiKey": "test-key", "maxRetries": 0,
    "models": [
        {"id": "scripted"},
        {"id": "other", "maxTokens": 777},
        {"id": "o3-mini"},
    ]}}})
}

/// Catches: `/model` not listing the configured models or not marking the current one,
/// a switch that does not reach the model request, an unknown model accepted, a choice
/// lost at a restart, `/status` not showing it, `/model default` not going back, or a
/// web chat session sharing the Telegram chat's choice.
#[tokio::test]
async fn model_switch_lists_persists_and_resets_on_telegram_and_the_web_chat() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let config = config_for(
        &fake,
        json!({"models": models(&fake), "channels": telegram(&tg)}),
    );
    let mut gw = GatewayBuilder::new(BIN)
        .config(config)
        .start()
        .await
        .unwrap();
    let dm = Chat::private(42);
    let mut sent = 0;
    let mut say = |text: &str| {
        tg.user_message(dm.clone(), ann(), text);
        sent += 1;
        sent
    };

    let n = say("/model");
    let list = "Models (/model provider/model to switch, /model default to reset):\n\
                ▶ fake/scripted (agent default)\n• fake/other\n• fake/o3-mini";
    assert_eq!(tg.wait_for_sent(n, WAIT).await.unwrap()[n - 1].text, list);

    let n = say("/model nope/x");
    assert_eq!(
        tg.wait_for_sent(n, WAIT).await.unwrap()[n - 1].text,
        format!("Unknown model nope/x.\n{list}")
    );

    let n = say("/model fake/other");
    assert_eq!(
        tg.wait_for_sent(n, WAIT).await.unwrap()[n - 1].text,
        "This session now uses fake/other."
    );
    let n = say("first after the switch");
    assert_eq!(
        tg.wait_for_sent(n, WAIT).await.unwrap()[n - 1].text,
        "echo: first after the switch"
    );
    let req = request_for(&fake, "first after the switch");
    assert_eq!(
        (req.body["model"].clone(), req.body["max_tokens"].clone()),
        (json!("other"), json!(777)),
        "the switched model, with its own maxTokens"
    );

    // The choice is on the session row: a restart keeps it. (A graceful stop: after a
    // kill -9 the last reply may be delivered again, at least once, which would shift the
    // count of sent messages this test reads.)
    gw.terminate().await.unwrap();
    gw.restart().await.unwrap();
    let n = say("after the restart");
    assert_eq!(
        tg.wait_for_sent(n, WAIT).await.unwrap()[n - 1].text,
        "echo: after the restart"
    );
    assert_eq!(
        request_for(&fake, "after the restart").body["model"],
        "other"
    );
    let n = say("/status");
    let status = tg.wait_for_sent(n, WAIT).await.unwrap()[n - 1].text.clone();
    assert!(
        status.contains("\nModel: fake/other (chosen with /model; the agent's: fake/scripted)\n"),
        "{status}"
    );

    // The web chat is a session of its own: the agent's model.
    let mut ws = chat(&gw, "web").await;
    ws.send_text("from the web").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "echo: from the web");
    assert_eq!(request_for(&fake, "from the web").body["model"], "scripted");
    ws.send_text("/model fake/o3-mini").await.unwrap();
    assert_eq!(
        ws.next_message(WAIT).await.unwrap(),
        "This session now uses fake/o3-mini."
    );
    ws.send_text("web again").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "echo: web again");
    assert_eq!(request_for(&fake, "web again").body["model"], "o3-mini");

    let n = say("/model default");
    assert_eq!(
        tg.wait_for_sent(n, WAIT).await.unwrap()[n - 1].text,
        "This session uses the agent's model again: fake/scripted."
    );
    let n = say("back to the default");
    tg.wait_for_sent(n, WAIT).await.unwrap();
    let req = request_for(&fake, "back to the default");
    assert_eq!(
        (req.body["model"].clone(), req.body["max_tokens"].clone()),
        (json!("scripted"), json!(4096))
    );
    fake.assert_no_violations();
}

/// Catches: `/think` not reaching the request (OpenAI-compatible `reasoning_effort`), a
/// level lost at a restart, `/think default` not going back, or a reasoning model sent
/// `max_tokens` (OpenAI refuses it) instead of `max_completion_tokens`.
#[tokio::test]
async fn think_level_persists_and_changes_the_request() {
    let fake = FakeModel::start().await.unwrap();
    let config = config_for(&fake, json!({"models": models(&fake)}));
    let mut gw = GatewayBuilder::new(BIN)
        .config(config)
        .start()
        .await
        .unwrap();
    let mut ws = chat(&gw, "main").await;
    ws.send_text("/think high").await.unwrap();
    assert_eq!(
        ws.next_message(WAIT).await.unwrap(),
        "Thinking for this session: high."
    );
    ws.send_text("/model fake/o3-mini").await.unwrap();
    ws.next_message(WAIT).await.unwrap();
    drop(ws);

    // A graceful stop: its outbox is flushed, so the restarted daemon has no answer of
    // before to deliver again (a kill -9 between a frame and its row's "sent" may resend
    // it, the window docs/reliability.md names); the choices were committed before the
    // answers either way.
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    gw.restart().await.unwrap();
    let mut ws = chat(&gw, "main").await;
    ws.send_text("think hard").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "echo: think hard");
    let body = request_for(&fake, "think hard").body;
    assert_eq!(
        (
            body["model"].clone(),
            body["reasoning_effort"].clone(),
            body["max_completion_tokens"].clone(),
            body.get("max_tokens").cloned(),
        ),
        (json!("o3-mini"), json!("high"), json!(4096), None)
    );
    ws.send_text("/status").await.unwrap();
    let status = ws.next_message(WAIT).await.unwrap();
    assert!(
        status.contains("\nThinking: high (chosen with /think)\n"),
        "{status}"
    );
    ws.send_text("/think default").await.unwrap();
    ws.next_message(WAIT).await.unwrap();
    ws.send_text("/model default").await.unwrap();
    ws.next_message(WAIT).await.unwrap();
    ws.send_text("no thinking").await.unwrap();
    ws.next_message(WAIT).await.unwrap();
    let body = request_for(&fake, "no thinking").body;
    assert_eq!(
        (
            body["model"].clone(),
            body.get("reasoning_effort").cloned(),
            body["max_tokens"].clone()
        ),
        (json!("scripted"), None, json!(4096))
    );
    fake.assert_no_violations();
}

/// Catches: a provider outage (503 after the provider's retries) failing the turn
/// instead of the fallback answering it, the chat told more than once per outage, the
/// primary never used again once it answers, or a recovery not said.
#[tokio::test]
async fn a_fallback_serves_during_an_outage_and_the_chat_is_told_once() {
    let primary = FakeModel::start().await.unwrap();
    let backup = FakeModel::start().await.unwrap();
    backup.set_default(DefaultReply::Text("from the backup".into()));
    // Turn 1: the first attempt and its one retry; turn 2: the probe.
    for _ in 0..3 {
        primary.push(Step::Status {
            code: 503,
            retry_after: None,
            body: r#"{"error": {"message": "overloaded"}}"#.into(),
        });
    }
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let config = config_for(
        &primary,
        json!({
            "models": {
                // Every turn probes the primary again (a cool-down would pass it over).
                "outageCooldown": "0s",
                "providers": {
                    "main": {"api": "openai-chat", "baseUrl": primary.base_url(), "apiKey": "k1",
                        "maxRetries": 1, "models": [{"id": "m1"}]},
                    "backup": {"api": "openai-chat", "baseUrl": backup.base_url(), "apiKey": "k2",
                        "maxRetries": 0, "models": [{"id": "m2"}]},
                }},
            "agents": {"defaults": {"model": {"primary": "main/m1", "fallbacks": ["backup/m2"]}}},
            "channels": telegram(&tg),
        }),
    );
    let config = {
        // `config_for`'s own `fake` provider is not wanted here.
        let mut v: Value = serde_json::from_str(&config).unwrap();
        v["models"]["providers"]
            .as_object_mut()
            .unwrap()
            .remove("fake");
        v.to_string()
    };
    let _gw = GatewayBuilder::new(BIN)
        .config(config)
        .start()
        .await
        .unwrap();
    let dm = Chat::private(42);
    tg.user_message(dm.clone(), ann(), "first turn");
    tg.wait_for_sent(2, WAIT).await.unwrap();
    tg.user_message(dm.clone(), ann(), "second turn");
    tg.wait_for_sent(3, WAIT).await.unwrap();
    tg.user_message(dm.clone(), ann(), "third turn");
    let sent = tg.wait_for_sent(5, WAIT).await.unwrap();
    let texts: Vec<&str> = sent.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(
        texts,
        vec![
            "main/m1 is failing (HTTP 503); answering with backup/m2 until it recovers.",
            "from the backup",
            "from the backup",
            "main/m1 is answering again.",
            "echo: third turn",
        ]
    );
    // The same transcript went to the backup, under its own model id.
    let second = request_for(&backup, "second turn").body;
    assert_eq!(second["model"], "m2");
    let history: Vec<&str> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(
        history,
        vec!["first turn", "from the backup", "second turn"]
    );
    assert_eq!(
        primary.request_count(),
        4,
        "two attempts, a probe, an answer"
    );
    assert_eq!(backup.request_count(), 2);
    primary.assert_no_violations();
    backup.assert_no_violations();
}

/// Catches: a provider's `headers` not sent (Azure OpenAI's `api-key`), a base URL's
/// query (`api-version`) lost, a bearer token sent with no `apiKey`, or a header value
/// shown by `config print`.
#[tokio::test]
async fn provider_headers_reach_the_model_and_config_print_hides_them() {
    let fake = FakeModel::start().await.unwrap();
    let config = json!({
        "gateway": {"port": 0, "shutdownGrace": "2s"},
        "models": {"providers": {"azure": {
            "api": "openai-chat",
            "baseUrl": format!("{}?api-version=2024-10-21", fake.base_url()),
            "headers": {"api-key": "${AZ_TEST_KEY}", "X-Gateway-Team": "literal-team-secret"},
            "models": [{"id": "dep"}],
        }}},
        "agents": {"defaults": {"model": "azure/dep"}},
    })
    .to_string();
    let gw = GatewayBuilder::new(BIN)
        .config(config)
        .env("AZ_TEST_KEY", "env-az-secret")
        .start()
        .await
        .unwrap();
    let mut ws = chat(&gw, "main").await;
    ws.send_text("hello azure").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "echo: hello azure");
    let req = request_for(&fake, "hello azure");
    assert_eq!(
        (
            req.header("api-key"),
            req.header("x-gateway-team"),
            req.query.as_deref(),
            req.auth.as_deref(),
            req.path.as_str(),
        ),
        (
            Some("env-az-secret"),
            Some("literal-team-secret"),
            Some("api-version=2024-10-21"),
            None,
            "/v1/chat/completions",
        )
    );

    let out = output(
        cli(gw.state_dir())
            .args(["config", "print", "--config"])
            .arg(gw.config_path())
            .env("AZ_TEST_KEY", "env-az-secret"),
    )
    .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let printed: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        printed["models"]["providers"]["azure"]["headers"],
        json!({"api-key": "<redacted>", "X-Gateway-Team": "<redacted>"})
    );
    assert!(!stdout.contains("env-az-secret") && !stdout.contains("literal-team-secret"));
    let status = gw
        .http()
        .get(format!("{}/api/status", gw.base_url()))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        !status.contains("env-az-secret") && !status.contains("literal-team-secret"),
        "{status}"
    );
    assert!(!gw
        .stderr_lines()
        .iter()
        .any(|l| l.contains("env-az-secret") || l.contains("literal-team-secret")));
}

/// Catches: `/model` or `/think` from Discord's menu (slash commands with options) not
/// parsed as typed ones are, or a choice made there not reaching the channel's runs.
#[tokio::test]
async fn model_and_think_from_discord_slash_commands_reach_the_request() {
    use switchboard_testkit::fake_discord::{DUser, FakeDiscord, BOT_ID};
    const DTOKEN: &str = "discord-test-token";
    const GUILD: u64 = 500;
    const GENERAL: u64 = 501;
    let fake = FakeModel::start().await.unwrap();
    let dc = FakeDiscord::start(DTOKEN).await.unwrap();
    dc.add_guild(GUILD, "team", &[GENERAL]);
    let config = config_for(
        &fake,
        json!({"models": models(&fake), "channels": {"discord": {"enabled": true, "token": DTOKEN,
            "apiUrl": dc.api_url(), "allowFrom": ["42"], "guilds": {GUILD.to_string(): {}}}}}),
    );
    let _gw = GatewayBuilder::new(BIN)
        .config(config)
        .start()
        .await
        .unwrap();
    dc.wait_ready(1, WAIT).await.unwrap();
    let ann = DUser::new(42, "ann");
    let model = dc.slash_command(
        Some(GUILD),
        GENERAL,
        ann.clone(),
        "model",
        &[("model", "fake/other")],
    );
    let think = dc.slash_command(
        Some(GUILD),
        GENERAL,
        ann.clone(),
        "think",
        &[("level", "low")],
    );
    let responses = dc.wait_for_interaction_responses(2, WAIT).await.unwrap();
    let content = |id: u64| {
        responses
            .iter()
            .find(|r| r.interaction_id == id)
            .and_then(|r| r.content.clone())
    };
    assert_eq!(
        (content(model), content(think)),
        (
            Some("This session now uses fake/other.".to_string()),
            Some("Thinking for this session: low.".to_string())
        )
    );
    dc.guild_message(GUILD, GENERAL, ann, &format!("<@{BOT_ID}> from discord"));
    dc.wait_for_sent(1, WAIT).await.unwrap();
    let body = fake
        .requests()
        .into_iter()
        .find(|r| r.body.to_string().contains("from discord"))
        .unwrap()
        .body;
    assert_eq!(
        (body["model"].clone(), body["reasoning_effort"].clone()),
        (json!("other"), json!("low"))
    );
    dc.assert_no_violations();
    fake.assert_no_violations();
}

/// Catches: a reply the model cut at its `maxTokens` (`finish_reason: "length"`)
/// delivered as if it were complete.
#[tokio::test]
async fn a_reply_cut_at_max_tokens_says_so_in_the_chat() {
    let fake = FakeModel::start().await.unwrap();
    let chunk = |delta: Value, reason: Value| {
        format!(
            "data: {}\n\n",
            json!({"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": reason}]})
        )
    };
    fake.push_for(
        "write a lot",
        Step::RawSse(vec![
            chunk(
                json!({"role": "assistant", "content": "One, two, thr"}),
                Value::Null,
            ),
            chunk(json!({}), json!("length")),
            "data: [DONE]\n\n".into(),
        ]),
    );
    let gw = GatewayBuilder::new(BIN)
        .config(config_for(&fake, json!({"models": models(&fake)})))
        .start()
        .await
        .unwrap();
    let mut ws = chat(&gw, "main").await;
    ws.send_text("/model fake/other").await.unwrap();
    ws.next_message(WAIT).await.unwrap();
    ws.send_text("write a lot").await.unwrap();
    assert_eq!(
        ws.next_message(WAIT).await.unwrap(),
        "One, two, thr\n\n… (the reply was cut at the model's 777-token limit)"
    );
    fake.assert_no_violations();
}
