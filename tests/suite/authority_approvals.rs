//! Owners approve, and what the bot sends cannot be dressed up: in a group where Eve may
//! talk to the bot but is not an owner (`channels.telegram.owners` defaults to the DM
//! `allowFrom`, Ann), Eve's `/approve` and Eve's button press are refused; the request
//! shows the command verbatim in a code block (Telegram `<pre>`, HTML-escaped; Discord a
//! fence the command's backticks cannot close) with its folder and whether it runs
//! sandboxed; and link previews (Telegram) and embeds (Discord) are off on every message.

use std::time::Duration;

use serde_json::json;
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::fake_telegram::{Chat, FakeTelegram, SentMessage, User};

use crate::common::{start, WAIT};
use crate::telegram::{ann, TOKEN};
use crate::tools_support::{script, workspace};

const GROUP: i64 = -100_777;

fn eve() -> User {
    User::new(77, "eve", "Eve")
}

fn group() -> Chat {
    Chat::supergroup(GROUP, "ops")
}

/// The first message sent whose visible text starts with `prefix`.
async fn wait_sent(tg: &FakeTelegram, prefix: &str) -> SentMessage {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        if let Some(m) = tg
            .sent_messages()
            .into_iter()
            .find(|m| m.plain_text.starts_with(prefix))
        {
            return m;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "nothing starting with {prefix:?}; sent: {:?}",
            tg.sent_messages()
                .iter()
                .map(|m| m.plain_text.clone())
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The approval request's id, from its first line.
fn request_id(m: &SentMessage) -> String {
    m.plain_text["🔐 Approval needed [".len()..]
        .split(']')
        .next()
        .unwrap_or_default()
        .to_string()
}

/// Catches: a group member who is not an owner approving by command or by button; the
/// command rendered as Markdown/HTML (the approver not seeing what runs); link previews
/// left on (a URL the model writes fetched by Telegram with no click).
#[tokio::test]
async fn only_an_owner_approves_and_the_command_is_shown_verbatim() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let telegram = json!({"enabled": true, "botToken": TOKEN, "apiUrl": tg.api_url(),
        "allowFrom": ["42"], "groups": {"*": {"allowFrom": ["42", "77"]}}, "pollTimeoutSeconds": 1});
    let gw = start(
        &fake,
        json!({
            "gateway": {"shutdownGrace": "300ms"},
            "channels": {"telegram": telegram},
            "tools": {"exec": {"allowlist": ["/usr/bin/true", "/bin/true"]}},
        }),
    )
    .await;
    let command = "touch owned.txt # <b>**safe**</b> see http://evil.example/x";
    script(
        &fake,
        "ap1",
        "exec",
        &json!({ "command": command }).to_string(),
    );
    tg.user_message(group(), ann(), "@switchboard_bot ap1");
    let req = wait_sent(&tg, "🔐 Approval needed [").await;
    let id = request_id(&req);
    // Telegram gets the command in <pre>, escaped; the approver sees it as written.
    assert!(
        req.text.contains(
            "<pre>touch owned.txt # &lt;b&gt;**safe**&lt;/b&gt; see http://evil.example/x</pre>"
        ),
        "{}",
        req.text
    );
    assert!(req.plain_text.contains(command), "{}", req.plain_text);
    let ws_dir = workspace(&gw).canonicalize().unwrap();
    assert!(
        req.plain_text
            .contains(&format!("\nDirectory: {}\n", ws_dir.display())),
        "{}",
        req.plain_text
    );
    assert!(
        req.plain_text.contains("\nSandboxed: "),
        "{}",
        req.plain_text
    );

    // Eve may talk in the group, but is not an owner.
    tg.user_message(group(), eve(), &format!("/approve {id} allow-once"));
    wait_sent(&tg, "Only an owner can answer this.").await;
    let allow = format!("approve:{id}:allow-once");
    tg.press_button(group(), eve(), req.message_id, &allow)
        .unwrap();
    let answers = tg.wait_for_callback_answers(1, WAIT).await.unwrap();
    assert!(answers[0].show_alert, "{answers:?}");
    assert_eq!(
        answers[0].text.as_deref(),
        Some("Only an owner can answer this.")
    );
    assert!(tg.edits().is_empty(), "a refused press edits nothing");
    assert!(!workspace(&gw).join("owned.txt").exists());

    // Ann, the owner, approves in the group.
    tg.press_button(group(), ann(), req.message_id, &allow)
        .unwrap();
    wait_sent(&tg, "done ap1").await;
    assert!(workspace(&gw).join("owned.txt").exists());
    let edits = tg.edits();
    assert_eq!(edits.len(), 1, "{edits:?}");
    assert!(edits[0].plain_text.contains(command), "{edits:?}");

    // Link previews are off on everything the bot sent or edited.
    let sent = tg.sent_messages();
    assert!(sent.len() >= 3, "{sent:?}");
    assert!(sent.iter().all(|m| m.preview_disabled), "{sent:?}");
    assert!(edits.iter().all(|e| e.preview_disabled), "{edits:?}");
    tg.assert_no_violations();
    fake.assert_no_violations();
}

/// `channels.telegram.linkPreview: true` leaves Telegram's previews on.
/// Catches: the switch ignored.
#[tokio::test]
async fn link_preview_true_leaves_previews_on() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let telegram = json!({"enabled": true, "botToken": TOKEN, "apiUrl": tg.api_url(),
        "allowFrom": ["42"], "pollTimeoutSeconds": 1, "linkPreview": true});
    let _gw = start(&fake, json!({"channels": {"telegram": telegram}})).await;
    tg.user_message(Chat::private(42), ann(), "see http://example.com");
    let m = wait_sent(&tg, "echo: see").await;
    assert!(!m.preview_disabled, "{m:?}");
}

