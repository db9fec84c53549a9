//! Access through the real adapters (the rules themselves are table-tested in
//! `routing/access/tests.rs`): groups that need no mention, addressing by a reply, open
//! DMs, a guild's channel list, and Discord pairing. Each is checked against the fake
//! platform's full send log after a graceful stop and the model's requests.

use serde_json::json;
use switchboard_testkit::fake_discord::{DUser, FakeDiscord, BOT_ID};
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::fake_telegram::{Chat, FakeTelegram, User};

use crate::common::{output, start, wait_outbox_sent, WAIT};
use crate::faults_channels::sent_texts;
use crate::telegram::{ann, TOKEN};

/// A group with `requireMention: false` is answered without a mention; in a group with
/// the default, an unaddressed message is ignored while a mention or a reply to the bot's
/// message addresses it; `dmPolicy: "open"` answers a stranger's DM. (Catches:
/// `requireMention` ignored either way, a reply to the bot not counted as addressing it,
/// `open` treated as `allowlist`.)
#[tokio::test]
async fn telegram_mentions_replies_and_open_dms() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let mut gw = start(
        &fake,
        json!({"channels": {"telegram": {"enabled": true, "botToken": TOKEN, "apiUrl": tg.api_url(),
            "allowFrom": ["42"], "dmPolicy": "open", "pollTimeoutSeconds": 1,
            "groups": {"-5": {"requireMention": false}, "-6": {}}}}}),
    )
    .await;
    tg.user_message(Chat::group(-5, "chatty"), ann(), "no mention needed");
    tg.wait_for_sent(1, WAIT).await.unwrap();
    let strict = Chat::group(-6, "strict");
    tg.user_message(strict.clone(), ann(), "just chatting");
    tg.user_message(strict.clone(), ann(), "@switchboard_bot hello");
    let sent = tg.wait_for_sent(2, WAIT).await.unwrap();
    tg.reply_to_bot(strict, ann(), "and a reply", sent[1].message_id);
    tg.wait_for_sent(3, WAIT).await.unwrap();
    let eve = User::new(66, "eve", "Eve");
    tg.user_message(Chat::private(66), eve, "hi from a stranger");
    tg.wait_for_sent(4, WAIT).await.unwrap();
    wait_outbox_sent(&gw, 4).await;
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    assert_eq!(
        sent_texts(&tg),
        [
            "echo: no mention needed",
            "echo: hello",
            "echo: and a reply",
            "echo: hi from a stranger"
        ]
    );
    assert_eq!(
        fake.request_count(),
        4,
        "the unaddressed message reached no agent"
    );
    tg.assert_no_violations();
}

/// A guild's `channels` list limits it (a mention in another channel is ignored) and its
/// `requireMention: false` lets an unaddressed message through; a stranger's DM gets a
/// pairing code and, once `switchboard pairing approve discord CODE` ran, answers.
/// (Catches: the channel list ignored, `requireMention` ignored, Discord pairing not
/// wired to the CLI's approval.)
#[tokio::test]
async fn discord_channel_lists_require_mention_and_pairing() {
    const GUILD: u64 = 700;
    let fake = FakeModel::start().await.unwrap();
    let dc = FakeDiscord::start("discord-access-token").await.unwrap();
    dc.add_guild(GUILD, "team", &[701, 702]);
    let mut gw = start(
        &fake,
        json!({"channels": {"discord": {"enabled": true, "token": "discord-access-token",
            "apiUrl": dc.api_url(), "allowFrom": ["42"],
            "guilds": {GUILD.to_string(): {"channels": ["701"], "requireMention": false}}}}}),
    )
    .await;
    dc.wait_ready(1, WAIT).await.unwrap();
    let ann = DUser::new(42, "ann");
    dc.guild_message(GUILD, 702, ann.clone(), &format!("<@{BOT_ID}> elsewhere"));
    dc.guild_message(GUILD, 701, ann, "no mention here");
    let sent = dc.wait_for_sent(1, WAIT).await.unwrap();
    assert_eq!(
        (sent[0].channel_id, sent[0].content.as_str()),
        (701, "echo: no mention here")
    );

    let bob = DUser::new(77, "bob");
    dc.dm_message(bob.clone(), "let me in");
    let sent = dc.wait_for_sent(2, WAIT).await.unwrap();
    let code = sent[1]
        .content
        .split("Your pairing code is ")
        .nth(1)
        .and_then(|rest| rest.split('.').next())
        .unwrap_or_else(|| panic!("no pairing code in {:?}", sent[1].content))
        .to_string();
    let out = output(
        gw.command()
            .args(["pairing", "approve", "discord", &code, "--config"])
            .arg(gw.config_path()),
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dc.dm_message(bob, "now?");
    dc.wait_for_sent(3, WAIT).await.unwrap();
    wait_outbox_sent(&gw, 2).await;
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    let contents: Vec<String> = dc.sent_messages().into_iter().map(|m| m.content).collect();
    assert_eq!(contents.len(), 3, "{contents:?}");
    assert_eq!(contents[2], "echo: now?");
    assert_eq!(
        fake.request_count(),
        2,
        "only the allowed messages reached an agent"
    );
    dc.assert_no_violations();
}
