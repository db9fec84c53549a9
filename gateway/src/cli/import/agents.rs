//! OpenClaw's models and agents → Switchboard's: providers (wire protocol, base URL, key,
//! models with price and context window), the default model and every agent's (a
//! `{ primary, fallbacks }` keeps its primary), the agent defaults (workspace, limits,
//! sub-agent settings) and the agent list. A model reference must name a provider the
//! config defines (or, with none defined, OpenAI or Anthropic through their API key):
//! providers OpenClaw has built in are written out where Switchboard knows their URL.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::convert::{put, secret};
use super::source::{join, Ledger};

pub fn convert(input: &Value, home: Option<&str>, l: &mut Ledger, out: &mut Value) {
    providers(input, l, out);
    let mut refs: Vec<(String, String)> = Vec::new();
    defaults(input, home, l, out, &mut refs);
    list(input, home, l, out, &mut refs);
    complete_providers(l, out, &refs);
}

/// OpenClaw's `api` values → Switchboard's; `None` when Switchboard cannot speak it.
fn api(provider: &str, api: Option<&str>) -> Option<(&'static str, Option<&'static str>)> {
    Some(match api {
        Some("openai-completions") => ("openai-chat", None),
        Some("anthropic-messages") => ("anthropic", None),
        Some("openai-responses") => (
            "openai-chat",
            Some("the Responses API is not spoken: chat completions at the same baseUrl (most servers offer both)"),
        ),
        Some(_) => return None,
        None if provider == "anthropic" => ("anthropic", Some("no api given: \"anthropic\" by the provider's name")),
        None => ("openai-chat", Some("no api given: OpenAI-compatible chat completions")),
    })
}