const DC_TOKEN: &str = "discord-test-token";
const GUILD: u64 = 800;
const GENERAL: u64 = 801;

/// On Discord a command whose own backticks try to close the code block (and then write
/// Markdown outside it) stays inside the block, a guild member who is not an owner cannot
/// approve, and every created message carries `SUPPRESS_EMBEDS`.
/// Catches: a command breaking out of its fence, a non-owner approving, embeds left on.
#[tokio::test]
async fn on_discord_the_fence_holds_and_embeds_are_off() {
    use switchboard_testkit::fake_discord::{DUser, FakeDiscord, BOT_ID};
    let fake = FakeModel::start().await.unwrap();
    let dc = FakeDiscord::start(DC_TOKEN).await.unwrap();
    dc.add_guild(GUILD, "team", &[GENERAL]);
    let discord = json!({"enabled": true, "token": DC_TOKEN, "apiUrl": dc.api_url(),
        "allowFrom": ["42"], "guilds": {GUILD.to_string(): {"allowFrom": ["42", "77"]}}});
    let gw = start(
        &fake,
        json!({
            "channels": {"discord": discord},
            "tools": {"exec": {"allowlist": ["/usr/bin/true", "/bin/true"]}},
        }),
    )
    .await;
    dc.wait_ready(1, WAIT).await.unwrap();
    let command = "touch fenced.txt ```\n**Approve me, it is safe** ```` x";
    script(
        &fake,
        "dc9",
        "exec",
        &json!({ "command": command }).to_string(),
    );
    dc.guild_message(
        GUILD,
        GENERAL,
        DUser::new(42, "ann"),
        &format!("<@{BOT_ID}> dc9"),
    );
    let deadline = tokio::time::Instant::now() + WAIT;
    let req = loop {
        if let Some(m) = dc
            .sent_messages()
            .into_iter()
            .find(|m| m.content.starts_with("🔐 Approval needed ["))
        {
            break m;
        }
        assert!(tokio::time::Instant::now() < deadline, "no request");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    // One fence opens the command and one closes it: the command's backticks never make
    // three in a row.
    let block = req.content.split("Command:\n").nth(1).unwrap();
    assert_eq!(req.content.matches("```").count(), 2, "{}", req.content);
    assert!(block.starts_with("```\n"), "{block}");
    assert_eq!(
        block.replace('\u{200B}', "").split("\n```\n").next(),
        Some(format!("```\n{command}").as_str())
    );
    let id = req.content["🔐 Approval needed [".len()..]
        .split(']')
        .next()
        .unwrap()
        .to_string();
    dc.guild_message(
        GUILD,
        GENERAL,
        DUser::new(77, "eve"),
        &format!("/approve {id} allow-once"),
    );
    let deadline = tokio::time::Instant::now() + WAIT;
    while !dc
        .sent_messages()
        .iter()
        .any(|m| m.content == "Only an owner can answer this.")
    {
        assert!(tokio::time::Instant::now() < deadline, "no refusal");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!workspace(&gw).join("fenced.txt").exists());
    let sent = dc.sent_messages();
    assert!(sent.iter().all(|m| m.embeds_suppressed()), "{sent:?}");
    dc.assert_no_violations();
}
