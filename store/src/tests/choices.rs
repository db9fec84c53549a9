//! A session's `/model` and `/think` choices: kept on its active row through a reopen,
//! cleared one at a time, gone with `/new`.

use super::*;
use crate::{Choice, SessionChoices};

/// Catches: a choice lost when the store is opened again (a restart), one choice
/// clearing the other, a choice made before the session existed lost, or `/new`
/// carrying a choice into the fresh session.
pub(super) async fn session_choices_outlive_a_reopen_and_end_with_the_session(db: Db) {
    let (keep, store) = file_store(db).await;
    let key = "agent:main:telegram:dm:42";
    assert_eq!(
        store.session_choices(key).await.unwrap(),
        SessionChoices::default()
    );
    store
        .set_session_choice(key, "main", Choice::Model, Some("p/m"))
        .await
        .unwrap();
    store
        .set_session_choice(key, "main", Choice::Thinking, Some("high"))
        .await
        .unwrap();
    drop(store);
    let store = reopen(&keep).await;
    let both = SessionChoices {
        model: Some("p/m".into()),
        thinking: Some("high".into()),
    };
    assert_eq!(store.session_choices(key).await.unwrap(), both);
    store
        .set_session_choice(key, "main", Choice::Thinking, None)
        .await
        .unwrap();
    assert_eq!(
        store.session_choices(key).await.unwrap(),
        SessionChoices {
            thinking: None,
            ..both
        }
    );
    store.archive_session(key).await.unwrap();
    assert_eq!(
        store.session_choices(key).await.unwrap(),
        SessionChoices::default()
    );
}
