//! Discord end to end: the real binary's serenity adapter against the fake Discord
//! gateway + REST API.

use std::time::Duration;

use serde_json::{json, Value};
use switchboard_testkit::fake_discord::{DUser, Failure, FakeDiscord, FollowupKind, BOT_ID};
use switchboard_testkit::fake_model::{FakeModel, Gate, Step};
use switchboard_testkit::harness::Gateway;

use crate::common::{start, WAIT};
use crate::subagents::spawn_call;

const TOKEN: &str = "discord-test-token";
const GUILD: u64 = 500;
const GENERAL: u64 = 501;
const THREAD: u64 = 502;

fn ann() -> DUser {
    DUser::new(42, "ann")
}

async fn gateway(fake: &FakeModel, dc: &FakeDiscord, discord: Value) -> Gateway {
    dc.add_guild(GUILD, "team", &[GENERAL]);
    dc.add_thread(GUILD, GENERAL, THREAD);
    let mut d = json!({"enabled": true, "token": TOKEN, "apiUrl": dc.api_url(), "allowFrom": ["42"],
                       "guilds": {GUILD.to_string(): {}}});
    crate::common::merge(&mut d, &discord);
    let gw = start(fake, json!({"channels": {"discord": d}})).await;
    dc.wait_ready(1, WAIT).await.unwrap();
    gw
}

fn mention(text: &str) -> String {
    format!("<@{BOT_ID}> {text}")
}

fn fences_balanced(s: &str) -> bool {
    s.lines()
        .filter(|l| l.trim_start().starts_with("```"))
        .count()
        % 2
        == 0
}

#[tokio::test]
async fn guild_threads_and_dms_get_replies_in_place() {
    let fake = FakeModel::start().await.unwrap();
    let dc = FakeDiscord::start(TOKEN).await.unwrap();
    let _gw = gateway(&fake, &dc, json!({})).await;
    // A turn that takes a while, so its typing indicator (sent until the run ends) is
    // seen: against an instant model the run can end before the first typing call.
    fake.push_for(
        "hello channel",
        Step::delayed(
            Duration::from_millis(500),
            Step::text("echo: hello channel"),
        ),
    );

    dc.guild_message(GUILD, GENERAL, ann(), &mention("hello channel"));
    let sent = dc.wait_for_sent(1, WAIT).await.unwrap();
    assert_eq!(
        (sent[0].channel_id, sent[0].content.as_str()),
        (GENERAL, "echo: hello channel")
    );

    dc.guild_message(GUILD, THREAD, ann(), &mention("in the thread"));
    let sent = dc.wait_for_sent(2, WAIT).await.unwrap();
    assert_eq!(
        (sent[1].channel_id, sent[1].content.as_str()),
        (THREAD, "echo: in the thread")
    );

    // Not mentioned in a guild: ignored.
    dc.guild_message(GUILD, GENERAL, ann(), "just chatting");
    let (dm, _) = dc.dm_message(ann(), "a direct message");
    let sent = dc.wait_for_sent(3, WAIT).await.unwrap();
    assert_eq!(
        (sent[2].channel_id, sent[2].content.as_str()),
        (dm, "echo: a direct message")
    );
    assert_eq!(
        fake.request_count(),
        3,
        "the unaddressed message reached no agent"
    );
    assert!(dc.typing_calls().contains(&GENERAL));

    let commands = dc.registered_commands();
    let sub = commands
        .iter()
        .find(|c| c.name == "subagents")
        .expect("/subagents registered");
    assert_eq!(sub.option_names(), vec!["action", "target", "message"]);
    for name in [
        "stop", "help", "status", "new", "usage", "approve", "cron", "compact", "model", "think",
    ] {
        assert!(
            commands.iter().any(|c| c.name == name),
            "/{name} registered"
        );
    }
    dc.assert_no_violations();
}

