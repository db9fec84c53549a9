//! Tests of the Discord message conversion: examples, and properties over arbitrary
//! messages (deserialized by serenity from generated gateway JSON).

use proptest::prelude::*;
use serde_json::{json, Value};
use serenity::all::Message;

use super::*;

const ME: u64 = 4242;

fn me() -> BotInfo {
    BotInfo { user_id: ME }
}

fn user(id: u64, username: &str, global_name: Option<&str>, bot: bool) -> Value {
    json!({"id": id.to_string(), "username": username, "global_name": global_name,
           "discriminator": "0", "avatar": null, "bot": bot})
}

fn message_json(content: &str, author: Value, guild: Option<u64>, mentions: Vec<Value>) -> Value {
    let mut m = json!({
        "id": "1001", "channel_id": "2002", "author": author, "content": content,
        "timestamp": "2024-01-01T00:00:00.000000+00:00", "edited_timestamp": null,
        "tts": false, "mention_everyone": false, "mentions": mentions, "mention_roles": [],
        "attachments": [], "embeds": [], "pinned": false, "type": 0,
    });
    if let Some(g) = guild {
        m["guild_id"] = json!(g.to_string());
    }
    m
}

fn parse(json: &Value) -> Message {
    serde_json::from_str(&json.to_string()).expect("serenity reads the message")
}

/// Catches: the display name (`global_name`, anyone can set it) used as the username that
/// `@name` allowlist entries match, or the username shown where the display name belongs.
#[test]
fn the_username_is_the_platform_username_and_the_name_the_display_name() {
    let author = user(7, "ann_l", Some("@owner"), false);
    let m =
        message(&parse(&message_json("hi", author, None, vec![])), me(), &[]).expect("a message");
    assert_eq!(m.sender_username.as_deref(), Some("ann_l"));
    assert_eq!(m.sender_name.as_deref(), Some("@owner"));
    assert!(m.addressed, "a DM is addressed");
    let author = user(7, "ann_l", None, false);
    let m =
        message(&parse(&message_json("hi", author, None, vec![])), me(), &[]).expect("a message");
    assert_eq!(m.sender_name.as_deref(), Some("ann_l"));
}

#[test]
fn a_mention_addresses_the_bot_in_a_guild_and_is_removed() {
    let author = user(7, "ann", None, false);
    let mention = user(ME, "bot", None, true);
    let json = message_json(
        "<@4242> hello <@!4242>",
        author.clone(),
        Some(9),
        vec![mention],
    );
    let m = message(&parse(&json), me(), &[]).expect("a message");
    assert!(m.addressed);
    assert_eq!(m.text, "hello");
    assert_eq!(m.origin.account.as_deref(), Some("9"));
    let json = message_json("just chatting", author, Some(9), vec![]);
    assert!(
        !message(&parse(&json), me(), &[])
            .expect("a message")
            .addressed
    );
}

/// Content of arbitrary Unicode mixed with mention tags of the bot and of others.
fn content() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            4 => any::<char>().prop_map(String::from),
            1 => Just(" ".to_string()),
            2 => Just(format!("<@{ME}>")),
            1 => Just(format!("<@!{ME}>")),
            1 => Just("<@".to_string()),
            1 => Just(format!("{ME}>")),
            1 => Just("<@99>".to_string()),
            1 => Just("/stop".to_string()),
        ],
        0..24,
    )
    .prop_map(|parts| parts.concat())
}

fn arb_user() -> impl Strategy<Value = (Value, String, Option<String>, bool)> {
    (
        1u64..u64::MAX / 2,
        "[a-z0-9_.]{2,32}",
        proptest::option::of(".{0,32}"),
        prop::bool::weighted(0.1),
    )
        .prop_map(|(id, name, global, bot)| {
            (user(id, &name, global.as_deref(), bot), name, global, bot)
        })
}

proptest! {
    #![proptest_config(crate::proptest_cases::config())]

    /// Catches: a panic on any message, a DM or a mention of the bot not addressed, a
    /// mention tag of the bot left in the text, or the wrong name fields.
    #[test]
    fn any_message_converts_and_mentions_are_removed(
        content in content(),
        (author, name, global, bot) in arb_user(),
        guild in proptest::option::of(1u64..1_000_000),
        mentions_me in any::<bool>(),
        reply_to_me in any::<bool>(),
    ) {
        let mentions = if mentions_me { vec![user(ME, "bot", None, true)] } else { vec![] };
        let mut json = message_json(&content, author, guild, mentions);
        if reply_to_me {
            json["referenced_message"] = message_json("earlier", user(ME, "bot", None, true), guild, vec![]);
        }
        let out = message(&parse(&json), me(), &[]);
        if bot || content.trim().is_empty() {
            prop_assert!(out.is_none());
            return Ok(());
        }
        let Some(m) = out else {
            return Err(TestCaseError::fail("not converted"));
        };
        prop_assert_eq!(m.sender_username.as_deref(), Some(name.as_str()));
        prop_assert_eq!(m.sender_name, Some(global.unwrap_or(name)));
        prop_assert!(!m.text.contains(&format!("<@{ME}>")) && !m.text.contains(&format!("<@!{ME}>")), "{:?}", m.text);
        if guild.is_none() || mentions_me || reply_to_me {
            prop_assert!(m.addressed);
        }
        prop_assert_eq!(m.origin.kind == ChatKind::Direct, guild.is_none());
    }
}

