//! Progress lines when Telegram refuses: a 429 on an edit is waited out and the newest
//! line shown, a message Telegram no longer has is posted again once and later lines edit
//! the new one; the child never sees any of it.

use serde_json::json;
use switchboard_testkit::fake_model::{FakeModel, Gate, Step};
use switchboard_testkit::fake_telegram::{Chat, Failure, FakeTelegram};

use crate::agents_progress::{progress, progress_posts, script_parent, sent_until, wait_edit};
use crate::telegram::{ann, gateway as telegram_gateway, TOKEN};

/// Catches: a rate-limited edit dropped (the line stuck on an old text) or turned into a
/// new message; a gone message never replaced, or replaced by a message per later call;
/// a platform failure reaching the child as a tool error.
#[tokio::test]
async fn a_rate_limited_edit_waits_and_a_gone_message_is_posted_again_once() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    script_parent(&fake, "sort the mail", "mail task", "mail");
    let (second, third, end) = (Gate::new(), Gate::new(), Gate::new());
    fake.push_for("mail task", Step::ToolCalls(vec![progress("a")]));
    fake.push_for(
        "mail task",
        Step::gated(&second, Step::ToolCalls(vec![progress("b")])),
    );
    fake.push_for(
        "mail task",
        Step::gated(&third, Step::ToolCalls(vec![progress("c")])),
    );
    fake.push_for("mail task", Step::gated(&end, Step::text("sorted")));
    let _gw = telegram_gateway(&fake, &tg, json!({})).await;

    tg.user_message(Chat::private(42), ann(), "sort the mail");
    sent_until(&tg, |sent| progress_posts(sent).len() == 1).await;
    let first = progress_posts(&tg.sent_messages())[0].message_id;

    tg.fail_next(
        "editMessageText",
        Failure::TooManyRequests { retry_after: 1 },
    );
    second.open();
    let edits = wait_edit(&tg, "⏳ mail: b").await;
    assert_eq!(edits.len(), 1, "{edits:?}");
    assert_eq!(edits[0].message_id, first);

    tg.fail_next(
        "editMessageText",
        Failure::BadRequest("message to edit not found".into()),
    );
    third.open();
    sent_until(&tg, |sent| progress_posts(sent).len() == 2).await;
    let sent = tg.sent_messages();
    let posts = progress_posts(&sent);
    assert_eq!(posts[1].plain_text, "⏳ mail: c");
    let new = posts[1].message_id;
    assert_ne!(new, first);

    end.open();
    let edits = wait_edit(&tg, "✅ mail: done").await;
    assert_eq!(edits.last().map(|e| e.message_id), Some(new));
    assert_eq!(progress_posts(&tg.sent_messages()).len(), 2);
    let statuses: Vec<u16> = tg
        .calls_to("editMessageText")
        .iter()
        .map(|c| c.status)
        .collect();
    assert_eq!(statuses, vec![429, 200, 400, 200]);
    // Every call was accepted: the child saw no failure.
    let results: Vec<String> = fake
        .requests()
        .iter()
        .filter_map(|r| r.body["messages"].as_array()?.last().cloned())
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .filter(|c| c.starts_with("shown:") || c.contains("progress"))
        .collect();
    assert_eq!(results, vec!["shown: a", "shown: b", "shown: c"]);
    tg.assert_no_violations();
}
