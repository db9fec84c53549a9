//! Progress lines end to end: a sub-agent's `progress` calls show as one message per child
//! in the requester's chat, posted once and then edited in place, on Telegram
//! (`editMessageText`), Discord (message `PATCH`) and the web chat (`message` then `update`
//! frames of one key); at most one edit per 2 s window, the newest text winning; the child's
//! end edits the line to how it ended; a restart between two calls edits the same message;
//! a main run calling it gets a tool error. Each child's last answer waits on a gate, so
//! the line it showed last is not coalesced into the end line.

use serde_json::{json, Value};
use switchboard_testkit::fake_discord::{DUser, FakeDiscord, BOT_ID};
use switchboard_testkit::fake_model::{FakeModel, Gate, Step, ToolCall};
use switchboard_testkit::fake_telegram::{Chat, Failure, FakeTelegram, SentMessage};

use crate::common::{chat, start, WAIT};
use crate::record::wait_db_i64;
use crate::subagents::spawn_call;
use crate::telegram::{ann, gateway as telegram_gateway, TOKEN};

pub(crate) fn progress(text: &str) -> ToolCall {
    ToolCall::new("progress", json!({ "text": text }).to_string())
}

/// The parent spawns child `label` with `task`, then answers "Started.".
pub(crate) fn script_parent(fake: &FakeModel, trigger: &str, task: &str, label: &str) {
    fake.push_for(
        trigger,
        Step::ToolCalls(vec![spawn_call(task, json!({ "label": label }))]),
    );
    fake.push_for(trigger, Step::text("Started."));
}

pub(crate) fn progress_posts(sent: &[SentMessage]) -> Vec<&SentMessage> {
    sent.iter().filter(|m| m.text.starts_with("⏳")).collect()
}

/// Four calls in one model answer after the first line: one message for the child, its
/// edits fewer than the calls (coalesced per window), each newer than the one before, the
/// last one the newest text, all of the same message. (Catches: a message per call, an
/// edit per call, an older text shown last, edits of another message.)
#[tokio::test]
async fn a_childs_progress_is_one_telegram_message_edited_in_place() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    script_parent(&fake, "count the stars", "stars task", "stars");
    let gate = Gate::new();
    fake.push_for(
        "stars task",
        Step::ToolCalls(vec![progress("looking up\nat the sky")]),
    );
    fake.push_for(
        "stars task",
        Step::gated(
            &gate,
            Step::ToolCalls((2..=5).map(|i| progress(&format!("step {i}"))).collect()),
        ),
    );
    let end = Gate::new();
    fake.push_for("stars task", Step::gated(&end, Step::text("42 stars")));
    let _gw = telegram_gateway(&fake, &tg, json!({})).await;

    tg.user_message(Chat::private(42), ann(), "count the stars");
    sent_until(&tg, |sent| progress_posts(sent).len() == 1).await;
    let sent = tg.sent_messages();
    let line = progress_posts(&sent)[0].clone();
    assert_eq!(line.plain_text, "⏳ stars: looking up at the sky");
    gate.open();
    let edits = wait_edit(&tg, "⏳ stars: step 5").await;
    // The four calls come within milliseconds, so they make two edits (one at once, the
    // rest coalesced into the next window); a loaded machine can spread them over a window
    // boundary, never make one edit per call. (The exact windows are proven on a paused
    // clock in `subagents::progress::tests`.)
    assert!(
        edits.len() < 4,
        "4 calls in one answer are coalesced, not one edit each: {edits:?}"
    );
    let numbers: Vec<u32> = edits
        .iter()
        .map(|e| {
            assert_eq!((e.chat_id, e.message_id), (42, line.message_id));
            e.plain_text["⏳ stars: step ".len()..].parse().unwrap()
        })
        .collect();
    assert!(numbers.windows(2).all(|w| w[0] < w[1]), "{numbers:?}");
    // The child's end: the line says so, and the announce follows.
    end.open();
    let edits = wait_edit(&tg, "✅ stars: done").await;
    assert_eq!(edits.last().map(|e| e.message_id), Some(line.message_id));
    sent_until(&tg, |sent| {
        sent.iter().any(|m| m.text.starts_with("Status: success"))
    })
    .await;
    assert_eq!(progress_posts(&tg.sent_messages()).len(), 1);
    tg.assert_no_violations();
    fake.assert_no_violations();
}

