//! OpenClaw config → Switchboard config: the sections both have (gateway address and
//! token, session scope, queue mode, tool policy) here; channels in `channels.rs`,
//! models and agents in `agents.rs`. Every key read gets a row in the ledger; whatever
//! no code reads is listed at the end with the reason it has no place here.

use serde_json::{json, Map, Value};

use super::source::{join, Ledger};
use super::{agents, channels};

/// The result: the Switchboard config as a JSON value.
pub struct Converted {
    pub config: Value,
    /// Why the result must not be written (see [`Ledger::refusals`]); empty when it may.
    pub refusals: Vec<String>,
}

/// Sets `path` (object keys) in `out`, creating objects on the way.
pub fn put(out: &mut Value, path: &[&str], value: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut node = out;
    for key in parents {
        if !node.get(*key).is_some_and(Value::is_object) {
            node[*key] = Value::Object(Map::new());
        }
        node = &mut node[*key];
    }
    node[*last] = value;
}

/// A secret as Switchboard writes it: a string stays (a `${VAR}` stays a reference);
/// OpenClaw's `{ source: "env", id: "X" }` becomes `"${X}"`. Other SecretRefs (file,
/// exec) have no equivalent: the error says why.
pub fn secret(v: &Value) -> Result<(String, Option<String>), String> {
    match v {
        Value::String(s) => Ok((s.clone(), None)),
        Value::Object(o) if o.get("source").and_then(Value::as_str) == Some("env") => {
            let id = o.get("id").and_then(Value::as_str).unwrap_or_default();
            Ok((format!("${{{id}}}"), Some(format!("env SecretRef → \"${{{id}}}\""))))
        }
        Value::Object(o) => Err(format!(
            "a {} SecretRef: Switchboard reads secrets from the file or the environment only; set it as \"${{VAR}}\"",
            o.get("source").and_then(Value::as_str).unwrap_or("non-env")
        )),
        _ => Err("not a string".into()),
    }
}

pub fn convert(input: &Value, home: Option<&str>) -> (Converted, Vec<super::source::Row>) {
    let mut ledger = Ledger::new(input);
    let mut out = json!({});
    gateway(input, &mut ledger, &mut out);
    session(input, &mut ledger, &mut out);
    messages(input, &mut ledger, &mut out);
    tools(input, &mut ledger, &mut out);
    channels::convert(input, &mut ledger, &mut out);
    agents::convert(input, home, &mut ledger, &mut out);
    ledger.leftovers(reason);
    let rows = std::mem::take(&mut ledger.rows);
    let refusals = std::mem::take(&mut ledger.refusals);
    (
        Converted {
            config: out,
            refusals,
        },
        rows,
    )
}

/// Why a key nothing carried over has no place in a Switchboard config.
fn reason(key: &str) -> String {
    let top = key.split(['.', '[']).next().unwrap_or(key);
    match top {
        "wizard" | "meta" => "OpenClaw's own bookkeeping".into(),
        "env" => "Switchboard reads variables from its process environment only: set them there (e.g. the service's Environment=)".into(),
        "auth" | "secrets" => "OpenClaw's credential stores are not read: give each provider an apiKey (\"${VAR}\")".into(),
        "plugins" | "skills" => "Switchboard has no plugins or skills".into(),
        "bindings" => "Switchboard sends every message to the default agent (no bindings)".into(),
        "hooks" | "cron" => "not supported by Switchboard".into(),
        "commands" => "Switchboard's slash commands are built in and always on".into(),
        _ => "no Switchboard equivalent".into(),
    }
}