#[tokio::test]
async fn slash_commands_are_answered_through_the_interaction_callback() {
    let fake = FakeModel::start().await.unwrap();
    let dc = FakeDiscord::start(TOKEN).await.unwrap();
    let _gw = gateway(&fake, &dc, json!({})).await;
    let list = dc.slash_command(
        Some(GUILD),
        GENERAL,
        ann(),
        "subagents",
        &[("action", "list")],
    );
    let stop = dc.slash_command(Some(GUILD), GENERAL, ann(), "stop", &[]);
    let responses = dc.wait_for_interaction_responses(2, WAIT).await.unwrap();
    let of = |id: u64| {
        responses
            .iter()
            .find(|r| r.interaction_id == id)
            .unwrap()
            .clone()
    };
    assert_eq!(of(list).kind, 4);
    assert_eq!(
        of(list).content.as_deref(),
        Some("No sub-agents have been spawned from this chat.")
    );
    assert_eq!(of(stop).content.as_deref(), Some("Nothing to stop."));
    // Typed as a message, the same command works too.
    dc.guild_message(GUILD, GENERAL, ann(), "/subagents list");
    let sent = dc.wait_for_sent(1, WAIT).await.unwrap();
    assert_eq!(
        sent[0].content,
        "No sub-agents have been spawned from this chat."
    );
    assert_eq!(fake.request_count(), 0);
}

#[tokio::test]
async fn a_spawn_announces_where_it_was_asked() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "investigate",
        Step::ToolCalls(vec![spawn_call("dig into logs", json!({"label": "logs"}))]),
    );
    fake.push_for("investigate", Step::Text("started".into()));
    let dc = FakeDiscord::start(TOKEN).await.unwrap();
    let _gw = gateway(&fake, &dc, json!({})).await;
    dc.guild_message(GUILD, THREAD, ann(), &mention("investigate please"));
    // The parent's reply and the announce, in either order.
    let mut sent = dc.wait_for_sent(2, WAIT).await.unwrap();
    let reply = sent.iter().position(|m| m.content == "started").unwrap();
    sent.remove(reply);
    assert_eq!(sent[0].channel_id, THREAD);
    let lines: Vec<&str> = sent[0].content.lines().collect();
    assert_eq!(lines[0], "Status: success");
    assert!(lines[1].starts_with("Result: echo: Your task has ended."));
    assert_eq!(lines[2], "Notes: none");
    assert!(
        lines[3].starts_with("Stats: runtime ")
            && lines[3].contains("sessionKey agent:main:subagent:"),
        "{}",
        sent[0].content
    );
}

/// The session key of a guild channel's conversation.
fn guild_session(channel: u64) -> String {
    format!("agent:main:discord:group:{channel}")
}

/// What the fake Discord recorded as sent, in order.
fn contents(dc: &FakeDiscord) -> Vec<String> {
    dc.sent_messages().into_iter().map(|m| m.content).collect()
}

/// A dropped gateway socket is RESUMEd, and a message sent meanwhile is answered once.
/// (Catches: a replayed dispatch handled twice, or a message lost across the drop.)
#[tokio::test]
async fn a_dropped_socket_is_resumed_and_the_next_message_answered_once() {
    let fake = FakeModel::start().await.unwrap();
    let dc = FakeDiscord::start(TOKEN).await.unwrap();
    let mut gw = gateway(&fake, &dc, json!({})).await;
    dc.guild_message(GUILD, GENERAL, ann(), &mention("before the drop"));
    dc.wait_for_sent(1, WAIT).await.unwrap();
    dc.drop_connection(None).await;
    dc.guild_message(GUILD, GENERAL, ann(), &mention("after the drop"));
    dc.wait_ready(2, Duration::from_secs(30)).await.unwrap();
    let sent = dc.wait_for_sent(2, Duration::from_secs(30)).await.unwrap();
    assert_eq!(sent[1].content, "echo: after the drop");
    assert!(
        dc.resumes() >= 1,
        "the session was resumed, not re-identified"
    );
    // Answered once: stored once, and the full send log after a graceful stop.
    assert_eq!(
        crate::telegram::user_texts(&gw, &guild_session(GENERAL)).await,
        ["before the drop", "after the drop"]
    );
    crate::common::wait_outbox_sent(&gw, 2).await;
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    assert_eq!(
        contents(&dc),
        ["echo: before the drop", "echo: after the drop"]
    );
}