/// A kill between two progress calls, then a restart: the resumed child's next line is an
/// edit of the message posted before the kill. (Catches: the handle kept in memory only, so
/// a restart posts a second message for the same child.)
#[tokio::test]
async fn a_restart_between_two_calls_edits_the_same_message() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    script_parent(&fake, "long job", "job task", "job");
    fake.push_for(
        "job task",
        Step::ToolCalls(vec![progress("before the restart")]),
    );
    fake.push_for("job task", Step::Hang);
    fake.push_for(
        "job task",
        Step::ToolCalls(vec![progress("after the restart")]),
    );
    let end = Gate::new();
    fake.push_for("job task", Step::gated(&end, Step::text("done")));
    let mut gw = telegram_gateway(&fake, &tg, json!({})).await;

    tg.user_message(Chat::private(42), ann(), "long job");
    sent_until(&tg, |sent| progress_posts(sent).len() == 1).await;
    // The handle is committed once the post succeeded; the child then hangs in its model call.
    wait_db_i64(&gw, "SELECT COUNT(*) FROM progress_lines", 1).await;
    fake.wait_for_requests(4, WAIT).await.unwrap();
    gw.kill().await.unwrap();
    gw.restart().await.unwrap();

    wait_edit(&tg, "⏳ job: after the restart").await;
    end.open();
    let edits = wait_edit(&tg, "✅ job: done").await;
    let sent = tg.sent_messages();
    let posts = progress_posts(&sent);
    assert_eq!(posts.len(), 1, "{sent:?}");
    assert_eq!(posts[0].plain_text, "⏳ job: before the restart");
    assert_eq!(edits.len(), 2, "{edits:?}");
    assert!(edits.iter().all(|e| e.message_id == posts[0].message_id));
    tg.assert_no_violations();
}

/// A child that ends while its end edit waits out a rate limit, then a kill: after the
/// restart the line is edited to how the child ended, in the same message. (Catches: the
/// end edit living in memory only, so the chat shows `⏳` for a child that is long done.)
#[tokio::test]
async fn an_end_edit_cut_off_by_a_kill_is_made_after_the_restart() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    script_parent(&fake, "short job", "job task", "job");
    fake.push_for("job task", Step::ToolCalls(vec![progress("working")]));
    let end = Gate::new();
    fake.push_for("job task", Step::gated(&end, Step::text("done")));
    let mut gw = telegram_gateway(&fake, &tg, json!({})).await;

    tg.user_message(Chat::private(42), ann(), "short job");
    sent_until(&tg, |sent| progress_posts(sent).len() == 1).await;
    wait_db_i64(&gw, "SELECT COUNT(*) FROM progress_lines", 1).await;
    // The end edit is refused with a long Retry-After: the worker holds it in memory.
    tg.fail_next(
        "editMessageText",
        Failure::TooManyRequests { retry_after: 60 },
    );
    end.open();
    tg.wait_for_call("editMessageText", 1, WAIT).await.unwrap();
    wait_db_i64(
        &gw,
        "SELECT COUNT(*) FROM subagent_runs WHERE outcome IS NOT NULL",
        1,
    )
    .await;
    assert!(tg.edits().is_empty(), "{:?}", tg.edits());
    gw.kill().await.unwrap();
    gw.restart().await.unwrap();

    let edits = wait_edit(&tg, "✅ job: done").await;
    let sent = tg.sent_messages();
    let posts = progress_posts(&sent);
    assert_eq!(posts.len(), 1, "{sent:?}");
    assert_eq!(edits.len(), 1, "{edits:?}");
    assert_eq!(edits[0].message_id, posts[0].message_id);
}

