//! The message edit route: Discord's answers for a bot message, an unknown or deleted one,
//! another author's, and content over the limit.

use serde_json::json;

use super::rest::call;
use super::{alice, start};

#[tokio::test]
async fn edits_follow_discords_rules_and_are_recorded() {
    let discord = start().await;
    discord.add_guild(100, "guild", &[200, 201]);
    let (_, _, posted) = call(
        &discord,
        "POST",
        "channels/200/messages",
        Some(json!({"content": "first"})),
    )
    .await;
    let id = posted["id"].as_str().unwrap().to_string();

    let (status, _, body) = call(
        &discord,
        "PATCH",
        &format!("channels/200/messages/{id}"),
        Some(json!({"content": "second"})),
    )
    .await;
    assert_eq!((status, &body["content"]), (200, &json!("second")));
    let edits = discord.edits();
    assert_eq!(edits.len(), 1);
    assert_eq!(
        (
            edits[0].channel_id,
            edits[0].message_id.to_string(),
            edits[0].content.as_str()
        ),
        (200, id.clone(), "second")
    );

    // The same id in another channel, or an id never posted: unknown.
    for path in [
        format!("channels/201/messages/{id}"),
        "channels/200/messages/999".into(),
    ] {
        let (status, _, body) = call(&discord, "PATCH", &path, Some(json!({"content": "x"}))).await;
        assert_eq!((status, &body["code"]), (404, &json!(10008)), "{path}");
    }
    // Another author's message.
    let user_message = discord.guild_message(100, 200, alice(), "mine");
    let (status, _, body) = call(
        &discord,
        "PATCH",
        &format!("channels/200/messages/{user_message}"),
        Some(json!({"content": "x"})),
    )
    .await;
    assert_eq!((status, &body["code"]), (403, &json!(50005)));
    discord.assert_no_violations();

    // Content over 2000 characters: 400, and a violation.
    let (status, _, _) = call(
        &discord,
        "PATCH",
        &format!("channels/200/messages/{id}"),
        Some(json!({"content": "x".repeat(2001)})),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(discord.violations().len(), 1);

    // Deleted by a user: unknown from then on.
    discord.delete_message(id.parse().unwrap());
    let (status, _, body) = call(
        &discord,
        "PATCH",
        &format!("channels/200/messages/{id}"),
        Some(json!({"content": "third"})),
    )
    .await;
    assert_eq!((status, &body["code"]), (404, &json!(10008)));
    assert_eq!(discord.edits().len(), 1);
}
