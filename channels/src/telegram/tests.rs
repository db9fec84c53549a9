//! The Telegram adapter against the fake Bot API: the poisoned-update ledger (polling and
//! webhook), the webhook's answer, and resuming a split message after its delivered parts.

#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;
use switchboard_testkit::fake_telegram::{Chat, Failure, FakeTelegram, User};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::{ChatKind, Inbound, MemoryProgress};

const TOKEN: &str = "123456:TEST-token";
const WAIT: Duration = Duration::from_secs(20);

/// The ledger in memory.
#[derive(Default)]
struct MemLedger {
    state: Mutex<LedgerState>,
}

#[derive(Default)]
struct LedgerState {
    offset: Option<i64>,
    attempts: HashMap<i64, u32>,
    poisoned: Vec<Poisoned>,
}

impl MemLedger {
    fn poisoned(&self) -> Vec<Poisoned> {
        self.state.lock().unwrap().poisoned.clone()
    }
}

#[async_trait]
impl OffsetStore for MemLedger {
    async fn load(&self) -> Option<i64> {
        self.state.lock().unwrap().offset
    }
    async fn save(&self, next_offset: i64) {
        let mut s = self.state.lock().unwrap();
        s.offset = Some(next_offset);
        s.attempts.retain(|id, _| *id >= next_offset);
    }
    async fn begin_attempt(&self, update_id: i64) -> Result<u32, LedgerError> {
        let mut s = self.state.lock().unwrap();
        let n = s.attempts.entry(update_id).or_default();
        *n += 1;
        Ok(*n)
    }
    async fn interrupted(&self, update_id: i64) {
        if let Some(n) = self.state.lock().unwrap().attempts.get_mut(&update_id) {
            *n = n.saturating_sub(1);
        }
    }
    async fn handled(&self, update_id: i64) {
        self.state.lock().unwrap().attempts.remove(&update_id);
    }
    async fn poison(&self, record: &Poisoned) -> Result<(), LedgerError> {
        let mut s = self.state.lock().unwrap();
        s.attempts.remove(&record.update_id);
        s.poisoned.push(record.clone());
        Ok(())
    }
}

fn ann() -> User {
    User::new(42, "ann", "Ann")
}

fn adapter(tg: &FakeTelegram, mode: Mode, ledger: Arc<MemLedger>) -> Arc<Telegram> {
    let settings = TelegramSettings {
        token: TOKEN.to_string(),
        api_url: tg.api_url(),
        text_limit: 64,
        poll_timeout: Duration::from_secs(1),
        mode,
        commands: vec![crate::MenuCommand::new("help", "Show the commands")],
        link_preview: false,
    };
    Arc::new(Telegram::new(settings, ledger).unwrap())
}

/// A stand-in for the gateway's routing: acks every message except those whose text is
/// `refuse` (as when routing fails on a store error); reports each message it saw.
fn gateway(refuse: &'static str) -> (InboundSink, mpsc::UnboundedReceiver<String>) {
    let (tx, mut rx) = mpsc::channel::<Inbound>(4);
    let (seen_tx, seen) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(inbound) = rx.recv().await {
            let _ = seen_tx.send(inbound.msg.text.clone());
            if inbound.msg.text != refuse {
                if let Some(ack) = inbound.ack {
                    let _ = ack.send(());
                }
            }
        }
    });
    (tx, seen)
}

async fn next(seen: &mut mpsc::UnboundedReceiver<String>) -> String {
    tokio::time::timeout(WAIT, seen.recv())
        .await
        .expect("a message in time")
        .expect("the stand-in runs")
}

/// Catches: an update the gateway never takes retried forever (polling stuck on it) instead
/// of being recorded as poisoned after three failed attempts and skipped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn polling_skips_an_update_that_fails_three_times_and_goes_on() {
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let ledger = Arc::new(MemLedger::default());
    let poison = tg.user_message(Chat::private(42), ann(), "refused");
    tg.user_message(Chat::private(42), ann(), "fine");
    let telegram = adapter(&tg, Mode::Polling, ledger.clone());
    let (sink, mut seen) = gateway("refused");
    let cancel = CancellationToken::new();
    let run = tokio::spawn({
        let (telegram, cancel) = (telegram.clone(), cancel.clone());
        async move { telegram.run(sink, cancel).await }
    });
    let mut order = Vec::new();
    for _ in 0..4 {
        order.push(next(&mut seen).await);
    }
    assert_eq!(order, ["refused", "refused", "refused", "fine"]);
    let poisoned = ledger.poisoned();
    assert_eq!(poisoned.len(), 1, "{poisoned:?}");
    assert_eq!(
        (poisoned[0].update_id, poisoned[0].attempts),
        (poison, MAX_ATTEMPTS)
    );
    assert_eq!(poisoned[0].reason, "the gateway could not take it");
    assert_eq!(poisoned[0].summary, "message 1 in chat 42 from 42");
    assert!(poisoned[0].payload.contains("\"refused\""));
    tg.wait_for_call("getUpdates", 5, WAIT).await.unwrap();
    assert_eq!(tg.pending_updates(), 0, "both updates confirmed");
    cancel.cancel();
    run.await.unwrap().unwrap();
}