/// Waits until the messages sent so far satisfy `until`.
pub(crate) async fn sent_until(tg: &FakeTelegram, until: impl Fn(&[SentMessage]) -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let sent = tg.sent_messages();
        if until(&sent) {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "sent: {sent:?}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// Waits for an edit showing `text`; returns every edit so far.
pub(crate) async fn wait_edit(
    tg: &FakeTelegram,
    text: &str,
) -> Vec<switchboard_testkit::fake_telegram::EditedMessage> {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let edits = tg.edits();
        if edits.iter().any(|e| e.plain_text == text) {
            return edits;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no edit to {text:?}; edits: {edits:?}; sent: {:?}",
            tg.sent_messages()
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

const DISCORD_TOKEN: &str = "discord-test-token";

/// On Discord: the line is created once, then edited with `PATCH`; a user deleting it
/// makes the next line a new message (once), which later lines edit. (Catches: edits of a
/// deleted message failing forever, or a new message per call after one.)
#[tokio::test]
async fn on_discord_the_line_is_patched_and_a_deleted_one_posted_again_once() {
    let fake = FakeModel::start().await.unwrap();
    let dc = FakeDiscord::start(DISCORD_TOKEN).await.unwrap();
    dc.add_guild(500, "team", &[501]);
    script_parent(&fake, "scan the logs", "logs task", "logs");
    let deleted = Gate::new();
    let more = Gate::new();
    fake.push_for("logs task", Step::ToolCalls(vec![progress("a")]));
    fake.push_for(
        "logs task",
        Step::gated(&deleted, Step::ToolCalls(vec![progress("b")])),
    );
    fake.push_for(
        "logs task",
        Step::gated(&more, Step::ToolCalls(vec![progress("c")])),
    );
    let end = Gate::new();
    fake.push_for("logs task", Step::gated(&end, Step::text("no errors")));
    let _gw = start(
        &fake,
        json!({"channels": {"discord": {"enabled": true, "token": DISCORD_TOKEN,
            "apiUrl": dc.api_url(), "allowFrom": ["42"], "guilds": {"500": {}}}}}),
    )
    .await;
    dc.wait_ready(1, WAIT).await.unwrap();

    dc.guild_message(
        500,
        501,
        DUser::new(42, "ann"),
        &format!("<@{BOT_ID}> scan the logs"),
    );
    let first = wait_discord_posts(&dc, 1).await[0].clone();
    assert_eq!(first.content, "⏳ logs: a");
    dc.delete_message(first.message_id);
    deleted.open();
    let second = wait_discord_posts(&dc, 2).await[1].clone();
    assert_eq!(second.content, "⏳ logs: b");
    more.open();
    let edits = dc
        .wait_for_edit(WAIT, |e| e.content == "⏳ logs: c")
        .await
        .unwrap();
    assert_eq!(edits.len(), 1, "{edits:?}");
    assert_eq!(
        (edits[0].channel_id, edits[0].message_id),
        (501, second.message_id)
    );
    end.open();
    let edits = dc
        .wait_for_edit(WAIT, |e| e.content == "✅ logs: done")
        .await
        .unwrap();
    assert_eq!(edits.len(), 2, "{edits:?}");
    assert_eq!(edits[1].message_id, second.message_id);
    dc.wait_for_sent(4, WAIT).await.unwrap(); // "Started.", the two lines, the announce
    assert_eq!(wait_discord_posts(&dc, 2).await.len(), 2);
    // The failed PATCH of the deleted message, then the ones that worked.
    let patches: Vec<u16> = dc
        .calls_to("editMessage")
        .iter()
        .map(|c| c.status)
        .collect();
    assert_eq!(patches, vec![404, 200, 200]);
    dc.assert_no_violations();
}

async fn wait_discord_posts(
    dc: &FakeDiscord,
    n: usize,
) -> Vec<switchboard_testkit::fake_discord::SentMessage> {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let posts: Vec<_> = dc
            .sent_messages()
            .into_iter()
            .filter(|m| m.content.starts_with("⏳"))
            .collect();
        if posts.len() >= n {
            return posts;
        }
        assert!(tokio::time::Instant::now() < deadline, "{posts:?}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// The web chat gets the line as a `message` frame and each edit as an `update` frame of
/// the same key. (Catches: a second `message` frame per call, or an update under
/// another key, which the page would show as a new message or not at all.)
#[tokio::test]
async fn the_web_chat_gets_a_message_then_updates_of_its_key() {
    let fake = FakeModel::start().await.unwrap();
    script_parent(&fake, "index the docs", "docs task", "docs");
    let gate = Gate::new();
    fake.push_for("docs task", Step::ToolCalls(vec![progress("reading")]));
    fake.push_for(
        "docs task",
        Step::gated(&gate, Step::ToolCalls(vec![progress("writing")])),
    );
    let end = Gate::new();
    fake.push_for("docs task", Step::gated(&end, Step::text("indexed")));
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("index the docs").await.unwrap();

    let line = next_progress(&mut ws, "message").await;
    assert_eq!(line["text"], "⏳ docs: reading");
    let key = line["key"].as_str().unwrap().to_string();
    assert!(key.starts_with("progress:agent:main:subagent:"), "{key}");
    gate.open();
    let update = next_progress(&mut ws, "update").await;
    assert_eq!(
        update,
        json!({"type": "update", "key": key, "text": "⏳ docs: writing"})
    );
    end.open();
    let update = next_progress(&mut ws, "update").await;
    assert_eq!(
        update,
        json!({"type": "update", "key": key, "text": "✅ docs: done"})
    );
    fake.assert_no_violations();
}

/// The next frame of type `ty` that is a progress line (other messages skipped).
async fn next_progress(ws: &mut switchboard_testkit::harness::WsClient, ty: &str) -> Value {
    loop {
        let frame = ws.next_of_type(ty, WAIT).await.unwrap();
        if frame["key"]
            .as_str()
            .is_some_and(|k| k.starts_with("progress:"))
        {
            return frame;
        }
    }
}

/// A main run is not offered `progress`, and a call of it anyway is a tool error the model
/// reads. (Catches: a requester posting progress lines into its own chat.)
#[tokio::test]
async fn a_main_run_calling_progress_gets_a_tool_error() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for("report", Step::ToolCalls(vec![progress("x")]));
    fake.push_for("report", Step::text("ok"));
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("report").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "ok");
    let reqs = fake.requests();
    let first = &reqs[0].body;
    let offered: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(!offered.contains(&"progress"), "{offered:?}");
    let result = reqs[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(result["role"], "tool");
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .contains("`progress` is only for sub-agents"),
        "{result}"
    );
}

/// A `task` child (which posts no announce) shows its line in the chat of the run waiting
/// on it, and its end closes the line. (Catches: task children left without progress.)
#[tokio::test]
async fn a_task_childs_line_shows_in_the_waiting_chat() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "measure it",
        Step::ToolCalls(vec![crate::agents_task::task_call(
            "ruler",
            "ruler task",
            json!({}),
        )]),
    );
    fake.push_for("measure it", Step::text("It is 3 m."));
    let end = Gate::new();
    fake.push_for("ruler task", Step::ToolCalls(vec![progress("measuring")]));
    fake.push_for("ruler task", Step::gated(&end, Step::text("3 m")));
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("measure it").await.unwrap();

    let line = next_progress(&mut ws, "message").await;
    let text = line["text"].as_str().unwrap();
    assert!(
        text.starts_with("⏳ ") && text.ends_with(": measuring"),
        "{text}"
    );
    end.open();
    let update = next_progress(&mut ws, "update").await;
    assert_eq!(update["key"], line["key"]);
    assert!(
        update["text"].as_str().unwrap().starts_with("✅ "),
        "{update}"
    );
    fake.assert_no_violations();
}
