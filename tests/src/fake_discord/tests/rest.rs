//! REST tests: driven with reqwest the way serenity calls `/api/v10/...`.

use std::time::Duration;

use serde_json::{json, Value};

use super::super::{Failure, FakeDiscord, FollowupKind};
use super::{alice, connect, identify, recv, start, SERENITY_INTENTS, TOKEN, WAIT};

/// Calls the API with `Authorization: Bot <TOKEN>`; returns status, headers and JSON body
/// (`Null` for an empty one).
pub(super) async fn call(
    discord: &FakeDiscord,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut request = reqwest::Client::new()
        .request(method, format!("{}/api/v10/{path}", discord.api_url()))
        .header("Authorization", format!("Bot {TOKEN}"));
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap();
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap()
    };
    (status, headers, body)
}

fn header<'a>(headers: &'a reqwest::header::HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

#[tokio::test]
async fn gateway_user_and_application_routes() {
    let discord = start().await;
    let (status, _, body) = call(&discord, "GET", "gateway", None).await;
    assert_eq!((status, body), (200, json!({"url": discord.gateway_url()})));
    let (_, _, body) = call(&discord, "GET", "gateway/bot", None).await;
    assert_eq!(body["shards"], 1);
    assert_eq!(body["session_start_limit"]["max_concurrency"], 1);
    let (_, _, body) = call(&discord, "GET", "users/@me", None).await;
    assert_eq!((&body["id"], &body["bot"]), (&json!("2000"), &json!(true)));
    let (_, _, body) = call(&discord, "GET", "oauth2/applications/@me", None).await;
    assert_eq!(body["id"], "3000");
    discord.assert_no_violations();
}

#[tokio::test]
async fn create_message_records_it_and_enforces_discord_limits() {
    let discord = start().await;
    discord.add_guild(100, "guild", &[200]);
    let body = json!({
        "content": "hello",
        "message_reference": {"message_id": "77"},
        "allowed_mentions": {"parse": []},
    });
    let (status, headers, message) =
        call(&discord, "POST", "channels/200/messages", Some(body)).await;
    assert_eq!(status, 200);
    assert_eq!(
        (
            &message["content"],
            &message["channel_id"],
            &message["author"]["id"]
        ),
        (&json!("hello"), &json!("200"), &json!("2000"))
    );
    assert_eq!(header(&headers, "x-ratelimit-limit"), "5");
    assert_eq!(header(&headers, "x-ratelimit-remaining"), "4");
    assert!(!header(&headers, "x-ratelimit-bucket").is_empty());
    let sent = discord.wait_for_sent(1, WAIT).await.unwrap();
    assert_eq!(
        (
            sent[0].channel_id,
            sent[0].content.as_str(),
            sent[0].reply_to
        ),
        (200, "hello", Some(77))
    );
    assert_eq!(
        sent[0].message_id.to_string(),
        message["id"].as_str().unwrap()
    );
    discord.assert_no_violations();

    let exactly = "é".repeat(2000);
    let (status, _, _) = call(
        &discord,
        "POST",
        "channels/200/messages",
        Some(json!({"content": exactly})),
    )
    .await;
    assert_eq!(status, 200);
    let (status, _, body) = call(
        &discord,
        "POST",
        "channels/200/messages",
        Some(json!({"content": "x".repeat(2001)})),
    )
    .await;
    assert_eq!(
        (status, &body["code"], &body["message"]),
        (400, &json!(50035), &json!("Invalid Form Body"))
    );
    assert_eq!(
        body["errors"]["content"]["_errors"][0]["code"],
        "BASE_TYPE_MAX_LENGTH"
    );
    let (status, _, body) = call(
        &discord,
        "POST",
        "channels/200/messages",
        Some(json!({"content": ""})),
    )
    .await;
    assert_eq!((status, &body["code"]), (400, &json!(50006)));
    let (status, _, body) = call(
        &discord,
        "POST",
        "channels/999/messages",
        Some(json!({"content": "x"})),
    )
    .await;
    assert_eq!((status, &body["code"]), (404, &json!(10003)));
    assert_eq!(discord.sent_messages().len(), 2);
    assert_eq!(discord.violations().len(), 3, "{:?}", discord.violations());
}

