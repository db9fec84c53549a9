//! Discord delivery end to end: 5xx on `createMessage` retried by our own sender, the
//! gateway-URL check before connecting, and long command answers continued as follow-ups.

use serde_json::json;
use switchboard_testkit::fake_discord::{DUser, Failure, FakeDiscord, FollowupKind, BOT_ID};
use switchboard_testkit::fake_model::{FakeModel, Gate, Step};
use switchboard_testkit::harness::Gateway;

use crate::common::{start, wait_outbox_sent, WAIT};
use crate::subagents::spawn_call;

const TOKEN: &str = "discord-delivery-token";
const GUILD: u64 = 800;
const GENERAL: u64 = 801;

async fn gateway(fake: &FakeModel, dc: &FakeDiscord) -> Gateway {
    dc.add_guild(GUILD, "team", &[GENERAL]);
    let discord = json!({"enabled": true, "token": TOKEN, "apiUrl": dc.api_url(),
        "allowFrom": ["42"], "guilds": {GUILD.to_string(): {}}});
    start(fake, json!({"channels": {"discord": discord}})).await
}

fn ann() -> DUser {
    DUser::new(42, "ann")
}

/// 5xx answers to `createMessage` are retried by the sender (up to its three tries) and
/// the message is delivered once, on the outbox's first attempt. (Catches: a 5xx treated
/// as a refusal — the reply dropped as failed —, or a retry that posts twice.)
#[tokio::test]
async fn server_errors_on_create_message_are_retried_and_delivered_once() {
    let fake = FakeModel::start().await.unwrap();
    let dc = FakeDiscord::start(TOKEN).await.unwrap();
    dc.fail_next("createMessage", Failure::ServerError(502));
    dc.fail_next("createMessage", Failure::ServerError(500));
    let mut gw = gateway(&fake, &dc).await;
    dc.wait_ready(1, WAIT).await.unwrap();
    dc.guild_message(GUILD, GENERAL, ann(), &format!("<@{BOT_ID}> shaky api"));
    dc.wait_for_sent(1, WAIT).await.unwrap();
    wait_outbox_sent(&gw, 1).await;
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    let sent: Vec<String> = dc.sent_messages().into_iter().map(|m| m.content).collect();
    assert_eq!(sent, ["echo: shaky api"]);
    assert_eq!(
        dc.calls_to("createMessage").len(),
        3,
        "two refused, one taken"
    );
    assert_eq!(crate::record::sent_once(&gw).await, ["echo: shaky api"]);
}

/// When `GET /api/v10/gateway` fails the adapter says so and does not connect, then tries
/// again and connects to the gateway that call names. (Catches: the check dropped, which
/// leaves serenity's silent fallback to the real Discord, or no retry after a failure.)
#[tokio::test]
async fn a_failing_gateway_lookup_is_reported_and_retried_before_connecting() {
    let fake = FakeModel::start().await.unwrap();
    let dc = FakeDiscord::start(TOKEN).await.unwrap();
    dc.fail_next("getGateway", Failure::ServerError(500));
    let gw = gateway(&fake, &dc).await;
    gw.wait_for_log("discord: GET /api/v10/gateway failed; not connecting", WAIT)
        .await
        .unwrap();
    dc.wait_ready(1, WAIT).await.unwrap();
    let lookups = dc.calls_to("getGateway");
    assert!(lookups.len() >= 2, "{lookups:?}");
    assert_eq!(lookups[0].status, 500);
    dc.guild_message(GUILD, GENERAL, ann(), &format!("<@{BOT_ID}> connected?"));
    let sent = dc.wait_for_sent(1, WAIT).await.unwrap();
    assert_eq!(sent[0].content, "echo: connected?");
}

/// A command answer longer than Discord's 2000 characters: the deferred original is
/// edited with the first part and the rest follows as follow-up messages, in order, each
/// within the limit, nothing lost. (Catches: the answer cut at 2000, or sent whole and
/// refused.)
#[tokio::test]
async fn a_long_command_answer_continues_as_follow_ups() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "ponder",
        Step::ToolCalls(vec![spawn_call("musing child", json!({}))]),
    );
    fake.push_for("ponder", Step::text("spawned"));
    let long: String = (0..60)
        .map(|i| format!("line {i:02} of a long answer.\n"))
        .collect::<String>()
        .repeat(2);
    assert!(long.chars().count() > 3000);
    let gate = Gate::new();
    fake.push_for("say a lot", Step::gated(&gate, Step::text(long.clone())));
    let dc = FakeDiscord::start(TOKEN).await.unwrap();
    let _gw = gateway(&fake, &dc).await;
    dc.wait_ready(1, WAIT).await.unwrap();
    dc.guild_message(GUILD, GENERAL, ann(), &format!("<@{BOT_ID}> ponder this"));
    dc.wait_for_sent(2, WAIT).await.unwrap(); // "spawned" and the announce
    let id = dc.slash_command(
        Some(GUILD),
        GENERAL,
        ann(),
        "subagents",
        &[
            ("action", "send"),
            ("target", "1"),
            ("message", "say a lot"),
        ],
    );
    let responses = dc.wait_for_interaction_responses(1, WAIT).await.unwrap();
    assert_eq!((responses[0].interaction_id, responses[0].kind), (id, 5));
    gate.open();
    // About 3,500 characters with the reply's first line: two parts.
    let followups = dc.wait_for_followups(2, WAIT).await.unwrap();
    assert_eq!(followups.len(), 2, "{followups:?}");
    let kinds: Vec<FollowupKind> = followups.iter().map(|f| f.kind).collect();
    assert_eq!(kinds[0], FollowupKind::EditOriginal, "{followups:?}");
    assert!(
        kinds[1..].iter().all(|k| *k == FollowupKind::Create),
        "{kinds:?}"
    );
    let parts: Vec<String> = followups
        .iter()
        .map(|f| f.content.clone().unwrap_or_default())
        .collect();
    assert!(parts.iter().all(|p| p.chars().count() <= 2000), "{parts:?}");
    let joined: String = parts.join("\n");
    let said: Vec<&str> = joined.lines().filter(|l| l.starts_with("line ")).collect();
    let want: Vec<&str> = long.lines().collect();
    assert_eq!(said, want);
}
