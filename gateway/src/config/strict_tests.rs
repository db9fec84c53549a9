//! Tests of the every-error deserializer: paths as written, pruning, message rewriting.

use super::*;
use serde_json::json;

fn issues(v: Value) -> Vec<(String, String)> {
    let (_, issues, _) = deserialize(v);
    let mut got: Vec<_> = issues
        .into_iter()
        .map(|i| (i.path.to_string(), i.message))
        .collect();
    got.sort();
    got
}

#[test]
fn every_bad_field_is_reported() {
    let got = issues(json!({
        "gateway": { "port": "high", "bnd": "x" },
        "agents": { "defaults": { "maxConcurent": 2, "maxSteps": -1 } },
        "messages": { "queue": { "mode": "fast" } },
    }));
    assert_eq!(
        got,
        vec![
            ("agents.defaults.maxConcurent".into(), "unknown key \"maxConcurent\" (did you mean \"maxConcurrent\"?); expected one of: model, workspace, maxConcurrent, timeout, stepTimeoutSeconds, maxSteps, subagents, sandbox, budget".into()),
            ("agents.defaults.maxSteps".into(), "invalid value: integer `-1`, expected a whole number from 0 to 4294967295".into()),
            ("gateway.bnd".into(), "unknown key \"bnd\" (did you mean \"bind\"?); expected one of: bind, port, auth, allowedOrigins, reload, shutdownGrace, maxBodyBytes, http".into()),
            ("gateway.port".into(), "invalid type: string \"high\", expected an integer from 0 to 65535".into()),
            ("messages.queue.mode".into(), "unknown value \"fast\"; expected one of: collect, followup, interrupt, steer".into()),
        ]
    );
}

#[test]
fn array_indexes_stay_as_written_after_pruning() {
    let got = issues(json!({
        "tools": { "deny": ["a", 1, "b", 2] },
        "models": { "providers": { "p": { "api": "openai-chat", "models": [
            { "id": 1 }, { "id": "ok" }, { "id": "ok2", "cost": { "input": "x", "output": 1 } },
        ] } } },
    }));
    assert_eq!(
        got,
        vec![
            (
                "models.providers.p.models[0].id".into(),
                "invalid type: integer `1`, expected a string".into()
            ),
            (
                "models.providers.p.models[2].cost.input".into(),
                "invalid type: string \"x\", expected a number".into()
            ),
            (
                "tools.deny[1]".into(),
                "invalid type: integer `1`, expected a string".into()
            ),
            (
                "tools.deny[3]".into(),
                "invalid type: integer `2`, expected a string".into()
            ),
        ]
    );
}

#[test]
fn missing_required_key_is_reported_once() {
    let got = issues(json!({
        "models": { "providers": { "a": { "baseUrl": "http://x" }, "b": { "api": 5 } } },
    }));
    assert_eq!(
        got,
        vec![
            (
                "models.providers.a".into(),
                "missing required key \"api\"".into()
            ),
            (
                "models.providers.b.api".into(),
                "invalid type: integer `5`, expected a string".into()
            ),
        ]
    );
}

#[test]
fn structs_written_as_arrays_are_rejected() {
    let got = issues(json!({
        "gateway": ["0.0.0.0", 80],
        "messages": { "queue": { "mode": { "steer": null } } },
        "models": { "providers": { "p": { "api": "anthropic", "models": [
            { "id": "m", "cost": [1, 2] },
        ] } } },
    }));
    assert_eq!(
        got,
        vec![
            (
                "gateway".into(),
                "invalid type: sequence, expected an object".into()
            ),
            (
                "messages.queue.mode".into(),
                "invalid type: map, expected a string".into()
            ),
            (
                "models.providers.p.models[0].cost".into(),
                "invalid type: sequence, expected an object".into()
            ),
        ]
    );
}

#[test]
fn root_of_the_wrong_type() {
    let (config, got, _) = deserialize(json!([1]));
    assert!(config.is_none());
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].path, KeyPath::default());
    assert_eq!(got[0].message, "invalid type: sequence, expected an object");
}

#[test]
fn distances() {
    assert_eq!(edit_distance("maxconcurent", "maxconcurrent"), 1);
    assert_eq!(edit_distance("", "abc"), 3);
    assert_eq!(closest("prot", &["port", "bind"]), Some("port"));
    assert_eq!(closest("zzzzzz", &["port", "bind"]), None);
}