/// A slash command in a DM, with string options in the order given.
fn command_json(name: &str, options: &[(&str, &str)]) -> serenity::all::CommandInteraction {
    let options: Vec<Value> = options
        .iter()
        .map(|(name, value)| json!({"name": name, "type": 3, "value": value}))
        .collect();
    let json = json!({
        "id": "3003", "application_id": "5005", "type": 2, "token": "t", "version": 1,
        "channel_id": "2002", "channel": {"id": "2002", "type": 1},
        "app_permissions": "0", "locale": "en-US", "entitlements": [],
        "authorizing_integration_owners": {"0": "7"}, "context": 1,
        "attachment_size_limit": 10_485_760,
        "user": user(7, "ann", None, false),
        "data": {"id": "4004", "name": name, "type": 1, "options": options},
    });
    serde_json::from_value(json).expect("serenity reads the interaction")
}

/// Catches: the option names of one command (`action`, `target`, `message`) hard-coded in
/// the adapter: a menu command with other options lost them, and options were read in
/// a fixed order instead of the menu's.
#[test]
fn a_command_reads_its_options_in_the_menus_order() {
    use crate::{MenuCommand, MenuOption};
    let menu = vec![MenuCommand::new("remind", "Remind me")
        .option(MenuOption::new("when", "When").required())
        .option(MenuOption::new("what", "What"))];
    let cmd = command_json("remind", &[("what", "tea"), ("when", "5m")]);
    let m = command(&cmd, "interaction:3003".into(), &menu);
    assert_eq!(m.text, "/remind 5m tea");
    assert_eq!(m.origin.reply_handle.as_deref(), Some("interaction:3003"));
    // A command the menu does not list keeps Discord's order.
    let cmd = command_json("other", &[("b", "2"), ("a", "1")]);
    assert_eq!(command(&cmd, "h".into(), &menu).text, "/other 2 1");
}

/// Catches: any guild message starting with `/` taken as addressed to the bot (a path
/// pasted in a channel reached the agent), and a typed menu command missed.
#[test]
fn only_menu_commands_address_the_bot_in_a_guild() {
    let menu = vec![MenuCommand::new("status", "Status")];
    let author = user(7, "ann", None, false);
    let typed = |text: &str| {
        message(
            &parse(&message_json(text, author.clone(), Some(1), vec![])),
            me(),
            &menu,
        )
        .expect("a message")
        .addressed
    };
    assert!(typed("/status"));
    assert!(!typed("/usr/bin/python3 crashed, why?"));
    assert!(!typed("just chatting"));
}

proptest! {
    #![proptest_config(crate::proptest_cases::config())]

    /// Catches: an attachment without text dropped, one lost or invented, its kind not
    /// following its type, its (untrusted) name or size changed on the way.
    #[test]
    fn attachments_convert_with_or_without_text(
        files in proptest::collection::vec((any::<String>(), proptest::option::of("(image|audio|video|application)/[a-z]{1,8}"), any::<u32>()), 1..12),
        content in proptest::option::of("[a-z ]{1,20}"),
    ) {
        let mut json = message_json(content.as_deref().unwrap_or(""), user(7, "ann", None, false), None, vec![]);
        json["attachments"] = Value::Array(files.iter().enumerate().map(|(i, (name, mime, size))| json!({
            "id": (9000 + i).to_string(), "filename": name, "size": size,
            "url": format!("https://cdn.discordapp.com/attachments/1/{i}/x"),
            "proxy_url": format!("https://media.discordapp.net/attachments/1/{i}/x"),
            "content_type": mime,
        })).collect());
        let m = message(&parse(&json), me(), &[]);
        let Some(m) = m else {
            return Err(TestCaseError::fail("not converted"));
        };
        prop_assert_eq!(m.media.len(), files.len().min(crate::media::MAX_MEDIA_PER_MESSAGE));
        for (r, (name, mime, size)) in m.media.iter().zip(&files) {
            prop_assert_eq!(r.name.as_deref(), Some(name.as_str()));
            prop_assert_eq!(r.size, Some(u64::from(*size)));
            let kind = match mime.as_deref().map(|m| m.split('/').next().unwrap_or("")) {
                Some("image") => crate::MediaKind::Photo,
                Some("audio") => crate::MediaKind::Audio,
                Some("video") => crate::MediaKind::Video,
                _ => crate::MediaKind::Document,
            };
            prop_assert_eq!(r.kind, kind);
        }
    }
}
