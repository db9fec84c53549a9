//! OpenClaw's model providers → Switchboard's (wire protocol, base URL, key, models with
//! price and context window), and making every model reference resolvable: a reference
//! must name a provider the config defines (or, with none defined, OpenAI or Anthropic
//! through their API key); providers OpenClaw has built in are written out where
//! Switchboard knows their URL, references to any other are taken out with a row.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::convert::{put, secret};
use super::source::{join, Ledger};

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

pub fn convert(input: &Value, l: &mut Ledger, out: &mut Value) {
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
pub fn complete(l: &mut Ledger, out: &mut Value, refs: &[(String, String)]) {
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