/// Catches: attempts counted only in memory, so an update whose handling kills the adapter
/// (or the process) is retried forever; here the attempts counted before three earlier
/// runs died are already in the ledger.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_whose_attempts_never_completed_is_poisoned_without_handling_it() {
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let ledger = Arc::new(MemLedger::default());
    let poison = tg.user_message(Chat::private(42), ann(), "deadly");
    tg.user_message(Chat::private(42), ann(), "fine");
    for _ in 0..MAX_ATTEMPTS {
        ledger.begin_attempt(poison).await.unwrap();
    }
    let telegram = adapter(&tg, Mode::Polling, ledger.clone());
    let (sink, mut seen) = gateway("");
    let cancel = CancellationToken::new();
    let run = tokio::spawn({
        let (telegram, cancel) = (telegram.clone(), cancel.clone());
        async move { telegram.run(sink, cancel).await }
    });
    assert_eq!(next(&mut seen).await, "fine");
    let poisoned = ledger.poisoned();
    assert_eq!(
        (poisoned[0].update_id, poisoned[0].attempts),
        (poison, MAX_ATTEMPTS)
    );
    assert!(poisoned[0]
        .reason
        .starts_with("its handling never completed"));
    cancel.cancel();
    run.await.unwrap().unwrap();
}

/// Catches: the webhook answering 200 for an update the gateway did not take (Telegram then
/// never delivers it again); after three failures it is poisoned and answered 200.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_webhook_is_ok_only_once_the_update_is_taken() {
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let ledger = Arc::new(MemLedger::default());
    let mode = Mode::Webhook {
        url: "https://bot.example.invalid/telegram/webhook".into(),
        secret: "s3cret".into(),
    };
    let telegram = adapter(&tg, mode, ledger.clone());
    let (sink, mut seen) = gateway("refused");
    let cancel = CancellationToken::new();
    let run = tokio::spawn({
        let (telegram, cancel) = (telegram.clone(), cancel.clone());
        async move { telegram.run(sink, cancel).await }
    });
    let update = |id: i64, text: &str| {
        json!({"update_id": id, "message": {"message_id": id, "date": 1_700_000_000,
            "chat": {"id": 42, "type": "private", "first_name": "Ann"},
            "from": {"id": 42, "is_bot": false, "first_name": "Ann"}, "text": text}})
        .to_string()
    };
    let post = |body: String| {
        let telegram = telegram.clone();
        async move {
            telegram
                .handle_webhook(Some("s3cret"), body.as_bytes())
                .await
        }
    };
    // The webhook takes updates once the adapter has set it up.
    let mut answer = post(update(1, "hello")).await;
    for _ in 0..200 {
        if !matches!(answer, Err(WebhookError::NotRunning)) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
        answer = post(update(1, "hello")).await;
    }
    assert!(answer.is_ok(), "{answer:?}");
    assert_eq!(next(&mut seen).await, "hello");
    // A voice note without `mime_type` (optional in the Bot API; teloxide alone reads it as
    // an empty message) is repaired and taken.
    let voice = json!({"update_id": 3, "message": {"message_id": 3, "date": 1_700_000_000,
        "chat": {"id": 42, "type": "private", "first_name": "Ann"},
        "from": {"id": 42, "is_bot": false, "first_name": "Ann"}, "caption": "my voice",
        "voice": {"file_id": "v", "file_unique_id": "uv", "duration": 2, "file_size": 3}}});
    let answer = post(voice.to_string()).await;
    assert!(answer.is_ok(), "{answer:?}");
    assert_eq!(next(&mut seen).await, "my voice");
    for attempt in 1..=MAX_ATTEMPTS {
        let answer = post(update(2, "refused")).await;
        assert_eq!(next(&mut seen).await, "refused");
        if attempt < MAX_ATTEMPTS {
            assert!(
                matches!(answer, Err(WebhookError::NotTaken(_))),
                "attempt {attempt}: {answer:?}"
            );
        } else {
            assert!(answer.is_ok(), "poisoned and answered 200: {answer:?}");
        }
    }
    assert_eq!(ledger.poisoned()[0].update_id, 2);
    assert!(matches!(
        post("{not json".into()).await,
        Err(WebhookError::BadUpdate(_))
    ));
    assert!(matches!(
        telegram.handle_webhook(Some("wrong"), b"{}").await,
        Err(WebhookError::Unauthorized)
    ));
    let hook = tg.webhook().expect("a webhook");
    assert_eq!(hook.secret_token.as_deref(), Some("s3cret"));
    cancel.cancel();
    run.await.unwrap().unwrap();
}

