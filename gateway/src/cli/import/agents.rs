//! OpenClaw's agents → Switchboard's: the default model and every agent's (a
//! `{ primary, fallbacks }` keeps its primary), the agent defaults (workspace, limits,
//! sub-agent settings) and the agent list. Providers are in `providers.rs`.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::convert::put;
use super::providers;
use super::source::{join, Ledger};

pub fn convert(input: &Value, home: Option<&str>, l: &mut Ledger, out: &mut Value) {
    providers::convert(input, l, out);
    let mut refs: Vec<(String, String)> = Vec::new();
    defaults(input, home, l, out, &mut refs);
    list(input, home, l, out, &mut refs);
    providers::complete(l, out, &refs);
}

/// A model setting (`"provider/model"` or `{ primary, fallbacks }`) at `key`: its
/// reference, recorded in `refs`.
fn model(
    v: &Value,
    key: &str,
    to: &str,
    l: &mut Ledger,
    refs: &mut Vec<(String, String)>,
) -> Option<String> {
    let (primary, pkey) = match v {
        Value::String(s) => (s.as_str(), key.to_string()),
        Value::Object(o) => {
            if o.contains_key("fallbacks") {
                l.dropped(&join(key, "fallbacks"), "not imported: add them as `{ primary, fallbacks }` by hand once their providers are set up (docs/models.md)");
            }
            (
                o.get("primary").and_then(Value::as_str)?,
                join(key, "primary"),
            )
        }
        _ => return None,
    };
    let reference = if primary.contains('/') {
        l.carried(&pkey, to);
        primary.to_string()
    } else {
        let r = format!("anthropic/{primary}");
        l.adapted(
            &pkey,
            to,
            format!("\"{r}\": OpenClaw assumes Anthropic without a provider"),
        );
        r
    };
    refs.push((pkey, to.to_string()));
    Some(reference)
}

/// `~/…` with the home folder written out (Switchboard takes paths as they are).
fn path(p: &str, home: Option<&str>) -> (String, bool) {
    match (p.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => (format!("{}/{rest}", home.trim_end_matches('/')), true),
        _ => (p.to_string(), false),
    }
}

fn workspace(
    v: &Value,
    key: &str,
    to: &[&str],
    home: Option<&str>,
    l: &mut Ledger,
    out: &mut Value,
) {
    let Some(p) = v.as_str() else {
        return;
    };
    let (p, expanded) = path(p, home);
    put(out, to, json!(p));
    if expanded {
        l.adapted(
            key,
            &to.join("."),
            "~ written out as the home folder (the bootstrap files there are used as they are)",
        );
    } else {
        l.carried(key, &to.join("."));
    }
}

fn defaults(
    input: &Value,
    home: Option<&str>,
    l: &mut Ledger,
    out: &mut Value,
    refs: &mut Vec<(String, String)>,
) {
    let d = &input["agents"]["defaults"];
    workspace(
        &d["workspace"],
        "agents.defaults.workspace",
        &["agents", "defaults", "workspace"],
        home,
        l,
        out,
    );
    if let Some(m) = model(
        &d["model"],
        "agents.defaults.model",
        "agents.defaults.model",
        l,
        refs,
    ) {
        put(out, &["agents", "defaults", "model"], json!(m));
    }
    if d["models"].is_object() {
        l.dropped(
            "agents.defaults.models",
            "Switchboard has no model aliases or per-model params",
        );
    }
    if let Some(n) = d["maxConcurrent"].as_u64() {
        put(
            out,
            &["agents", "defaults", "maxConcurrent"],
            json!(n.clamp(1, 1024)),
        );
        l.carried(
            "agents.defaults.maxConcurrent",
            "agents.defaults.maxConcurrent",
        );
    }
    if let Some(s) = d["timeoutSeconds"].as_u64() {
        put(
            out,
            &["agents", "defaults", "timeout"],
            json!(format!("{s}s")),
        );
        l.adapted(
            "agents.defaults.timeoutSeconds",
            "agents.defaults.timeout",
            format!("\"{s}s\""),
        );
    }
    let s = &d["subagents"];
    if let Some(m) = model(
        &s["model"],
        "agents.defaults.subagents.model",
        "agents.defaults.subagents.model",
        l,
        refs,
    ) {
        put(out, &["agents", "defaults", "subagents", "model"], json!(m));
    }
    for field in ["maxConcurrent", "runTimeoutSeconds", "archiveAfterMinutes"] {
        if let Some(n) = s[field].as_u64() {
            put(out, &["agents", "defaults", "subagents", field], json!(n));
            l.carried(
                &format!("agents.defaults.subagents.{field}"),
                &format!("agents.defaults.subagents.{field}"),
            );
        }
    }
    if let Some(t) = s["thinking"].as_str() {
        put(
            out,
            &["agents", "defaults", "subagents", "thinking"],
            json!(t),
        );
        l.carried(
            "agents.defaults.subagents.thinking",
            "agents.defaults.subagents.thinking",
        );
    }
}

