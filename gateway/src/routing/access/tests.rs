//! The access rules, table-driven: each row is a config, a message, and the verdict.

use proptest::prelude::*;
use serde_json::{json, Value};
use switchboard_channels::{ChatKind, InboundMessage, Origin};

use super::*;
use crate::store::Store;

#[test]
fn allow_from_matches_ids_and_usernames() {
    let allow = vec!["42".to_string(), "@Ann".to_string()];
    assert!(listed(&allow, "42", None));
    assert!(listed(&allow, "7", Some("ann")));
    assert!(!listed(&allow, "7", Some("bob")));
    assert!(!listed(&allow, "7", None));
    assert!(
        !listed(&allow, "@Ann", None),
        "an id never matches an @name entry"
    );
    assert!(listed(&["*".to_string()], "7", None));
}

/// A message on `channel` from sender 42 (username `ann`, display name `@owner`).
fn msg(
    channel: &str,
    kind: ChatKind,
    chat: &str,
    guild: Option<&str>,
    addressed: bool,
) -> InboundMessage {
    InboundMessage {
        origin: Origin {
            channel: channel.into(),
            account: guild.map(str::to_string),
            chat_id: chat.into(),
            thread_id: None,
            kind,
            reply_handle: None,
        },
        sender_id: "42".into(),
        sender_name: Some("@owner".into()),
        sender_username: Some("ann".into()),
        text: "hi".into(),
        message_id: None,
        addressed,
        press: None,
        media: Vec::new(),
    }
}

fn config(channels: Value) -> Config {
    crate::config::parse_config(&json!({ "channels": channels }).to_string(), &|_| None)
        .unwrap_or_else(|e| panic!("{e:?}"))
}