#[tokio::test]
async fn bad_authorization_is_401_and_unknown_routes_are_404_violations() {
    let discord = start().await;
    let url = format!("{}/api/v10/users/@me", discord.api_url());
    let response = reqwest::Client::new().get(&url).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 401);
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        json!({"message": "401: Unauthorized", "code": 0})
    );
    let response = reqwest::Client::new()
        .get(&url)
        .header("Authorization", TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 401);
    assert!(discord.violations().is_empty());

    let (status, _, body) = call(&discord, "GET", "guilds/1/emojis", None).await;
    assert_eq!(
        (status, body),
        (404, json!({"message": "404: Not Found", "code": 0}))
    );
    assert_eq!(discord.violations().len(), 1);
    assert_eq!(discord.calls()[2].route, "unknown");
}

#[tokio::test]
async fn scripted_rate_limit_and_server_error_then_normal_answers() {
    let discord = start().await;
    discord.add_guild(100, "guild", &[200]);
    discord.fail_next(
        "createMessage",
        Failure::RateLimited {
            retry_after_secs: 1.5,
            global: false,
        },
    );
    discord.fail_next("CREATEMESSAGE", Failure::ServerError(502));
    let body = json!({"content": "hi"});
    let (status, headers, limited) = call(
        &discord,
        "POST",
        "channels/200/messages",
        Some(body.clone()),
    )
    .await;
    assert_eq!(status, 429);
    assert_eq!(
        limited,
        json!({"message": "You are being rate limited.", "retry_after": 1.5, "global": false})
    );
    assert_eq!(header(&headers, "retry-after"), "2");
    assert_eq!(header(&headers, "x-ratelimit-remaining"), "0");
    assert_eq!(header(&headers, "x-ratelimit-reset-after"), "1.500");
    assert_eq!(header(&headers, "x-ratelimit-scope"), "user");
    assert!(!header(&headers, "x-ratelimit-bucket").is_empty());
    let (status, _, error) = call(
        &discord,
        "POST",
        "channels/200/messages",
        Some(body.clone()),
    )
    .await;
    assert_eq!(
        (status, error),
        (502, json!({"message": "502: Bad Gateway", "code": 0}))
    );
    let (status, _, _) = call(&discord, "POST", "channels/200/messages", Some(body)).await;
    assert_eq!(status, 200);
    let statuses: Vec<u16> = discord
        .calls_to("createMessage")
        .iter()
        .map(|c| c.status)
        .collect();
    assert_eq!(statuses, vec![429, 502, 200]);
    assert_eq!(discord.sent_messages().len(), 1);
    discord.assert_no_violations();
}

#[tokio::test]
async fn a_hanging_call_is_answered_503_on_shutdown() {
    let discord = start().await;
    discord.fail_next("getCurrentUser", Failure::Hang);
    let call = tokio::spawn({
        let discord = discord.clone();
        async move { call(&discord, "GET", "users/@me", None).await.0 }
    });
    discord
        .wait_for_call("getCurrentUser", 1, WAIT)
        .await
        .unwrap();
    discord.shutdown().await;
    assert_eq!(call.await.unwrap(), 503);
}