fn providers(input: &Value, l: &mut Ledger, out: &mut Value) {
    if input["models"]["mode"].is_string() {
        l.dropped(
            "models.mode",
            "Switchboard has no built-in catalog to merge with or replace",
        );
    }
    for (name, p) in input["models"]["providers"]
        .as_object()
        .into_iter()
        .flatten()
    {
        let key = join("models.providers", name);
        if name.contains('/') {
            l.dropped(
                &key,
                "a provider name with \"/\" cannot be part of \"provider/model\"",
            );
            continue;
        }
        let Some((wire, how)) = api(name, p["api"].as_str()) else {
            l.dropped(&key, format!("api {}: Switchboard speaks OpenAI chat completions and Anthropic Messages only", p["api"]));
            continue;
        };
        let to = format!("models.providers.{name}");
        put(out, &["models", "providers", name, "api"], json!(wire));
        match how {
            Some(how) => l.adapted(&join(&key, "api"), &format!("{to}.api"), how),
            None => l.carried(&join(&key, "api"), &format!("{to}.api")),
        }
        if let Some(url) = p["baseUrl"].as_str() {
            put(out, &["models", "providers", name, "baseUrl"], json!(url));
            l.carried(&join(&key, "baseUrl"), &format!("{to}.baseUrl"));
        }
        if let Some(k) = p.get("apiKey") {
            match secret(k) {
                Ok((k, how)) => {
                    put(out, &["models", "providers", name, "apiKey"], json!(k));
                    match how {
                        Some(how) => l.adapted(&join(&key, "apiKey"), &format!("{to}.apiKey"), how),
                        None => l.carried(&join(&key, "apiKey"), &format!("{to}.apiKey")),
                    }
                }
                Err(why) => l.dropped(&join(&key, "apiKey"), why),
            }
        }
        let mut models = Vec::new();
        for (i, m) in p["models"].as_array().into_iter().flatten().enumerate() {
            let mkey = format!("{key}.models[{i}]");
            let Some(id) = m["id"].as_str() else {
                l.dropped(&mkey, "a model without an id");
                continue;
            };
            let mut entry = json!({"id": id});
            l.carried(&join(&mkey, "id"), &format!("{to}.models[].id"));
            if let (Some(input), Some(output)) =
                (m["cost"]["input"].as_f64(), m["cost"]["output"].as_f64())
            {
                entry["cost"] = json!({"input": input, "output": output});
                l.carried(
                    &join(&join(&mkey, "cost"), "input"),
                    &format!("{to}.models[].cost.input"),
                );
                l.carried(
                    &join(&join(&mkey, "cost"), "output"),
                    &format!("{to}.models[].cost.output"),
                );
            }
            if let Some(w) = m["contextWindow"].as_u64() {
                entry["contextWindow"] = json!(w);
                l.carried(
                    &join(&mkey, "contextWindow"),
                    &format!("{to}.models[].contextWindow"),
                );
            }
            models.push(entry);
        }
        if !models.is_empty() {
            put(
                out,
                &["models", "providers", name, "models"],
                Value::Array(models),
            );
        }
    }
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
                l.dropped(&join(key, "fallbacks"), "Switchboard has no model failover (a failing model retries, then the run fails)");
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

/// Well-known OpenAI-compatible providers OpenClaw has built in: base URL and key variable.
fn known(provider: &str) -> Option<(&'static str, &'static str, Option<&'static str>)> {
    Some(match provider {
        "openai" => ("openai-chat", "OPENAI_API_KEY", None),
        "anthropic" => ("anthropic", "ANTHROPIC_API_KEY", None),
        "openrouter" => (
            "openai-chat",
            "OPENROUTER_API_KEY",
            Some("https://openrouter.ai/api/v1"),
        ),
        _ => return None,
    })
}

/// Makes every model reference resolvable: a provider OpenClaw has built in is written
/// out when Switchboard knows it; a reference to any other is taken back out.
fn complete_providers(l: &mut Ledger, out: &mut Value, refs: &[(String, String)]) {
    let mut needed: BTreeSet<String> = BTreeSet::new();
    for (_, to) in refs {
        if let Some(p) = lookup(out, to)
            .and_then(Value::as_str)
            .and_then(|r| r.split_once('/'))
            .map(|(p, _)| p.to_string())
        {
            needed.insert(p);
        }
    }
    let defined = |out: &Value, p: &str| out["models"]["providers"].get(p).is_some();
    let any_defined = out["models"]["providers"]
        .as_object()
        .is_some_and(|m| !m.is_empty());
    for p in &needed {
        if defined(out, p) {
            continue;
        }
        match known(p) {
            // With no providers at all, openai/anthropic work through their env keys.
            Some((_, _, None))
                if !any_defined
                    && needed
                        .iter()
                        .all(|n| known(n).is_some_and(|k| k.2.is_none())) => {}
            Some((wire, var, url)) => {
                let mut entry = json!({"api": wire, "apiKey": format!("${{{var}}}")});
                if let Some(url) = url {
                    entry["baseUrl"] = json!(url);
                }
                put(out, &["models", "providers", p], entry);
                l.adapted(
                    &format!("(provider {p})"),
                    &format!("models.providers.{p}"),
                    format!("built into OpenClaw: written out, its key from ${{{var}}}"),
                );
            }
            None => {}
        }
    }
    // References to providers still missing cannot be carried: take them out.
    for (from, to) in refs {
        let provider = lookup(out, to)
            .and_then(Value::as_str)
            .and_then(|r| r.split_once('/'))
            .map(|(p, _)| p.to_string());
        let Some(p) = provider else { continue };
        let ok = defined(out, &p)
            || (out["models"]["providers"]
                .as_object()
                .is_none_or(|m| m.is_empty())
                && known(&p).is_some());
        if !ok {
            remove(out, to);
            l.rows.retain(|r| &r.key != from);
            l.dropped(from, format!("provider \"{p}\" is built into OpenClaw; define it under models.providers to use it"));
        }
    }
}

/// The value at a dotted path with `[i]` indexes (as the ledger writes them).
fn lookup<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    segments(path).iter().try_fold(v, |v, seg| match seg {
        Seg::Key(k) => v.get(k.as_str()),
        Seg::Index(i) => v.get(*i),
    })
}

fn remove(v: &mut Value, path: &str) {
    let segs = segments(path);
    let Some((last, parents)) = segs.split_last() else {
        return;
    };
    let mut node = v;
    for seg in parents {
        node = match seg {
            Seg::Key(k) => match node.get_mut(k.as_str()) {
                Some(n) => n,
                None => return,
            },
            Seg::Index(i) => match node.get_mut(*i) {
                Some(n) => n,
                None => return,
            },
        };
    }
    if let (Seg::Key(k), Some(map)) = (last, node.as_object_mut()) {
        map.remove(k);
    }
}

enum Seg {
    Key(String),
    Index(usize),
}

fn segments(path: &str) -> Vec<Seg> {
    let mut out = Vec::new();
    for part in path.split('.') {
        match part.split_once('[') {
            Some((k, rest)) => {
                out.push(Seg::Key(k.to_string()));
                if let Ok(i) = rest.trim_end_matches(']').parse() {
                    out.push(Seg::Index(i));
                }
            }
            None => out.push(Seg::Key(part.to_string())),
        }
    }
    out
}
