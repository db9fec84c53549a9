//! A conversation never outgrows its model (docs/context.md): requests fitted to the
//! model's context window, the older turns compacted by the model into a summary stored
//! beside the transcript, `/compact`, the provider's context-length refusal, a kill -9
//! mid-summary, and `session.reset`. The fake model refuses over-long requests exactly as
//! OpenAI does (400 `context_length_exceeded`, the completion counted in).

use std::time::Instant;

use serde_json::{json, Value};
use switchboard_testkit::fake_model::{DefaultReply, FakeModel, Step};
use switchboard_testkit::harness::Gateway;

use crate::common::{chat, get_text, post_json, start, WAIT};
use crate::record::db_exec;

/// The words that open the gateway's summary requests (`context::compact::SUMMARY_REQUEST`).
const SUMMARY: &str = "Summarize the conversation so far";
const SUMMARY_TEXT: &str = "Summary: the user sent numbered notes and the assistant noted each.";
const KEY: &str = "agent:main:main";

/// The fake model's default answer and its summaries; its window is `window` tokens.
async fn model(window: u64) -> FakeModel {
    let fake = FakeModel::start().await.unwrap();
    fake.set_context_window(window);
    fake.answer_summaries(SUMMARY, SUMMARY_TEXT);
    fake.set_default(DefaultReply::Text("noted".into()));
    fake
}

/// The config patch that tells the gateway the model's window.
fn window_config(window: u64) -> Value {
    json!({"models": {"providers": {"fake": {"models": [
        {"id": "scripted", "contextWindow": window}
    ]}}}})
}

/// A note of `n` bytes, numbered.
fn note(i: usize, n: usize) -> String {
    format!("note {i}: {}", "x".repeat(n))
}