#[tokio::test]
async fn typing_dm_channels_and_commands() {
    let discord = start().await;
    discord.add_guild(100, "guild", &[200]);
    let (status, _, _) = call(&discord, "POST", "channels/200/typing", None).await;
    assert_eq!(status, 204);
    assert_eq!(discord.typing_calls(), vec![200]);
    let (_, _, dm) = call(
        &discord,
        "POST",
        "users/@me/channels",
        Some(json!({"recipient_id": "42"})),
    )
    .await;
    assert_eq!(
        (&dm["type"], &dm["recipients"][0]["id"]),
        (&json!(1), &json!("42"))
    );
    let (_, _, channel) = call(
        &discord,
        "GET",
        &format!("channels/{}", dm["id"].as_str().unwrap()),
        None,
    )
    .await;
    assert_eq!(channel, dm);

    let commands = json!([
        {"name": "subagents", "description": "Sub-agents", "type": 1, "options": [
            {"name": "action", "description": "What", "type": 3, "required": true},
            {"name": "target", "description": "Which", "type": 3}]},
        {"name": "stop", "description": "Stop the run"},
    ]);
    let (status, _, answer) = call(
        &discord,
        "PUT",
        "applications/3000/commands",
        Some(commands.clone()),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(answer[0]["name"], "subagents");
    assert!(answer[0]["id"].as_str().is_some());
    call(
        &discord,
        "PUT",
        "applications/3000/guilds/100/commands",
        Some(commands),
    )
    .await;
    let registered: Vec<(Option<u64>, String, Vec<String>)> = discord
        .registered_commands()
        .into_iter()
        .map(|c| (c.guild_id, c.name.clone(), c.option_names()))
        .collect();
    let subagents_options = vec!["action".to_owned(), "target".to_owned()];
    assert_eq!(
        registered,
        vec![
            (None, "subagents".to_owned(), subagents_options.clone()),
            (None, "stop".to_owned(), vec![]),
            (Some(100), "subagents".to_owned(), subagents_options),
            (Some(100), "stop".to_owned(), vec![]),
        ]
    );
    discord.assert_no_violations();
    let (status, _, _) = call(
        &discord,
        "PUT",
        "applications/3000/commands",
        Some(json!([{"name": "Bad Name", "description": "x"}])),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(discord.violations().len(), 1);
}

#[tokio::test]
async fn interaction_callbacks_follow_ups_and_edits_are_recorded() {
    let discord = start().await;
    let (mut ws, _) = connect(&discord).await;
    identify(&mut ws, SERENITY_INTENTS).await;
    let id = discord.slash_command(Some(100), 200, alice(), "stop", &[]);
    let d = recv(&mut ws).await["d"].clone();
    let token = d["token"].as_str().unwrap().to_owned();
    let path = format!("interactions/{id}/{token}/callback");

    let (status, _, _) = call(
        &discord,
        "POST",
        &format!("webhooks/3000/{token}"),
        Some(json!({"content": "early"})),
    )
    .await;
    assert_eq!(status, 404, "a follow-up before the callback");
    let (status, _, body) = call(
        &discord,
        "POST",
        &path,
        Some(json!({"type": 5, "data": {"flags": 64}})),
    )
    .await;
    assert_eq!((status, body), (204, Value::Null));
    let (status, _, body) = call(
        &discord,
        "POST",
        &path,
        Some(json!({"type": 4, "data": {"content": "again"}})),
    )
    .await;
    assert_eq!((status, &body["code"]), (400, &json!(40060)));
    let (status, _, edited) = call(
        &discord,
        "PATCH",
        &format!("webhooks/3000/{token}/messages/@original"),
        Some(json!({"content": "stopped"})),
    )
    .await;
    assert_eq!((status, &edited["content"]), (200, &json!("stopped")));
    let (status, _, _) = call(
        &discord,
        "POST",
        &format!("webhooks/3000/{token}"),
        Some(json!({"content": "more"})),
    )
    .await;
    assert_eq!(status, 200);

    let responses = discord
        .wait_for_interaction_responses(1, WAIT)
        .await
        .unwrap();
    assert_eq!(
        (
            responses[0].interaction_id,
            responses[0].kind,
            responses[0].content.clone(),
            responses[0].ephemeral
        ),
        (id, 5, None, true)
    );
    let followups: Vec<(u64, FollowupKind, Option<String>)> = discord
        .wait_for_followups(2, WAIT)
        .await
        .unwrap()
        .into_iter()
        .map(|f| (f.interaction_id, f.kind, f.content))
        .collect();
    assert_eq!(
        followups,
        vec![
            (id, FollowupKind::EditOriginal, Some("stopped".to_owned())),
            (id, FollowupKind::Create, Some("more".to_owned())),
        ]
    );
    assert_eq!(discord.violations().len(), 2, "{:?}", discord.violations());
}

#[tokio::test]
async fn a_late_callback_gets_unknown_interaction() {
    let discord = start().await;
    discord.set_interaction_deadline(Some(Duration::ZERO));
    let (mut ws, _) = connect(&discord).await;
    identify(&mut ws, SERENITY_INTENTS).await;
    let id = discord.slash_command(None, 555, alice(), "help", &[]);
    let token = recv(&mut ws).await["d"]["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let path = format!("interactions/{id}/{token}/callback");
    let (status, _, body) = call(
        &discord,
        "POST",
        &path,
        Some(json!({"type": 4, "data": {"content": "hi"}})),
    )
    .await;
    assert_eq!((status, &body["code"]), (404, &json!(10062)));
    assert!(discord.interaction_responses().is_empty());
    assert_eq!(discord.violations().len(), 1);
}
