//! The `models.rs` shapes and checks: an agent's model chain, provider headers,
//! `maxTokens`, `outageCooldown`, each error at its key path.

use serde_json::json;

use super::super::validate::test_errors;
use super::*;

/// Catches: the object form of `model` refused or read wrong, and a bad shape accepted.
#[test]
fn an_agent_model_is_a_string_or_a_chain() {
    let cfg: Config = serde_json::from_value(json!({
        "agents": {
            "defaults": {"model": {"primary": "a/x", "fallbacks": ["b/y"]}},
            "list": [{"id": "main", "model": "c/z"}],
        }
    }))
    .expect("parses");
    let d = cfg.agents.defaults.model.as_ref().expect("set");
    assert_eq!(
        (d.primary(), d.fallbacks()),
        ("a/x", &["b/y".to_string()][..])
    );
    let m = cfg.agents.list[0].model.as_ref().expect("set");
    assert_eq!((m.primary(), m.fallbacks()), ("c/z", &[][..]));
    // It prints back as it was written.
    assert_eq!(
        serde_json::to_value(&cfg.agents.defaults.model).expect("serializes"),
        json!({"primary": "a/x", "fallbacks": ["b/y"]})
    );
}

/// Catches: a new shape's error without its key path, a header that could smuggle a
/// line (CR/LF) or a framing header accepted, a secret value quoted in an error, or a
/// fallback naming an unknown provider accepted.
#[test]
fn bad_chains_headers_and_limits_are_refused_at_their_key() {
    let errors = test_errors(json!({
        "models": {
            "outageCooldown": "2h",
            "providers": {
                "p": {
                    "api": "openai-chat",
                    "headers": {
                        "api-key": "fine",
                        "X-Evil": "v\r\nHost: elsewhere",
                        "bad name": "v",
                        "Content-Length": "1",
                        "API-KEY": "twice",
                    },
                    "models": [{"id": "m", "maxTokens": 0}, {"id": "n", "maxTokens": 2_000_000}],
                },
            },
        },
        "agents": {
            "defaults": {"model": {"primary": "p/m", "fallbacks": ["q/x", "p/m", "p/n", "p/n"]}},
            "list": [
                {"id": "a", "model": {"primary": "zz/m"}},
                {"id": "b", "model": {"primary": "p/m", "fallback": []}},
                {"id": "c", "model": 5},
            ],
        },
    }));
    assert_eq!(
        errors,
        vec![
            "agents.defaults.model.fallbacks[0]: unknown provider \"q\" in model \"q/x\"; known providers (models.providers): p",
            "agents.defaults.model.fallbacks[1]: \"p/m\" is already in this model's chain",
            "agents.defaults.model.fallbacks[3]: \"p/n\" is already in this model's chain",
            "agents.list[0].model.primary: unknown provider \"zz\" in model \"zz/m\"; known providers (models.providers): p",
            "agents.list[1].model: model: unknown field `fallback`, expected `primary` or `fallbacks`",
            "agents.list[2].model: model must be \"provider/model\" or { primary: \"provider/model\", fallbacks: [\"provider/model\", …] }",
            "models.outageCooldown: must be at most 1h, got 2h",
            "models.providers.p.headers.Content-Length: \"Content-Length\" is set by the HTTP client and cannot be configured",
            "models.providers.p.headers.X-Evil: header value contains a control character (CR, LF, NUL, …), which could end the header line",
            "models.providers.p.headers.api-key: header \"api-key\" is also given as \"API-KEY\"",
            "models.providers.p.headers[\"bad name\"]: header name \"bad name\" must be 1 to 128 letters, digits or !#$%&'*+-.^_`|~",
            "models.providers.p.models[0].maxTokens: must be between 1 and 1000000, got 0",
            "models.providers.p.models[1].maxTokens: must be between 1 and 1000000, got 2000000",
        ]
    );
    assert!(!errors
        .iter()
        .any(|e| e.contains("elsewhere") || e.contains("twice")));
}

/// Catches: a value with a line break or NUL taken as a header value, or a legal one
/// (with a tab, or non-ASCII) refused.
#[test]
fn header_values_refuse_control_characters() {
    for bad in ["a\rb", "a\nb", "a\0b", "\u{7f}", "\u{85}"] {
        assert!(header_value_problem(bad).is_some(), "{bad:?}");
    }
    for good in ["Bearer abc", "a\tb", "", "ünïcode"] {
        assert_eq!(header_value_problem(good), None, "{good:?}");
    }
    assert!(header_value_problem(&"x".repeat(MAX_HEADER_VALUE + 1)).is_some());
    assert_eq!(header_name_problem("x-api-key"), None);
    assert!(header_name_problem("x:y").is_some());
    assert!(header_name_problem("").is_some());
}

use proptest::prelude::*;

proptest! {
    #![proptest_config(crate::proptest_cases::config())]

    /// Catches: validation accepting a header the HTTP client then refuses (or would
    /// send split in two): whatever passes the checks converts, and no accepted value
    /// holds a CR or LF.
    #[test]
    fn what_validation_accepts_the_http_client_takes(
        name in "[ -~]{0,12}",
        value in prop_oneof![".{0,24}", "[\\x00-\\x7f]{0,24}", "[a-z]{0,4}[\\r\\n][a-z]{0,4}"],
    ) {
        if header_name_problem(&name).is_none() {
            prop_assert!(reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_ok(), "{:?}", name);
        }
        if header_value_problem(&value).is_none() {
            prop_assert!(reqwest::header::HeaderValue::from_str(&value).is_ok(), "{:?}", value);
            prop_assert!(!value.contains(['\r', '\n']));
        }
    }

    /// Catches: a chat argument that panics the `/model` or `/think` parser, or an
    /// accepted reference that is unbounded or not `provider/model`-shaped.
    #[test]
    fn chat_arguments_parse_without_panic(args in prop::collection::vec(".{0,300}", 0..4)) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        if let Ok(crate::commands::model::ModelCommand::Set(m)) = crate::commands::model::parse_model(&args) {
            prop_assert!(m.len() <= 200 && m.contains('/'));
        }
        let _ = crate::commands::model::parse_think(&args);
    }
}
