//! Which config values are secrets, and the config as it may be shown (`config print`,
//! logs): decided by the key's name, so a secret added to the schema later is covered the
//! day it is added (and the schema walk in the tests fails on a secret-looking name that
//! is not). A value is hidden when its key names a secret (`token`, `botToken`, `apiKey`,
//! `webhookSecret`, `password`, …); every value of an `env` or `headers` map is hidden
//! (MCP servers' and commands' environments, HTTP headers such as `Authorization`); a URL
//! (`url`, `baseUrl`, …) keeps its shape with its password and secret query values masked.

use serde_json::Value;

/// What replaces a secret value.
pub const REDACTED: &str = "<redacted>";

/// How a key's value is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exposure {
    /// Shown as it is.
    Plain,
    /// The value is a secret: hidden whole.
    Secret,
    /// A map whose every value may be a secret (`env`, `headers`): keys shown, values hidden.
    SecretValues,
    /// A URL: its password and secret query parameters masked.
    Url,
}

/// How the value of `key` (a config key, any case) is shown.
pub fn exposure(key: &str) -> Exposure {
    let k = key.to_ascii_lowercase();
    if [
        "token",
        "secret",
        "apikey",
        "password",
        "passphrase",
        "credentials",
    ]
    .iter()
    .any(|s| k.ends_with(s))
    {
        Exposure::Secret
    } else if k == "env" || k.ends_with("headers") {
        Exposure::SecretValues
    } else if k == "url" || k.ends_with("url") {
        Exposure::Url
    } else {
        Exposure::Plain
    }
}

/// Hides every secret in a config (as JSON) in place; see the module doc.
pub fn redact(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                redact_entry(exposure(k), v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact),
        _ => {}
    }
}

fn redact_entry(how: Exposure, v: &mut Value) {
    match (how, &mut *v) {
        (_, Value::Null) => {}
        (Exposure::Secret, _) => *v = Value::String(REDACTED.into()),
        (Exposure::SecretValues, Value::Object(map)) => {
            for item in map.values_mut() {
                if !item.is_null() {
                    *item = Value::String(REDACTED.into());
                }
            }
        }
        (Exposure::SecretValues, Value::Array(items)) => {
            items.iter_mut().for_each(|i| redact_entry(how, i))
        }
        (Exposure::SecretValues, _) => *v = Value::String(REDACTED.into()),
        (Exposure::Url, Value::String(s)) => *s = redact_url(s),
        (Exposure::Url, _) | (Exposure::Plain, _) => redact(v),
    }
}

/// Every secret value in a config (as JSON): the values [`redact`] hides, as text (for a
/// URL, its password and secret query values).
pub fn secret_values(value: &Value) -> Vec<String> {
    let mut out = Vec::new();
    collect(value, &mut out);
    out
}

fn collect(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                collect_entry(exposure(k), v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| collect(i, out)),
        _ => {}
    }
}

fn collect_entry(how: Exposure, v: &Value, out: &mut Vec<String>) {
    match (how, v) {
        (Exposure::Secret | Exposure::SecretValues, Value::String(s)) => out.push(s.clone()),
        (Exposure::Secret | Exposure::SecretValues, Value::Object(map)) => map
            .values()
            .for_each(|i| collect_entry(Exposure::Secret, i, out)),
        (Exposure::Secret | Exposure::SecretValues, Value::Array(items)) => {
            items.iter().for_each(|i| collect_entry(how, i, out))
        }
        (Exposure::Url, Value::String(s)) => out.extend(url_secrets(s)),
        _ => collect(v, out),
    }
}