/// An agent id Switchboard accepts: lowercase letters, digits, `_`, `-`.
fn agent_id(id: &str) -> String {
    let mut out: String = id
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if !out.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        out.insert(0, 'a');
    }
    out
}

fn list(
    input: &Value,
    home: Option<&str>,
    l: &mut Ledger,
    out: &mut Value,
    refs: &mut Vec<(String, String)>,
) {
    let Some(agents) = input["agents"]["list"].as_array() else {
        return;
    };
    let mut written = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, a) in agents.iter().enumerate() {
        let key = format!("agents.list[{i}]");
        let Some(raw_id) = a["id"].as_str() else {
            l.dropped(&key, "an agent without an id");
            continue;
        };
        let id = agent_id(raw_id);
        if !seen.insert(id.clone()) {
            l.dropped(&key, format!("a second agent with id \"{id}\""));
            continue;
        }
        let to = format!("agents.list[{}]", written.len());
        let mut entry = json!({"id": id});
        if id == raw_id {
            l.carried(&join(&key, "id"), &format!("{to}.id"));
        } else {
            l.adapted(
                &join(&key, "id"),
                &format!("{to}.id"),
                format!("\"{raw_id}\" → \"{id}\" (lowercase letters, digits, _ and -)"),
            );
        }
        if let Some(true) = a["default"].as_bool() {
            entry["default"] = json!(true);
            l.carried(&join(&key, "default"), &format!("{to}.default"));
        } else if a.get("default").is_some() {
            l.carried(&join(&key, "default"), &format!("{to}.default"));
        }
        match (a["name"].as_str(), a["identity"]["name"].as_str()) {
            (Some(n), _) => {
                entry["name"] = json!(n);
                l.carried(&join(&key, "name"), &format!("{to}.name"));
            }
            (None, Some(n)) => {
                entry["name"] = json!(n);
                l.adapted(
                    &format!("{key}.identity.name"),
                    &format!("{to}.name"),
                    "the identity's name is the display name",
                );
            }
            _ => {}
        }
        if let Some(p) = a["workspace"].as_str() {
            let (p, expanded) = path(p, home);
            entry["workspace"] = json!(p);
            let (from, to) = (join(&key, "workspace"), format!("{to}.workspace"));
            if expanded {
                l.adapted(&from, &to, "~ written out as the home folder");
            } else {
                l.carried(&from, &to);
            }
        }
        if let Some(m) = model(
            &a["model"],
            &join(&key, "model"),
            &format!("{to}.model"),
            l,
            refs,
        ) {
            entry["model"] = json!(m);
        }
        if let Some(allow) = a["subagents"]["allowAgents"].as_array() {
            let ids: Vec<Value> = allow
                .iter()
                .filter_map(Value::as_str)
                .map(|s| {
                    if s == "*" {
                        json!("*")
                    } else {
                        json!(agent_id(s))
                    }
                })
                .collect();
            entry["subagents"]["allowAgents"] = Value::Array(ids);
            l.carried(
                &format!("{key}.subagents.allowAgents"),
                &format!("{to}.subagents.allowAgents"),
            );
        }
        if let Some(m) = model(
            &a["subagents"]["model"],
            &format!("{key}.subagents.model"),
            &format!("{to}.subagents.model"),
            l,
            refs,
        ) {
            entry["subagents"]["model"] = json!(m);
        }
        if a["tools"].is_object() {
            l.dropped(
                &join(&key, "tools"),
                "Switchboard's tool policy is for all agents (tools.allow / tools.deny)",
            );
        }
        written.push(entry);
    }
    if !written.is_empty() {
        put(out, &["agents", "list"], Value::Array(written));
    }
}