async fn verdict(cfg: &Config, m: &InboundMessage) -> Verdict {
    let store = Store::open_in_memory()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    check(&store, cfg, m)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

const G: ChatKind = ChatKind::Group;
const D: ChatKind = ChatKind::Direct;

#[tokio::test]
async fn the_rules_table() {
    use Verdict::{Allow, Ignore};
    let tg = |c: Value| config(json!({ "telegram": c }));
    let dc = |c: Value| config(json!({ "discord": c }));
    let rows: Vec<(&str, Config, InboundMessage, Verdict)> = vec![
        // Groups are served only when listed (groupPolicy allowlist, the default).
        (
            "unlisted group",
            tg(json!({})),
            msg("telegram", G, "-100", None, true),
            Ignore("group not listed (groupPolicy allowlist)"),
        ),
        (
            "listed group",
            tg(json!({"groups": {"-100": {}}})),
            msg("telegram", G, "-100", None, true),
            Allow,
        ),
        (
            "\"*\" lists every group",
            tg(json!({"groups": {"*": {}}})),
            msg("telegram", G, "-7", None, true),
            Allow,
        ),
        (
            "open policy",
            tg(json!({"groupPolicy": "open"})),
            msg("telegram", G, "-7", None, true),
            Allow,
        ),
        (
            "disabled policy",
            tg(json!({"groupPolicy": "disabled", "groups": {"*": {}}})),
            msg("telegram", G, "-7", None, true),
            Ignore("group messages are disabled (groupPolicy)"),
        ),
        // Mentions.
        (
            "not addressed",
            tg(json!({"groups": {"-100": {}}})),
            msg("telegram", G, "-100", None, false),
            Ignore("group message not addressed to the bot"),
        ),
        (
            "requireMention off",
            tg(json!({"groups": {"-100": {"requireMention": false}}})),
            msg("telegram", G, "-100", None, false),
            Allow,
        ),
        (
            "a listed group's own setting beats \"*\"",
            tg(json!({"groups": {"*": {"requireMention": false}, "-100": {}}})),
            msg("telegram", G, "-100", None, false),
            Ignore("group message not addressed to the bot"),
        ),
        // Senders in groups: group list, else groupAllowFrom, else allowFrom.
        (
            "allowFrom applies to groups",
            tg(json!({"allowFrom": ["7"], "groups": {"*": {}}})),
            msg("telegram", G, "-1", None, true),
            Ignore("sender not allowed in this group"),
        ),
        (
            "groupAllowFrom beats allowFrom",
            tg(json!({"allowFrom": ["7"], "groupAllowFrom": ["42"], "groups": {"*": {}}})),
            msg("telegram", G, "-1", None, true),
            Allow,
        ),
        (
            "the group's allowFrom beats both",
            tg(json!({"groupAllowFrom": ["42"], "groups": {"-1": {"allowFrom": ["@bob"]}}})),
            msg("telegram", G, "-1", None, true),
            Ignore("sender not allowed in this group"),
        ),
        (
            "@username matches the username",
            tg(json!({"groups": {"-1": {"allowFrom": ["@Ann"]}}})),
            msg("telegram", G, "-1", None, true),
            Allow,
        ),
        (
            "@name never matches a display name",
            tg(json!({"allowFrom": ["@owner"], "groups": {"*": {}}})),
            msg("telegram", G, "-1", None, true),
            Ignore("sender not allowed in this group"),
        ),
        (
            "numeric ids",
            tg(json!({"allowFrom": [42], "groups": {"*": {}}})),
            msg("telegram", G, "-1", None, true),
            Allow,
        ),
        // Direct messages.
        (
            "listed DM",
            tg(json!({"allowFrom": [42], "dmPolicy": "allowlist"})),
            msg("telegram", D, "42", None, true),
            Allow,
        ),
        (
            "unlisted DM, allowlist",
            tg(json!({"allowFrom": [7], "dmPolicy": "allowlist"})),
            msg("telegram", D, "42", None, true),
            Ignore("sender not in allowFrom"),
        ),
        (
            "DM open",
            tg(json!({"dmPolicy": "open"})),
            msg("telegram", D, "42", None, true),
            Allow,
        ),
        (
            "DM disabled",
            tg(json!({"dmPolicy": "disabled"})),
            msg("telegram", D, "42", None, true),
            Ignore("direct messages are disabled (dmPolicy)"),
        ),
        (
            "DM \"*\"",
            tg(json!({"dmPolicy": "allowlist", "allowFrom": ["*"]})),
            msg("telegram", D, "42", None, true),
            Allow,
        ),
        // Discord: guilds and their channels.
        (
            "unlisted guild",
            dc(json!({})),
            msg("discord", G, "5", Some("9"), true),
            Ignore("group not listed (groupPolicy allowlist)"),
        ),
        (
            "listed guild",
            dc(json!({"guilds": {"9": {}}})),
            msg("discord", G, "5", Some("9"), true),
            Allow,
        ),
        (
            "guild channel not listed",
            dc(json!({"guilds": {"9": {"channels": ["6"]}}})),
            msg("discord", G, "5", Some("9"), true),
            Ignore("channel not in the guild's channels"),
        ),
        (
            "guild channel listed (as a number)",
            dc(json!({"guilds": {"9": {"channels": [5]}}})),
            msg("discord", G, "5", Some("9"), true),
            Allow,
        ),
        (
            "guild requireMention off",
            dc(json!({"guilds": {"*": {"requireMention": false}}})),
            msg("discord", G, "5", Some("9"), false),
            Allow,
        ),
        (
            "guild allowFrom",
            dc(json!({"guilds": {"9": {"allowFrom": ["1"]}}})),
            msg("discord", G, "5", Some("9"), true),
            Ignore("sender not allowed in this group"),
        ),
        // The web chat and the API have no allowlist.
        (
            "web chat",
            tg(json!({"dmPolicy": "disabled"})),
            msg("webchat", D, "main", None, true),
            Allow,
        ),
    ];
    for (name, cfg, m, want) in rows {
        assert_eq!(verdict(&cfg, &m).await, want, "{name}");
    }
}

#[tokio::test]
async fn an_unknown_dm_sender_gets_a_pairing_code_once() {
    let cfg = config(json!({"telegram": {}}));
    let store = Store::open_in_memory()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let m = msg("telegram", D, "42", None, true);
    let Verdict::Pairing(text) = check(&store, &cfg, &m)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
    else {
        panic!("first contact gets a code")
    };
    assert!(
        text.contains("switchboard pairing approve telegram "),
        "{text}"
    );
    assert_eq!(
        check(&store, &cfg, &m)
            .await
            .unwrap_or_else(|e| panic!("{e}")),
        Verdict::Ignore("sender is waiting for pairing approval")
    );
}

proptest! {
    #![proptest_config(crate::proptest_cases::config())]

    /// A sender with no username is let in by its id alone, whatever the list holds.
    #[test]
    fn without_a_username_only_the_id_matches(
        allow in proptest::collection::vec(".{0,12}", 0..6),
        id in ".{0,12}",
    ) {
        prop_assert_eq!(
            listed(&allow, &id, None),
            allow.iter().any(|a| !a.starts_with('@') && (a == "*" || *a == id))
        );
    }
}