#[tokio::test]
async fn a_429_is_waited_out_and_long_code_replies_keep_fences_balanced() {
    let fake = FakeModel::start().await.unwrap();
    let code: String = (0..150)
        .map(|i| format!("    let value_{i} = compute({i});\n"))
        .collect();
    let long = format!("Here you go:\n```rust\n{code}```\nThat is the whole program.");
    assert!(long.chars().count() > 4500, "{}", long.chars().count());
    fake.push_for("write code", Step::Text(long));
    let dc = FakeDiscord::start(TOKEN).await.unwrap();
    dc.fail_next(
        "createMessage",
        Failure::RateLimited {
            retry_after_secs: 1.0,
            global: false,
        },
    );
    let mut gw = gateway(&fake, &dc, json!({})).await;
    dc.guild_message(GUILD, GENERAL, ann(), &mention("write code"));
    dc.wait_for_sent(3, WAIT).await.unwrap();
    crate::common::wait_outbox_sent(&gw, 1).await;
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    // Three parts, each once: the full send log, and one outbox row sent on its first
    // attempt (the 429 was waited out inside it).
    let sent = dc.sent_messages();
    assert_eq!(sent.len(), 3, "{sent:?}");
    let rows = crate::record::outbox(&gw).await;
    assert_eq!(
        rows.iter()
            .map(|r| (r.state.as_str(), r.attempts))
            .collect::<Vec<_>>(),
        [("sent", 1)]
    );
    for m in &sent {
        assert!(m.content.chars().count() <= 2000);
        assert!(
            fences_balanced(&m.content),
            "unbalanced fences:\n{}",
            m.content
        );
    }
    assert!(sent[0].content.starts_with("Here you go:\n```rust\n"));
    assert!(sent[1].content.starts_with("```rust\n"));
    assert!(sent[2].content.ends_with("That is the whole program."));
    let calls = dc.calls_to("createMessage");
    assert!(
        calls[1].at.duration_since(calls[0].at) >= Duration::from_millis(950),
        "waited out retry_after"
    );
}

#[tokio::test]
async fn a_stranger_never_reaches_an_agent() {
    let fake = FakeModel::start().await.unwrap();
    let dc = FakeDiscord::start(TOKEN).await.unwrap();
    let mut gw = gateway(&fake, &dc, json!({"dmPolicy": "allowlist"})).await;
    let eve = DUser::new(66, "eve");
    dc.guild_message(GUILD, GENERAL, eve.clone(), &mention("hi"));
    dc.dm_message(eve, "hi in private");
    dc.guild_message(GUILD, GENERAL, ann(), &mention("I am allowed"));
    dc.wait_for_sent(1, WAIT).await.unwrap();
    crate::common::wait_outbox_sent(&gw, 1).await;
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    assert_eq!(contents(&dc), ["echo: I am allowed"]);
    assert_eq!(fake.request_count(), 1);
}