/// The password of a URL's userinfo and the values of its secret query parameters.
fn url_secrets(url: &str) -> Vec<String> {
    let mut out = Vec::new();
    let Some((_, rest)) = url.split_once("://") else {
        return out;
    };
    let before_query = rest.split(['?', '#']).next().unwrap_or(rest);
    if let Some((userinfo, _)) = before_query.rsplit_once('@') {
        if let Some((_, password)) = userinfo.split_once(':') {
            out.push(password.to_owned());
        }
    }
    if let Some((_, query)) = rest.split_once('?') {
        let query = query.split('#').next().unwrap_or(query);
        for pair in query.split('&') {
            if let Some((name, value)) = pair.split_once('=') {
                if secret_param(name) && !value.is_empty() {
                    out.push(value.to_owned());
                }
            }
        }
    }
    out
}

/// `url` with the password of its userinfo and the value of every query parameter whose
/// name looks secret (`password`, `token`, `key`, `secret`, `sig`, `auth`…) masked.
pub fn redact_url(url: &str) -> String {
    let url = super::redact_url(url);
    let Some((head, query)) = url.split_once('?') else {
        return url;
    };
    let (query, fragment) = match query.split_once('#') {
        Some((q, f)) => (q, Some(f)),
        None => (query, None),
    };
    let masked: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, value)) if secret_param(name) && value != "***" => format!("{name}=***"),
            _ => pair.to_owned(),
        })
        .collect();
    let mut out = format!("{head}?{}", masked.join("&"));
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(f);
    }
    out
}