fn gateway(input: &Value, l: &mut Ledger, out: &mut Value) {
    let g = &input["gateway"];
    if let Some(port) = g["port"].as_u64() {
        put(out, &["gateway", "port"], json!(port));
        l.carried("gateway.port", "gateway.port");
    }
    if let Some(mode) = g["mode"].as_str() {
        if mode == "local" {
            l.adapted(
                "gateway.mode",
                "-",
                "Switchboard always runs the gateway itself: nothing to set",
            );
        } else {
            l.dropped(
                "gateway.mode",
                format!("mode \"{mode}\": Switchboard has no remote-client mode"),
            );
        }
    }
    let token = match (g["auth"]["mode"].as_str(), g["auth"].get("token")) {
        (Some("password"), _) => {
            l.dropped(
                "gateway.auth.mode",
                "password auth: Switchboard's API takes a bearer token; set gateway.auth.token",
            );
            if g["auth"].get("password").is_some() {
                l.dropped(
                    "gateway.auth.password",
                    "a password is not a bearer token; set gateway.auth.token",
                );
            }
            None
        }
        (Some("trusted-proxy"), _) => {
            l.dropped(
                "gateway.auth.mode",
                "trusted-proxy auth is not supported; set gateway.auth.token",
            );
            None
        }
        (mode, Some(t)) if !t.is_null() && mode != Some("none") => match secret(t) {
            Ok((token, how)) => {
                if mode.is_some() {
                    l.adapted(
                        "gateway.auth.mode",
                        "gateway.auth.token",
                        "token auth is what gateway.auth.token does",
                    );
                }
                put(out, &["gateway", "auth", "token"], json!(token));
                match how {
                    Some(how) => l.adapted("gateway.auth.token", "gateway.auth.token", how),
                    None => l.carried("gateway.auth.token", "gateway.auth.token"),
                }
                Some(token)
            }
            Err(why) => {
                l.dropped("gateway.auth.token", why);
                None
            }
        },
        (Some("none"), _) => {
            l.adapted(
                "gateway.auth.mode",
                "gateway.auth.token",
                "no auth: no token (loopback only)",
            );
            None
        }
        _ => None,
    };
    if let Some(bind) = g["bind"].as_str() {
        let custom = g["customBindHost"].as_str();
        let address = match bind {
            "loopback" | "localhost" => Some("127.0.0.1"),
            "lan" => Some("0.0.0.0"),
            "custom" => custom,
            "127.0.0.1" | "0.0.0.0" | "::" | "::1" => Some(bind),
            _ => None,
        };
        match address {
            Some(addr) => {
                let loopback = addr.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
                if !loopback && token.is_none() {
                    l.dropped(
                        "gateway.bind",
                        format!("\"{bind}\" without a token: Switchboard refuses a non-loopback address without gateway.auth.token, so it stays on 127.0.0.1"),
                    );
                } else {
                    put(out, &["gateway", "bind"], json!(addr));
                    if addr == bind {
                        l.carried("gateway.bind", "gateway.bind");
                    } else {
                        l.adapted("gateway.bind", "gateway.bind", format!("\"{bind}\" → \"{addr}\""));
                    }
                }
                if custom.is_some() {
                    l.adapted("gateway.customBindHost", "gateway.bind", "the address to bind");
                }
            }
            None => l.dropped(
                "gateway.bind",
                format!("\"{bind}\" is resolved by OpenClaw at start; set gateway.bind to an IP address"),
            ),
        }
    }
    if let Some(origins) = g["controlUi"]["allowedOrigins"].as_array() {
        put(
            out,
            &["gateway", "allowedOrigins"],
            Value::Array(origins.clone()),
        );
        l.adapted(
            "gateway.controlUi.allowedOrigins",
            "gateway.allowedOrigins",
            "the origins admitted besides the daemon's own",
        );
    }
}

fn session(input: &Value, l: &mut Ledger, out: &mut Value) {
    let Some(scope) = input["session"]["dmScope"].as_str() else {
        return;
    };
    match scope {
        "main" | "per-peer" | "per-channel-peer" => {
            put(out, &["session", "dmScope"], json!(scope));
            l.carried("session.dmScope", "session.dmScope");
        }
        "per-account-channel-peer" => {
            put(out, &["session", "dmScope"], json!("per-channel-peer"));
            l.adapted(
                "session.dmScope",
                "session.dmScope",
                "\"per-channel-peer\": Switchboard has one account per channel",
            );
        }
        other => l.dropped("session.dmScope", format!("unknown scope \"{other}\"")),
    }
}

fn messages(input: &Value, l: &mut Ledger, out: &mut Value) {
    let Some(mode) = input["messages"]["queue"]["mode"].as_str() else {
        return;
    };
    let (to, how) = match mode {
        "collect" | "followup" | "interrupt" | "steer" => (mode, None),
        "steer-backlog" | "steer+backlog" => (
            "steer",
            Some("\"steer\": waiting messages join the running turn (no later follow-up turn with them)"),
        ),
        // OpenClaw's legacy steering, one waiting message per model boundary.
        "queue" => (
            "steer",
            Some("\"steer\": waiting messages join the running turn at its next model call, together"),
        ),
        other => {
            l.dropped("messages.queue.mode", format!("unknown mode \"{other}\""));
            return;
        }
    };
    put(out, &["messages", "queue", "mode"], json!(to));
    match how {
        Some(how) => l.adapted("messages.queue.mode", "messages.queue.mode", how),
        None => l.carried("messages.queue.mode", "messages.queue.mode"),
    }
}

