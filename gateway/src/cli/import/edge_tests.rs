//! Tests of the OpenClaw import on small configs written inline: `$include` limits,
//! odd keys, multi-account tokens, tool profiles, access groups.
#![allow(clippy::unwrap_used)]

use serde_json::{json, Value};

use super::source::{self, Outcome};
use super::tests::outcome;

/// Catches: an `$include` that reads outside the config's folder, or loops forever.
#[tokio::test]
async fn includes_stay_inside_and_do_not_loop() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("openclaw.json");
    std::fs::write(&main, r#"{ agents: { $include: "../outside.json5" } }"#).unwrap();
    let err = source::read(&main).await.err().unwrap().to_string();
    assert!(
        err.contains("must stay inside the config's folder"),
        "{err}"
    );
    std::fs::write(&main, r#"{ a: { $include: "./b.json5" } }"#).unwrap();
    std::fs::write(
        dir.path().join("b.json5"),
        r#"{ x: 1, $include: "./openclaw.json" }"#,
    )
    .unwrap();
    let err = source::read(&main).await.err().unwrap().to_string();
    assert!(err.contains("circular"), "{err}");
    std::fs::write(dir.path().join("b.json5"), r#"{ x: 1, y: { z: 2 } }"#).unwrap();
    std::fs::write(&main, r#"{ a: { $include: ["./b.json5"], y: { w: 3 } } }"#).unwrap();
    let src = source::read(&main).await.unwrap();
    assert_eq!(
        src.value,
        json!({"a": {"x": 1, "y": {"z": 2, "w": 3}}}),
        "siblings merged over the file"
    );
}

/// Catches: a key with a line separator (U+2028/U+2029, `\r`: line ends to JSON5) ending
/// the header comment that lists it, so the rest of the line became config text.
#[tokio::test]
async fn odd_keys_stay_inside_the_header_comment() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("openclaw.json");
    // Escaped in the input (the JSON5 parser takes them raw only in comments).
    let input = r#"{ channels: { telegram: { groups: { "x\u2028gateway: {}\u2029y\rz": { enabled: false } } } } }"#;
    std::fs::write(&main, input).unwrap();
    let imported = super::import_openclaw(&main, None).await.unwrap();
    let placeholder = |n: &str| Some(format!("placeholder-{n}"));
    crate::config::parse_config(&imported.text, &placeholder)
        .unwrap_or_else(|e| panic!("{e:?}\n{}", imported.text));
    for line in imported
        .text
        .split(['\n', '\r', '\u{2028}', '\u{2029}'])
        .take_while(|l| !l.starts_with('{'))
    {
        assert!(
            line.starts_with("//"),
            "a header line outside a comment: {line:?}"
        );
    }
}

/// Multi-account channels: the default account's token is the bot's, the other accounts
/// are listed as not carried. (Catches: a Discord config in OpenClaw's `accounts` form
/// imported without its token.)
#[tokio::test]
async fn the_default_account_token_is_used() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("openclaw.json");
    let input = r#"{ channels: {
        discord: { accounts: { default: { token: "${DISCORD_MAIN}" }, alerts: { token: "x" } } },
        telegram: { accounts: { default: { botToken: "1:A" } } },
    } }"#;
    std::fs::write(&main, input).unwrap();
    let imported = super::import_openclaw(&main, None).await.unwrap();
    let placeholder = |n: &str| Some(format!("placeholder-{n}"));
    crate::config::parse_config(&imported.text, &placeholder)
        .unwrap_or_else(|e| panic!("{e:?}\n{}", imported.text));
    let c: Value = json5::from_str(&imported.text).unwrap();
    assert_eq!(c["channels"]["discord"]["token"], "${DISCORD_MAIN}");
    assert_eq!(c["channels"]["telegram"]["botToken"], "1:A");
    let rows = &imported.rows;
    assert!(matches!(
        outcome(rows, "channels.discord.accounts.default.token"),
        Outcome::Adapted { .. }
    ));
    assert!(matches!(
        outcome(rows, "channels.discord.accounts"),
        Outcome::NotCarried { .. }
    ));
}

/// OpenClaw's `tools.allow` adds to the profile's base list (its docs: "messaging-only by
/// default, allow Slack + Discord tools too"). (Catches: the profile's tools lost when
/// `tools.allow` is also set.)
#[tokio::test]
async fn tools_allow_adds_to_the_profile() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("openclaw.json");
    std::fs::write(&main, r#"{ tools: { profile: "messaging", allow: ["web_fetch", "message"], deny: ["group:runtime"] } }"#).unwrap();
    let imported = super::import_openclaw(&main, None).await.unwrap();
    let c: Value = json5::from_str(&imported.text).unwrap();
    assert_eq!(
        c["tools"]["allow"],
        json!([
            "message",
            "sessions_list",
            "sessions_history",
            "sessions_send",
            "session_status",
            "web_fetch"
        ])
    );
    assert_eq!(c["tools"]["deny"], json!(["exec", "process"]));
    assert!(matches!(
        outcome(&imported.rows, "tools.profile"),
        Outcome::Adapted { .. }
    ));
}