/// Catches: a split message whose delivered parts are not reported (or not resumed after),
/// so a retry sends its first parts again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_split_message_resumes_after_its_delivered_parts() {
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    tg.user_message(Chat::private(42), ann(), "hi"); // the bot knows the chat
    let telegram = adapter(&tg, Mode::Polling, Arc::new(MemLedger::default()));
    let text = format!(
        "{}\n\n{}",
        "first ".repeat(8).trim(),
        "second ".repeat(8).trim()
    );
    let msg = OutboundMessage {
        origin: Origin {
            channel: CHANNEL_ID.into(),
            account: None,
            chat_id: "42".into(),
            thread_id: None,
            kind: ChatKind::Direct,
            reply_handle: None,
        },
        text,
        footer: None,
        actions: Vec::new(),
        file: None,
        key: "k".into(),
    };
    tg.fail_after(
        "sendMessage",
        1,
        Failure::BadRequest("Forbidden: bot was blocked by the user".into()),
    );
    let progress = MemoryProgress::default();
    let err = telegram.send(&msg, &progress).await.unwrap_err();
    assert!(matches!(err, ChannelError::Permanent(_)), "{err:?}");
    assert_eq!(progress.delivered(), 1, "the first part was reported");
    telegram.send(&msg, &progress).await.unwrap();
    let sent: Vec<String> = tg.sent_messages().into_iter().map(|m| m.text).collect();
    assert_eq!(
        sent,
        [
            "first first first first first first first first",
            "second second second second second second second second"
        ]
    );
    tg.assert_no_violations();
}

/// Catches: an adapter that drops the outbound message's footer, sends it inside the
/// text's last part when it does not fit there, or cuts it over two parts.
#[tokio::test]
async fn the_footer_is_sent_whole_and_last() {
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    tg.user_message(Chat::private(42), ann(), "hi"); // the bot knows the chat
    let telegram = adapter(&tg, Mode::Polling, Arc::new(MemLedger::default()));
    let footer = "Stats: runtime 1s • tokens 2 (in 1 / out 1) • sessionKey k";
    let msg = OutboundMessage {
        origin: Origin {
            channel: CHANNEL_ID.into(),
            account: None,
            chat_id: "42".into(),
            thread_id: None,
            kind: ChatKind::Direct,
            reply_handle: None,
        },
        text: "first ".repeat(8).trim().to_string(),
        footer: Some(footer.into()),
        actions: Vec::new(),
        file: None,
        key: "k".into(),
    };
    telegram
        .send(&msg, &MemoryProgress::default())
        .await
        .unwrap();
    let sent: Vec<String> = tg.sent_messages().into_iter().map(|m| m.text).collect();
    assert_eq!(
        sent,
        ["first first first first first first first first", footer]
    );
    tg.assert_no_violations();
}

/// An adapter whose inbound side never ran (a process that sends for a channel another
/// process polls, in shared mode) sends, posts and edits a line, and shows typing, and
/// never polls. Catches: a send path that needs what `run` sets up (the bot's identity,
/// the webhook's sink).
#[tokio::test]
async fn an_adapter_that_never_ran_sends_posts_edits_and_types() {
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    tg.user_message(Chat::private(42), ann(), "hi"); // the bot knows the chat
    let telegram = adapter(&tg, Mode::Polling, Arc::new(MemLedger::default()));
    let origin = Origin {
        channel: CHANNEL_ID.into(),
        account: None,
        chat_id: "42".into(),
        thread_id: None,
        kind: ChatKind::Direct,
        reply_handle: None,
    };
    let msg = OutboundMessage {
        origin: origin.clone(),
        text: "a reply".into(),
        footer: None,
        actions: Vec::new(),
        file: None,
        key: "k".into(),
    };
    telegram
        .send(&msg, &MemoryProgress::default())
        .await
        .unwrap();
    let id = telegram
        .post_line(&origin, "line", "working")
        .await
        .unwrap();
    telegram.edit_line(&origin, &id, "done").await.unwrap();
    telegram.typing(&origin, true).await.unwrap();
    tg.wait_for_call("sendChatAction", 1, WAIT).await.unwrap();
    telegram.typing(&origin, false).await.unwrap();

    let sent: Vec<String> = tg.sent_messages().into_iter().map(|m| m.text).collect();
    assert_eq!(sent, ["a reply", "working"]);
    let edits: Vec<(i64, String)> = tg
        .edits()
        .into_iter()
        .map(|e| (e.message_id, e.plain_text))
        .collect();
    assert_eq!(edits, [(id.parse().unwrap(), "done".to_owned())]);
    assert_eq!(tg.chat_actions(), [(42, "typing".to_owned())]);
    assert!(tg.calls_to("getUpdates").is_empty(), "it never polled");
    tg.assert_no_violations();
}