fn secret_param(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    [
        "pass",
        "token",
        "key",
        "secret",
        "sig",
        "auth",
        "credential",
    ]
    .iter()
    .any(|s| n.contains(s))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::json;

    use super::*;

    /// Catches: `config print` showing a token, key, webhook secret, a database password,
    /// an MCP server's environment or an HTTP header value.
    #[test]
    fn every_kind_of_secret_is_hidden() {
        let mut v = json!({
            "gateway": {"auth": {"token": "t", "mode": "token"}, "port": 1},
            "storage": {"url": "postgres://sb:hunter2@db/sb?sslmode=require&password=p2"},
            "models": {"providers": {"x": {"apiKey": "k", "baseUrl": "https://u/v1?api_key=k2&x=1"}}},
            "channels": {"telegram": {"botToken": "b", "webhookSecret": "s", "allowFrom": ["1"]}, "discord": {"token": null}},
            "mcp": {"servers": {"a": {"command": "x", "env": {"GITHUB_TOKEN": "g"}, "headers": {"Authorization": "Bearer h"}}}},
            "hooks": {"x": [{"headers": {"X-Key": "hk"}}]},
        });
        redact(&mut v);
        assert_eq!(
            v,
            json!({
                "gateway": {"auth": {"token": REDACTED, "mode": "token"}, "port": 1},
                "storage": {"url": "postgres://sb:***@db/sb?sslmode=require&password=***"},
                "models": {"providers": {"x": {"apiKey": REDACTED, "baseUrl": "https://u/v1?api_key=***&x=1"}}},
                "channels": {"telegram": {"botToken": REDACTED, "webhookSecret": REDACTED, "allowFrom": ["1"]}, "discord": {"token": null}},
                "mcp": {"servers": {"a": {"command": "x", "env": {"GITHUB_TOKEN": REDACTED}, "headers": {"Authorization": REDACTED}}}},
                "hooks": {"x": [{"headers": {"X-Key": REDACTED}}]},
            })
        );
        let shown = v.to_string();
        for secret in ["hunter2", "p2", "k2", "Bearer h", "\"g\"", "hk"] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
    }

    /// Every property name anywhere in the config's JSON Schema.
    fn property_names(
        node: &Value,
        defs: &Value,
        seen: &mut BTreeSet<String>,
        out: &mut BTreeSet<String>,
    ) {
        match node {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref") {
                    let name = r.rsplit('/').next().unwrap_or_default().to_string();
                    if seen.insert(name.clone()) {
                        if let Some(def) = defs.get(&name) {
                            property_names(def, defs, seen, out);
                        }
                    }
                }
                if let Some(Value::Object(props)) = map.get("properties") {
                    out.extend(props.keys().cloned());
                }
                for v in map.values() {
                    property_names(v, defs, seen, out);
                }
            }
            Value::Array(items) => items
                .iter()
                .for_each(|i| property_names(i, defs, seen, out)),
            _ => {}
        }
    }

    /// Keys whose names look secret-bearing but whose values are not secrets: each one was
    /// looked at. A new key that looks secret-bearing fails this test until it is either
    /// covered by [`exposure`] or listed here on purpose.
    const NOT_SECRETS: &[&str] = &[
        // `gateway.auth`: the section holding `mode` and `token`.
        "auth",
        // `models.providers.<p>.models[].maxTokens`: an answer's length limit.
        "maxTokens",
    ];

    /// Catches: a secret key added to the schema without being hidden by `config print`
    /// (walks the whole schema: any name with token/key/secret/password/auth/env/header/
    /// url/credential in it must be covered, or listed in `NOT_SECRETS`).
    #[test]
    fn the_whole_schema_is_walked_for_secret_looking_keys() {
        let schema = crate::config::json_schema();
        let defs = schema
            .get("$defs")
            .or_else(|| schema.get("definitions"))
            .cloned()
            .unwrap_or(Value::Null);
        let mut names = BTreeSet::new();
        property_names(&schema, &defs, &mut BTreeSet::new(), &mut names);
        assert!(
            names.contains("botToken") && names.contains("env") && names.contains("url"),
            "{names:?}"
        );
        let looks_secret = |n: &str| {
            let l = n.to_ascii_lowercase();
            [
                "token",
                "key",
                "secret",
                "pass",
                "auth",
                "env",
                "header",
                "url",
                "credential",
                "cookie",
            ]
            .iter()
            .any(|w| l.contains(w))
        };
        let missed: Vec<&String> = names
            .iter()
            .filter(|n| looks_secret(n))
            .filter(|n| exposure(n) == Exposure::Plain && !NOT_SECRETS.contains(&n.as_str()))
            .collect();
        assert!(
            missed.is_empty(),
            "secret-looking keys neither hidden nor listed as plain: {missed:?}"
        );
        let stale: Vec<&&str> = NOT_SECRETS
            .iter()
            .filter(|n| !names.contains(**n))
            .collect();
        assert!(
            stale.is_empty(),
            "NOT_SECRETS lists keys the schema no longer has: {stale:?}"
        );
        for expected in ["token", "botToken", "apiKey", "webhookSecret"] {
            assert_eq!(exposure(expected), Exposure::Secret, "{expected}");
        }
        for map in ["env", "headers"] {
            assert!(names.contains(map), "{map}");
            assert_eq!(exposure(map), Exposure::SecretValues);
        }
    }

    #[test]
    fn secret_values_are_what_redact_hides() {
        let v = json!({
            "gateway": {"auth": {"token": "t1"}},
            "storage": {"url": "postgres://sb:hunter2@db/sb?password=p2"},
            "models": {"providers": {"x": {"apiKey": "k", "baseUrl": "https://u/v1?key=k2"}}},
            "mcp": {"servers": {"a": {"env": {"G": "g"}, "headers": {"A": "Bearer h"}}}},
            "channels": {"discord": {"token": null}},
        });
        let mut found = secret_values(&v);
        found.sort();
        assert_eq!(found, ["Bearer h", "g", "hunter2", "k", "k2", "p2", "t1"]);
    }

    #[test]
    fn urls_keep_their_shape() {
        assert_eq!(
            redact_url("https://api.example.com/v1"),
            "https://api.example.com/v1"
        );
        assert_eq!(
            redact_url("https://h/p?token=abc&q=1#frag"),
            "https://h/p?token=***&q=1#frag"
        );
        assert_eq!(
            redact_url("sqlite:///var/lib/sb.db"),
            "sqlite:///var/lib/sb.db"
        );
    }
}