/// OpenClaw's access groups (`accessGroup:<name>` in an allowlist) are expanded into the
/// members listed for that channel and for every channel (`"*"`). (Catches: the reference
/// carried as a literal sender name — nobody matches it, and the group's members are
/// locked out — or a Discord one turned into `@accessGroup:…`.)
#[tokio::test]
async fn access_groups_are_expanded_into_the_allowlists() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("openclaw.json");
    let input = r#"{
        accessGroups: { operators: { type: "message.senders", members: {
            "*": ["111"], discord: ["discord:222"], telegram: ["333"], whatsapp: ["+1555"] } } },
        channels: {
            telegram: { botToken: "1:A", dmPolicy: "allowlist", allowFrom: ["accessGroup:operators", "444"] },
            discord: { token: "t", dmPolicy: "allowlist", allowFrom: ["accessGroup:operators"] },
        },
    }"#;
    std::fs::write(&main, input).unwrap();
    let imported = super::import_openclaw(&main, None).await.unwrap();
    let c: Value = json5::from_str(&imported.text).unwrap();
    assert_eq!(
        c["channels"]["telegram"]["allowFrom"],
        json!(["111", "333", "444"])
    );
    assert_eq!(c["channels"]["discord"]["allowFrom"], json!(["111", "222"]));
    assert!(matches!(
        outcome(&imported.rows, "accessGroups"),
        Outcome::Adapted { .. }
    ));
}

/// An allowlist that admits nobody in OpenClaw (it names only an access group that is not
/// defined, or has no members here) stops the import: Switchboard reads an empty list as
/// "everyone", so writing it would open the bot. (Catches: `groupAllowFrom: []` written
/// for `["accessGroup:typo"]`.)
#[tokio::test]
async fn an_allowlist_that_admits_nobody_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("openclaw.json");
    let input =
        r#"{ channels: { telegram: { botToken: "1:A", groupAllowFrom: ["accessGroup:typo"] } } }"#;
    std::fs::write(&main, input).unwrap();
    let err = super::import_openclaw(&main, None)
        .await
        .err()
        .expect("refused")
        .to_string();
    assert!(
        err.contains("channels.telegram.groupAllowFrom") && err.contains("accessGroup:typo"),
        "{err}"
    );
}

/// A Discord guild restricted by roles only is left out (not served): Switchboard has no
/// role allowlists, and the guild without them would admit every member. With users as
/// well, the users are carried and the roles listed as not carried. (Catches: a
/// roles-only guild carried open to everyone in it.)
#[tokio::test]
async fn a_guild_restricted_by_roles_only_is_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("openclaw.json");
    let input = r#"{ channels: { discord: { token: "t", guilds: {
        "100": { roles: ["900"], requireMention: false },
        "200": { roles: ["900"], users: ["42"] },
    } } } }"#;
    std::fs::write(&main, input).unwrap();
    let imported = super::import_openclaw(&main, None).await.unwrap();
    let c: Value = json5::from_str(&imported.text).unwrap();
    assert_eq!(
        c["channels"]["discord"]["guilds"],
        json!({"200": {"allowFrom": ["42"]}})
    );
    assert!(matches!(
        outcome(&imported.rows, "channels.discord.guilds.100"),
        Outcome::NotCarried { .. }
    ));
    assert!(matches!(
        outcome(&imported.rows, "channels.discord.guilds.200.roles"),
        Outcome::NotCarried { .. }
    ));
}

/// Under `groupPolicy: "open"` Switchboard serves every group not listed, so a group
/// OpenClaw kept out (`enabled: false`) or a guild the import has to leave out (roles
/// only, channels by name) would be served to everyone: the import stops instead.
/// Under "allowlist", leaving them out keeps them out. (Catches: a disabled group served
/// after the import.)
#[tokio::test]
async fn groups_left_out_under_an_open_policy_stop_the_import() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("openclaw.json");
    for (input, refused) in [
        (
            r#"{ channels: { telegram: { botToken: "1:A", groupPolicy: "open", groups: { "-100": { enabled: false } } } } }"#,
            Some("channels.telegram.groups.-100"),
        ),
        (
            r#"{ channels: { defaults: { groupPolicy: "open" }, discord: { token: "t", guilds: { "100": { roles: ["9"] } } } } }"#,
            Some("channels.discord.guilds.100"),
        ),
        (
            r#"{ channels: { telegram: { botToken: "1:A", groups: { "-100": { enabled: false } } } } }"#,
            None,
        ),
    ] {
        std::fs::write(&main, input).unwrap();
        match (super::import_openclaw(&main, None).await, refused) {
            (Err(e), Some(key)) => assert!(e.to_string().contains(key), "{e}"),
            (Ok(_), None) => {}
            (Err(e), None) => panic!("{input}: {e}"),
            (Ok(_), Some(key)) => panic!("{input}: imported with {key} left out"),
        }
    }
}

/// Senders approved by pairing in OpenClaw (`credentials/<channel>-allowFrom.json` next
/// to the config) get a row naming them: Switchboard keeps its own pairings, so the
/// operator sees who will have to pair again. (Catches: approved senders lost without a
/// word.)
#[tokio::test]
async fn senders_approved_by_pairing_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("openclaw.json");
    std::fs::write(
        &main,
        r#"{ channels: { telegram: { botToken: "1:A", dmPolicy: "pairing" } } }"#,
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("credentials")).unwrap();
    std::fs::write(
        dir.path().join("credentials/telegram-allowFrom.json"),
        r#"{ "version": 1, "allowFrom": ["123", "456"] }"#,
    )
    .unwrap();
    let imported = super::import_openclaw(&main, None).await.unwrap();
    match outcome(&imported.rows, "credentials/telegram-allowFrom.json") {
        Outcome::NotCarried { why } => assert!(why.contains("123, 456"), "{why}"),
        other => panic!("{other:?}"),
    }
}