/// OpenClaw's tool groups, by the tool names they stand for.
fn group(name: &str) -> Option<&'static [&'static str]> {
    Some(match name {
        "group:runtime" => &["exec", "process"],
        "group:fs" => &["read", "write", "edit", "apply_patch"],
        "group:sessions" => &[
            "sessions_list",
            "sessions_history",
            "sessions_send",
            "sessions_spawn",
            "session_status",
        ],
        "group:memory" => &["memory_search", "memory_get"],
        "group:web" => &["web_search", "web_fetch"],
        "group:ui" => &["browser", "canvas"],
        "group:automation" => &["cron", "gateway"],
        "group:messaging" => &["message"],
        "group:nodes" => &["nodes"],
        _ => return None,
    })
}

/// The tools a profile allows (`None`: no restriction).
fn profile(name: &str) -> Option<Vec<String>> {
    let names: Vec<&str> = match name {
        "minimal" => vec!["session_status"],
        "coding" => vec![
            "group:fs",
            "group:runtime",
            "group:sessions",
            "group:memory",
            "image",
        ],
        "messaging" => vec![
            "group:messaging",
            "sessions_list",
            "sessions_history",
            "sessions_send",
            "session_status",
        ],
        _ => return None,
    };
    Some(expand(&names.iter().map(|n| json!(n)).collect::<Vec<_>>()).0)
}

/// Tool names with groups expanded; whether any group was.
fn expand(items: &[Value]) -> (Vec<String>, bool) {
    let mut out = Vec::new();
    let mut grouped = false;
    for name in items.iter().filter_map(Value::as_str) {
        match group(name) {
            Some(members) => {
                grouped = true;
                out.extend(members.iter().map(|m| (*m).to_string()));
            }
            None => out.push(if name == "bash" {
                "exec".into()
            } else {
                name.to_string()
            }),
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|n| seen.insert(n.clone()));
    (out, grouped)
}

/// `allow`/`deny` lists at `key` (OpenClaw) into `to` (Switchboard).
fn policy(l: &mut Ledger, out: &mut Value, src: &Value, key: &str, to: &[&str]) {
    for list in ["allow", "deny"] {
        let Some(items) = src[list].as_array() else {
            continue;
        };
        let (names, grouped) = expand(items);
        let mut path = to.to_vec();
        path.push(list);
        put(out, &path, json!(names));
        let (from, dest) = (join(key, list), path.join("."));
        if grouped {
            l.adapted(
                &from,
                &dest,
                "tool groups (group:…) written as the tools they stand for",
            );
        } else {
            l.carried(&from, &dest);
        }
    }
}

fn tools(input: &Value, l: &mut Ledger, out: &mut Value) {
    let t = &input["tools"];
    policy(l, out, t, "tools", &["tools"]);
    if let Some(name) = t["profile"].as_str() {
        match profile(name) {
            None if name == "full" => l.adapted(
                "tools.profile",
                "tools.allow",
                "\"full\": no restriction (tools.allow unset)",
            ),
            None => l.dropped("tools.profile", format!("unknown profile \"{name}\"")),
            Some(mut names) => {
                // The profile is the base list; OpenClaw's tools.allow adds to it.
                let added = out["tools"]["allow"].as_array().cloned();
                for extra in added.iter().flatten().filter_map(Value::as_str) {
                    if !names.iter().any(|n| n == extra) {
                        names.push(extra.to_string());
                    }
                }
                put(out, &["tools", "allow"], json!(names));
                let with = if added.is_some() {
                    ", with tools.allow added to them"
                } else {
                    ""
                };
                l.adapted(
                    "tools.profile",
                    "tools.allow",
                    format!("profile \"{name}\" written as the tools it allows{with} (names Switchboard lacks are ignored)"),
                );
            }
        }
    }
    policy(
        l,
        out,
        &t["subagents"]["tools"],
        "tools.subagents.tools",
        &["tools", "subagents", "tools"],
    );
}
