//! Session keys: the stored forms, and (proptest) that writing a key and parsing it back
//! gives the same key, that a parsed string is written back unchanged, and that parsing
//! never panics.

use proptest::prelude::*;

use super::*;

/// Catches: a kind written in a new form (stored sessions would no longer match), or a
/// stored form parsed as another kind (a sub-agent's session on the main lane).
#[test]
fn the_stored_forms_parse_to_their_kinds() {
    let cases = [
        ("agent:main:main", KeyKind::Main),
        ("agent:main:dm:42", KeyKind::Dm { peer: "42".into() }),
        (
            "agent:main:dm:webchat:main",
            KeyKind::Dm {
                peer: "webchat:main".into(),
            },
        ),
        (
            "agent:main:telegram:dm:42",
            KeyKind::ChannelDm {
                channel: "telegram".into(),
                peer: "42".into(),
            },
        ),
        (
            "agent:ops:telegram:group:-1001:thread:7",
            KeyKind::Group {
                channel: "telegram".into(),
                chat: "-1001".into(),
                thread: Some("7".into()),
            },
        ),
        (
            "agent:ops:discord:group:55",
            KeyKind::Group {
                channel: "discord".into(),
                chat: "55".into(),
                thread: None,
            },
        ),
        (
            "agent:main:subagent:5a1d0c7e-0000-4000-8000-000000000001",
            KeyKind::Subagent {
                id: "5a1d0c7e-0000-4000-8000-000000000001".into(),
            },
        ),
        (
            "agent:main:cron:daily",
            KeyKind::Cron {
                job: "daily".into(),
            },
        ),
        (
            "agent:main:api-x",
            KeyKind::Other {
                rest: "api-x".into(),
            },
        ),
        (
            "agent:main:x:subagent:1",
            KeyKind::Other {
                rest: "x:subagent:1".into(),
            },
        ),
    ];
    for (s, kind) in cases {
        let key = SessionKey::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        assert_eq!(key.kind(), &kind, "{s}");
        assert_eq!(key.to_string(), s);
    }
    assert!(SessionKey::parse("agent:main:main").is_ok_and(|k| k.is_main_of("main")));
    assert!(SessionKey::parse("agent:main:cron:daily").is_ok_and(|k| k.cron_job() == Some("daily")));
}

/// Catches: a string that is not a key accepted (an API session for no agent), or an
/// error that does not say what a key looks like.
#[test]
fn what_is_not_a_key_is_refused_with_its_form() {
    for s in [
        "",
        "agent",
        "agent:",
        "agent:main",
        "agent:main:",
        "agent::main",
        "x:main:main",
    ] {
        let e = SessionKey::parse(s)
            .err()
            .unwrap_or_else(|| panic!("{s:?} accepted"));
        assert!(e.to_string().contains("agent:<agentId>:<rest>"), "{e}");
    }
    let long = format!("x{}", "y".repeat(10_000));
    let e = SessionKey::parse(&long)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.len() < 200, "the error quotes a bounded prefix");
}

fn part() -> impl Strategy<Value = String> {
    "[a-z0-9_-]{1,12}"
}

/// A channel id: not one of the words that start other kinds.
fn channel() -> impl Strategy<Value = String> {
    "[a-z]{1,10}".prop_filter("a kind's word", |c| {
        !["dm", "subagent", "cron"].contains(&c.as_str())
    })
}

/// A chat or thread id: may hold `:`, never the `:thread:` separator.
fn chat() -> impl Strategy<Value = String> {
    "[-0-9a-z:@.]{1,16}".prop_filter("the thread separator", |c| !c.contains("thread"))
}

fn kind() -> impl Strategy<Value = KeyKind> {
    prop_oneof![
        Just(KeyKind::Main),
        any::<String>()
            .prop_filter("empty", |p| !p.is_empty())
            .prop_map(|peer| KeyKind::Dm { peer }),
        (
            channel(),
            any::<String>().prop_filter("empty", |p| !p.is_empty())
        )
            .prop_map(|(channel, peer)| KeyKind::ChannelDm { channel, peer }),
        (channel(), chat(), proptest::option::of(chat())).prop_map(|(channel, chat, thread)| {
            KeyKind::Group {
                channel,
                chat,
                thread,
            }
        }),
        chat().prop_map(|id| KeyKind::Subagent { id }),
        chat().prop_map(|job| KeyKind::Cron { job }),
    ]
}

proptest! {
    /// Catches: a kind whose written form parses as another kind or other parts.
    #[test]
    fn a_written_key_parses_back_to_itself(agent in part(), kind in kind()) {
        let key = SessionKey::new(agent, kind);
        prop_assert_eq!(SessionKey::parse(&key.to_string()), Ok(key));
    }

    /// Catches: a panic on hostile input, or a stored key written back differently.
    #[test]
    fn parsing_never_panics_and_keeps_the_string(s in any::<String>()) {
        if let Ok(key) = SessionKey::parse(&s) {
            prop_assert_eq!(key.to_string(), s);
        }
    }

    /// Catches: the same on strings shaped like keys.
    #[test]
    fn key_shaped_strings_keep_their_form(s in "agent:[a-z:]{0,4}(:(main|dm|cron|subagent|group|thread|x)){0,6}(:[a-z0-9]{0,3}){0,3}") {
        if let Ok(key) = SessionKey::parse(&s) {
            prop_assert_eq!(key.to_string(), s);
        }
    }
}

#[test]
fn a_cron_job_s_turn_is_known_by_its_sender_or_session() {
    assert_eq!(
        cron_job_of("agent:main:main", Some("cron:daily")),
        Some("daily".into())
    );
    assert_eq!(
        cron_job_of("agent:main:cron:daily", None),
        Some("daily".into())
    );
    assert_eq!(
        cron_job_of("agent:main:cron:daily", Some("webchat:u")),
        None
    );
    assert_eq!(cron_job_of("agent:main:main", None), None);
    assert_eq!(cron_job_of("agent:main:main", Some("webchat:u")), None);
}