/// A command whose answer takes longer than 2 s is deferred (type 5), then its answer
/// edits the original (`PATCH …/messages/@original`), once. (Catches: the answer posted
/// as a new follow-up, leaving "thinking…" forever; the old test checked the content only.)
#[tokio::test]
async fn a_slow_command_is_deferred_then_edited_in() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "ponder",
        Step::ToolCalls(vec![spawn_call("musing child", json!({}))]),
    );
    fake.push_for("ponder", Step::Text("spawned".into()));
    // The child answers only once the command has been deferred: past the 2 s however
    // slow the machine.
    let gate = Gate::new();
    fake.push_for(
        "think slowly",
        Step::gated(&gate, Step::text("slow thought")),
    );
    let dc = FakeDiscord::start(TOKEN).await.unwrap();
    let mut gw = gateway(&fake, &dc, json!({})).await;
    dc.guild_message(GUILD, GENERAL, ann(), &mention("ponder this"));
    dc.wait_for_sent(2, WAIT).await.unwrap(); // "spawned" + the announce
    let id = dc.slash_command(
        Some(GUILD),
        GENERAL,
        ann(),
        "subagents",
        &[
            ("action", "send"),
            ("target", "1"),
            ("message", "think slowly"),
        ],
    );
    let responses = dc.wait_for_interaction_responses(1, WAIT).await.unwrap();
    assert_eq!(
        (responses[0].interaction_id, responses[0].kind),
        (id, 5),
        "deferred"
    );
    gate.open();
    let followups = dc.wait_for_followups(1, WAIT).await.unwrap();
    assert_eq!(
        (followups[0].interaction_id, followups[0].kind),
        (id, FollowupKind::EditOriginal),
        "the deferred answer is edited in: {followups:?}"
    );
    assert!(
        followups[0]
            .content
            .as_deref()
            .unwrap_or("")
            .ends_with("replied:\nslow thought"),
        "{followups:?}"
    );
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    assert_eq!(dc.followups().len(), 1, "{:?}", dc.followups());
    assert_eq!(
        dc.sent_messages().len(),
        2,
        "no channel message for the command"
    );
}

#[tokio::test]
async fn missing_heartbeat_acks_and_an_invalid_session_reconnect_without_losing_messages() {
    let fake = FakeModel::start().await.unwrap();
    let dc = FakeDiscord::start(TOKEN).await.unwrap();
    let mut gw = gateway(&fake, &dc, json!({})).await;
    // No ACK for our heartbeats: the client must notice, reconnect and resume.
    dc.stop_acking_heartbeats(true);
    dc.wait_ready(2, Duration::from_secs(30)).await.unwrap();
    dc.stop_acking_heartbeats(false);
    dc.guild_message(
        GUILD,
        GENERAL,
        ann(),
        &mention("after the zombie connection"),
    );
    let sent = dc.wait_for_sent(1, WAIT).await.unwrap();
    assert_eq!(sent[0].content, "echo: after the zombie connection");
    // The session is invalidated: RESUME is refused (op 9), so the client identifies anew.
    let identifies = dc.identifies();
    dc.invalidate_session();
    dc.drop_connection(Some(4000)).await;
    dc.wait_ready(3, Duration::from_secs(30)).await.unwrap();
    assert!(dc.identifies() > identifies, "re-identified after op 9");
    dc.guild_message(GUILD, GENERAL, ann(), &mention("after the new session"));
    let sent = dc.wait_for_sent(2, WAIT).await.unwrap();
    assert_eq!(sent[1].content, "echo: after the new session");
    crate::common::wait_outbox_sent(&gw, 2).await;
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    assert_eq!(
        contents(&dc),
        [
            "echo: after the zombie connection",
            "echo: after the new session"
        ],
        "each answered once"
    );
}

/// A guild that is not listed under `guilds` is not served, whoever writes there.
/// Catches: serving every guild the bot is added to.
#[tokio::test]
async fn an_unlisted_guild_is_not_served() {
    let fake = FakeModel::start().await.unwrap();
    let dc = FakeDiscord::start(TOKEN).await.unwrap();
    dc.add_guild(600, "strangers", &[601]);
    let mut gw = gateway(&fake, &dc, json!({})).await;
    dc.guild_message(600, 601, ann(), &mention("hello from elsewhere"));
    // Messages are routed in order: once this one is answered, the first was decided.
    dc.guild_message(GUILD, GENERAL, ann(), &mention("hello at home"));
    dc.wait_for_sent(1, WAIT).await.unwrap();
    crate::common::wait_outbox_sent(&gw, 1).await;
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    assert_eq!(contents(&dc), ["echo: hello at home"]);
    assert_eq!(fake.request_count(), 1);
    gw.wait_for_log("reason=\"group not listed (groupPolicy allowlist)\"", WAIT)
        .await
        .unwrap();
}
