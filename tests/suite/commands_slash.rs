//! Slash commands against ordinary text starting with `/`, through Telegram and Discord:
//! only the bot's own commands are answered as commands, the rest reaches the agent, and
//! both platforms' menus list every command of the gateway's one command table.

use serde_json::json;
use switchboard_testkit::fake_discord::{DUser, FakeDiscord};
use switchboard_testkit::fake_model::{FakeModel, Step};
use switchboard_testkit::fake_telegram::{Chat, FakeTelegram};

use crate::common::{start, WAIT};
use crate::telegram::{ann, gateway, TOKEN};

/// Every command the gateway's table lists, in its order.
const COMMANDS: [&str; 11] = [
    "help",
    "status",
    "usage",
    "new",
    "stop",
    "subagents",
    "approve",
    "cron",
    "compact",
    "model",
    "think",
];

/// Catches: "/usr/bin/python3 crashed, why?" answered "Unknown command" instead of
/// reaching the agent; `/cmd@otherbot` in a group taken for ours; a known command with a
/// bad argument no longer getting its usage line; `/approve` and `/cron` missing from
/// Telegram's menu.
#[tokio::test]
async fn telegram_slash_text_that_is_no_command_reaches_the_agent() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let _gw = gateway(&fake, &tg, json!({})).await;
    tg.wait_for_call("getUpdates", 1, WAIT).await.unwrap();
    assert_eq!(
        tg.commands()
            .iter()
            .map(|c| c.0.as_str())
            .collect::<Vec<_>>(),
        COMMANDS
    );

    tg.user_message(Chat::private(42), ann(), "/usr/bin/python3 crashed, why?");
    let sent = tg.wait_for_sent(1, WAIT).await.unwrap();
    assert_eq!(sent[0].plain_text, "echo: /usr/bin/python3 crashed, why?");
    let body = fake.requests()[0].body.to_string();
    assert!(body.contains("/usr/bin/python3 crashed, why?"), "{body}");

    tg.user_message(Chat::private(42), ann(), "/stop now");
    let sent = tg.wait_for_sent(2, WAIT).await.unwrap();
    assert_eq!(sent[1].plain_text, "Usage: /stop (takes no arguments)");

    // In a group that asks for mentions: another bot's command and a path are not
    // addressed to us (dropped), our own `/cmd@bot` is a command.
    let group = Chat::group(-77, "team");
    tg.user_message(group.clone(), ann(), "/status@other_bot");
    tg.user_message(group.clone(), ann(), "/usr/lib is full");
    tg.user_message(group, ann(), "/status@switchboard_bot");
    let sent = tg.wait_for_sent(3, WAIT).await.unwrap();
    assert!(
        sent[2].plain_text.contains("\nModel: fake/scripted\n"),
        "{}",
        sent[2].plain_text
    );
    assert_eq!(
        fake.request_count(),
        1,
        "only the DM's message reached the model"
    );
    tg.assert_no_violations();
}

/// Catches: Discord's application commands missing `/approve` and `/cron` (or their
/// options), and a guild message that starts with `/` but names no command taken as
/// addressed to the bot.
#[tokio::test]
async fn discord_registers_every_command_and_reads_slash_text_as_text() {
    const GUILD: u64 = 700;
    const GENERAL: u64 = 701;
    let fake = FakeModel::start().await.unwrap();
    let dc = FakeDiscord::start("discord-test-token").await.unwrap();
    dc.add_guild(GUILD, "team", &[GENERAL]);
    let _gw = start(
        &fake,
        json!({"channels": {"discord": {"enabled": true, "token": "discord-test-token",
            "apiUrl": dc.api_url(), "allowFrom": ["42"], "guilds": {GUILD.to_string(): {}}}}}),
    )
    .await;
    dc.wait_ready(1, WAIT).await.unwrap();
    dc.wait_for_call("bulkOverwriteGlobalCommands", 1, WAIT)
        .await
        .unwrap();
    let registered = dc.registered_commands();
    assert_eq!(
        registered
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>(),
        COMMANDS
    );
    let options = |name: &str| {
        registered
            .iter()
            .find(|c| c.name == name)
            .map(|c| c.option_names())
            .unwrap_or_default()
    };
    assert_eq!(options("approve"), ["id", "decision"]);
    assert_eq!(options("cron"), ["action", "id"]);

    let ann = DUser::new(42, "ann");
    dc.guild_message(GUILD, GENERAL, ann.clone(), "/usr/lib is full");
    let (dm, _) = dc.dm_message(ann, "/usr/bin/python3 crashed, why?");
    let sent = dc.wait_for_sent(1, WAIT).await.unwrap();
    assert_eq!(
        (sent[0].channel_id, sent[0].content.as_str()),
        (dm, "echo: /usr/bin/python3 crashed, why?")
    );
    assert_eq!(
        fake.request_count(),
        1,
        "the guild message was not addressed"
    );
    dc.assert_no_violations();
}

/// Catches: a long reply with a code block split on Telegram without keeping the block (a
/// part that ends inside it left the rest as plain text, its closing fence opening a new
/// block), a part Telegram refuses as unbalanced HTML or over 4096 characters, and text
/// lost at a cut.
#[tokio::test]
async fn telegram_keeps_a_long_code_block_whole_across_parts() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let _gw = gateway(&fake, &tg, json!({})).await;
    let code: String = (0..700)
        .map(|i| format!("    if a[{i}] < b && c > 0 {{ go(\"{i}\"); }}\n"))
        .collect();
    let reply = format!("**Here** is the fix:\n\n```rust\n{code}```\n\nThat is *all*.");
    fake.push_for("show me", Step::text(&reply));
    tg.user_message(Chat::private(42), ann(), "show me");
    tg.wait_for_sent(2, WAIT).await.unwrap();
    // The whole reply has arrived once its last line has.
    let sent = loop {
        if sent_all(&tg) {
            break tg.sent_messages();
        }
        tg.wait_for_sent(tg.sent_messages().len() + 1, WAIT)
            .await
            .unwrap();
    };
    assert!(sent.len() >= 6, "{} parts", sent.len());
    for (i, part) in sent.iter().enumerate() {
        assert_eq!(part.parse_mode.as_deref(), Some("HTML"), "part {i}");
        assert!(part.plain_text.encode_utf16().count() <= 4096);
        if i > 0 && i + 1 < sent.len() {
            assert!(
                part.text.starts_with("<pre><code class=\"language-rust\">")
                    && part.text.ends_with("</code></pre>"),
                "part {i}: {}",
                part.text
            );
        }
    }
    assert!(sent[0]
        .text
        .starts_with("<b>Here</b> is the fix:\n\n<pre><code"));
    assert!(sent.last().unwrap().text.ends_with("That is <i>all</i>."));
    // The parts' texts end to end are the whole text, less the line breaks each part
    // ended with (the cut).
    let squeeze = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let joined: Vec<String> = sent.iter().map(|m| m.plain_text.clone()).collect();
    assert_eq!(
        squeeze(&joined.join("\n")),
        squeeze(&format!(
            "Here is the fix:\n\n{}\n\nThat is all.",
            code.trim_end()
        ))
    );
    for part in &joined {
        assert!(!part.ends_with('\n'), "{part:?}");
    }
    tg.assert_no_violations();
}

fn sent_all(tg: &FakeTelegram) -> bool {
    tg.sent_messages()
        .last()
        .is_some_and(|m| m.plain_text.ends_with("That is all."))
}