/// Posts `text` to the main session and waits for its run: (status, reply, error).
async fn turn(gw: &Gateway, text: &str) -> (String, String, String) {
    let (code, body) = post_json(
        gw,
        &format!("/api/sessions/{KEY}/messages"),
        json!({"text": text, "wait": true}),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let s = |k: &str| body[k].as_str().unwrap_or_default().to_string();
    (s("status"), s("reply"), s("error"))
}

/// The transcript API's lines with the compactions.
async fn transcript(gw: &Gateway) -> Vec<Value> {
    get_text(
        gw,
        &format!("/api/sessions/{KEY}/transcript?compactions=true"),
    )
    .await
    .lines()
    .map(|l| serde_json::from_str(l).unwrap())
    .collect()
}

fn count(lines: &[Value], role: &str) -> usize {
    lines.iter().filter(|l| l["role"] == role).count()
}

/// The messages of the fake model's last request for a turn (not a summary).
fn last_turn_request(fake: &FakeModel) -> Vec<Value> {
    let requests = fake.requests();
    let last = requests
        .iter()
        .rev()
        .find(|r| !r.body.to_string().contains(SUMMARY))
        .expect("a turn's request");
    last.body["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Catches: a long conversation refused by its model (the whole transcript sent), a
/// compaction that deletes the messages it summarizes, or one not stored.
/// `SWITCHBOARD_CONTEXT_TURNS` changes the number of turns (500).
#[tokio::test]
async fn five_hundred_turns_of_two_kilobytes_are_all_answered_in_a_16k_window() {
    let turns: usize = std::env::var("SWITCHBOARD_CONTEXT_TURNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    let fake = model(16_000).await;
    let gw = start(&fake, window_config(16_000)).await;
    let started = Instant::now();
    for i in 0..turns {
        let (status, reply, error) = turn(&gw, &note(i, 2048)).await;
        assert_eq!(
            (status.as_str(), reply.as_str()),
            ("succeeded", "noted"),
            "turn {i}: {error}"
        );
    }
    println!("{turns} turns of 2 KB in {:?}", started.elapsed());
    assert_eq!(
        fake.refused_as_too_long(),
        0,
        "a request went over the window"
    );
    let summaries = fake.requests_containing(SUMMARY);
    let lines = transcript(&gw).await;
    assert_eq!(count(&lines, "user"), turns);
    assert_eq!(count(&lines, "assistant"), turns);
    let compactions = count(&lines, "compaction");
    assert!(
        compactions > 0 && compactions <= summaries,
        "{compactions} compactions, {summaries} summary requests"
    );
    assert!(lines
        .iter()
        .filter(|l| l["role"] == "compaction")
        .all(|l| l["content"] == SUMMARY_TEXT));
    // The model reads the summary in place of the older turns, then the newest turns.
    let messages = last_turn_request(&fake);
    let first_user = messages.iter().find(|m| m["role"] == "user").unwrap();
    assert!(first_user["content"]
        .as_str()
        .unwrap()
        .contains(SUMMARY_TEXT));
    assert!(messages.len() < 40, "{} messages sent", messages.len());
    fake.assert_no_violations();
}

/// Catches: a kill -9 while the model writes the summary losing the turn or leaving a
/// half compaction (the summary stored without its marker, or the marker without it), or
/// the next start not compacting again.
#[tokio::test]
async fn a_kill_mid_summary_loses_nothing_and_the_next_start_compacts() {
    let fake = model(16_000).await;
    // The first summary request is held until the gateway dies.
    fake.push_for(SUMMARY, Step::Hang);
    let mut gw = start(&fake, window_config(16_000)).await;
    let mut answered = 0;
    loop {
        assert!(answered < 60, "no compaction after {answered} turns");
        let text = note(answered, 2048);
        let post = turn(&gw, &text);
        tokio::select! {
            (status, reply, error) = post => {
                assert_eq!((status.as_str(), reply.as_str()), ("succeeded", "noted"), "{error}");
                answered += 1;
            }
            held = fake.wait_for_requests_containing(SUMMARY, 1, WAIT) => {
                held.unwrap();
                break;
            }
        }
    }
    gw.kill().await.unwrap();
    gw.restart().await.unwrap();
    // The run cut mid-summary resumes: it compacts again and answers; then the next turn.
    let (status, reply, error) = turn(&gw, "after the restart").await;
    assert_eq!(
        (status.as_str(), reply.as_str()),
        ("succeeded", "noted"),
        "{error}"
    );
    assert!(fake.requests_containing(SUMMARY) >= 2);
    let lines = transcript(&gw).await;
    // Every note and the last message are there, each answered once.
    assert_eq!(count(&lines, "user"), answered + 2);
    assert_eq!(count(&lines, "assistant"), answered + 2);
    assert!(count(&lines, "compaction") >= 1);
    let texts: Vec<&str> = lines
        .iter()
        .filter(|l| l["role"] == "user")
        .map(|l| l["content"].as_str().unwrap())
        .collect();
    assert_eq!(texts.last(), Some(&"after the restart"));
    assert!(texts[answered].starts_with(&format!("note {answered}:")));
    fake.assert_no_violations();
}

/// Catches: the provider's context-length refusal ending the turn without an answer (no
/// compaction and retry), or a second refusal ending it in silence.
#[tokio::test]
async fn a_context_length_refusal_compacts_and_retries_once_then_the_chat_is_told() {
    // The gateway is not told the window: it takes the default (128k), and only the
    // provider's refusal says the conversation is too long.
    let fake = model(8_000).await;
    let gw = start(&fake, json!({})).await;
    let mut i = 0;
    while fake.refused_as_too_long() == 0 {
        assert!(i < 40, "the model never refused");
        let (status, reply, error) = turn(&gw, &note(i, 2048)).await;
        assert_eq!(
            (status.as_str(), reply.as_str()),
            ("succeeded", "noted"),
            "turn {i}: {error}"
        );
        i += 1;
    }
    assert_eq!(fake.refused_as_too_long(), 1);
    assert!(fake.requests_containing(SUMMARY) >= 1);
    assert!(count(&transcript(&gw).await, "compaction") >= 1);
    // A message longer than the window by itself: refused again after the compaction,
    // and the chat is told.
    let mut ws = chat(&gw, "main").await;
    ws.send_text(&note(999, 15_400)).await.unwrap();
    let told = ws.next_message(WAIT).await.unwrap();
    assert!(
        told.contains("too long for the model's context window"),
        "{told}"
    );
    assert_eq!(fake.refused_as_too_long(), 3);
    fake.assert_no_violations();
}

/// Catches: `/compact` not reaching the model, not saying what it did, ignoring its
/// focus, or a later turn still sent the compacted messages.
#[tokio::test]
async fn compact_in_a_chat_summarizes_the_older_turns_and_says_so() {
    let fake = model(0).await;
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    for i in 0..3 {
        ws.send_text(&note(i, 700)).await.unwrap();
        assert_eq!(ws.next_message(WAIT).await.unwrap(), "noted");
    }
    ws.send_text("/compact the numbers").await.unwrap();
    let answer = ws.next_message(WAIT).await.unwrap();
    assert!(
        answer.starts_with("Compacted 4 messages (≈") && answer.contains("into a summary of ≈"),
        "{answer}"
    );
    let asked: Vec<String> = fake
        .requests()
        .iter()
        .map(|r| r.body.to_string())
        .filter(|b| b.contains(SUMMARY))
        .collect();
    assert_eq!(asked.len(), 1);
    assert!(asked[0].contains("Focus on: the numbers."), "{}", asked[0]);
    assert_eq!(count(&transcript(&gw).await, "compaction"), 1);
    ws.send_text("and now?").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "noted");
    let sent: Vec<String> = last_turn_request(&fake)
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(sent.len(), 3, "{sent:?}");
    assert!(sent[0].contains(SUMMARY_TEXT));
    assert!(sent[1].starts_with("note 2:"));
    assert_eq!(sent[2], "and now?");
    fake.assert_no_violations();
}

/// Catches: `session.reset.idleMinutes` ignored (an idle session goes on) or its
/// archive losing the old transcript.
#[tokio::test]
async fn an_idle_session_starts_fresh_on_its_next_message() {
    let fake = model(0).await;
    let mut gw = start(&fake, json!({"session": {"reset": {"idleMinutes": 5}}})).await;
    assert_eq!(turn(&gw, "before").await.1, "noted");
    assert_eq!(turn(&gw, "still active").await.1, "noted");
    // Ten minutes pass (the session's activity moved back while the daemon is down).
    gw.terminate().await.unwrap();
    db_exec(
        &gw,
        "UPDATE sessions SET updated_at = updated_at - 600000, created_at = created_at - 600000",
    )
    .await;
    db_exec(&gw, "UPDATE messages SET created_at = created_at - 600000").await;
    gw.restart().await.unwrap();
    assert_eq!(turn(&gw, "after a pause").await.1, "noted");
    let lines = transcript(&gw).await;
    let users: Vec<&str> = lines
        .iter()
        .filter(|l| l["role"] == "user")
        .map(|l| l["content"].as_str().unwrap())
        .collect();
    assert_eq!(users, vec!["after a pause"]);
    let sent = last_turn_request(&fake);
    assert!(!sent.iter().any(|m| m["content"] == "before"));
    let sessions = get_text(&gw, "/api/sessions").await;
    assert!(sessions.contains("archived"), "{sessions}");
    fake.assert_no_violations();
}
