//! An agent's `model` (one `provider/model`, or a primary with fallbacks), a provider's
//! `headers`, and the checks of both (docs/models.md). The rest of `models.*` is in
//! `schema.rs`.

use std::collections::BTreeMap;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::error::{Issue, KeyPath};
use super::Config;

/// Most fallbacks of one agent's model.
pub const MAX_FALLBACKS: usize = 8;
/// Most `headers` of one provider.
pub const MAX_HEADERS: usize = 32;
/// Longest header name, in bytes.
pub const MAX_HEADER_NAME: usize = 128;
/// Longest header value, in bytes (servers commonly refuse header lines past 8 KiB).
pub const MAX_HEADER_VALUE: usize = 8 * 1024;
/// `models.outageCooldown`: at most an hour (a longer one keeps a recovered primary idle).
pub const MAX_OUTAGE_COOLDOWN: Duration = Duration::from_secs(3600);
/// `models.providers.<p>.models[].maxTokens`.
pub const MAX_MAX_TOKENS: u32 = 1_000_000;
/// A model entry's answer limit when it sets none.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// Headers the HTTP client owns: framing and routing, never set from the config.
const RESERVED_HEADERS: [&str; 5] = [
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "content-type",
];

/// An agent's `model`: `"provider/model"`, or `{ primary, fallbacks }` where each
/// fallback serves a turn, in order, while the ones before it are down.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum AgentModel {
    /// `provider/model`.
    One(String),
    /// A primary model and its fallbacks.
    Chain(ModelChain),
}

/// `{ primary: "p/m", fallbacks: ["p2/m2", …] }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelChain {
    /// `provider/model` used while it answers.
    pub primary: String,
    /// `provider/model`s that serve a turn, in order, while the primary is down (5xx or
    /// timeout after the provider's retries, 429 past its Retry-After budget, 401/403).
    #[serde(default)]
    pub fallbacks: Vec<String>,
}

impl AgentModel {
    /// The model used while it answers.
    pub fn primary(&self) -> &str {
        match self {
            AgentModel::One(m) => m,
            AgentModel::Chain(c) => &c.primary,
        }
    }

    /// The models that serve a turn while the primary is down, in order.
    pub fn fallbacks(&self) -> &[String] {
        match self {
            AgentModel::One(_) => &[],
            AgentModel::Chain(c) => &c.fallbacks,
        }
    }
}

impl From<&str> for AgentModel {
    fn from(m: &str) -> AgentModel {
        AgentModel::One(m.to_string())
    }
}

impl<'de> Deserialize<'de> for AgentModel {
    /// A string, or an object with `primary` and `fallbacks`; anything else is refused
    /// with what is accepted (an untagged enum would only say "did not match").
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<AgentModel, D::Error> {
        use serde::de::Error;
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(s) => Ok(AgentModel::One(s)),
            v @ serde_json::Value::Object(_) => serde_json::from_value::<ModelChain>(v)
                .map(AgentModel::Chain)
                .map_err(|e| D::Error::custom(format!("model: {e}"))),
            _ => Err(D::Error::custom(
                "model must be \"provider/model\" or { primary: \"provider/model\", fallbacks: [\"provider/model\", …] }",
            )),
        }
    }
}

/// Checks the `models.*` additions: every provider's `headers`, every model entry's
/// `maxTokens`, `models.outageCooldown`, and every agent model's fallbacks (the primary
/// is checked with the other model references in `validate.rs`).
pub(crate) fn check(config: &Config, out: &mut Vec<Issue>) {
    for (name, provider) in &config.models.providers {
        let at = KeyPath::dotted("models.providers").key(name);
        headers(&provider.headers, &at.key("headers"), out);
        for (i, model) in provider.models.iter().enumerate() {
            if let Some(n) = model.max_tokens {
                if n == 0 || n > MAX_MAX_TOKENS {
                    out.push(Issue::new(
                        at.key("models").index(i).key("maxTokens"),
                        format!("must be between 1 and {MAX_MAX_TOKENS}, got {n}"),
                    ));
                }
            }
        }
    }
    if config.models.outage_cooldown > MAX_OUTAGE_COOLDOWN {
        out.push(Issue::new(
            KeyPath::dotted("models.outageCooldown"),
            format!(
                "must be at most 1h, got {}",
                humantime::format_duration(config.models.outage_cooldown)
            ),
        ));
    }
    let mut chains = vec![(
        KeyPath::dotted("agents.defaults.model"),
        config.agents.defaults.model.as_ref(),
    )];
    for (i, agent) in config.agents.list.iter().enumerate() {
        chains.push((
            KeyPath::dotted("agents.list").index(i).key("model"),
            agent.model.as_ref(),
        ));
    }
    let providers: Vec<&str> = config.models.providers.keys().map(String::as_str).collect();
    for (at, model) in chains {
        let Some(model) = model else { continue };
        let fallbacks = model.fallbacks();
        if fallbacks.len() > MAX_FALLBACKS {
            out.push(Issue::new(
                at.key("fallbacks"),
                format!("at most {MAX_FALLBACKS} fallbacks, got {}", fallbacks.len()),
            ));
        }
        for (j, f) in fallbacks.iter().enumerate() {
            let fat = at.key("fallbacks").index(j);
            if let Some(message) = super::validate::check_model_ref(f, &providers) {
                out.push(Issue::new(fat, message));
            } else if f == model.primary() || fallbacks[..j].contains(f) {
                out.push(Issue::new(
                    fat,
                    format!("{f:?} is already in this model's chain"),
                ));
            }
        }
    }
}

/// A provider's `headers`: names HTTP tokens, values without control characters (a CR
/// or LF would end the header line and smuggle another), bounded, no framing headers,
/// no name twice in different cases.
fn headers(map: &BTreeMap<String, String>, at: &KeyPath, out: &mut Vec<Issue>) {
    if map.len() > MAX_HEADERS {
        out.push(Issue::new(
            at.clone(),
            format!("at most {MAX_HEADERS} headers, got {}", map.len()),
        ));
    }
    let mut seen: BTreeMap<String, &str> = BTreeMap::new();
    for (name, value) in map {
        let hat = at.key(name);
        if let Some(problem) = header_name_problem(name) {
            out.push(Issue::new(hat, problem));
            continue;
        }
        let lower = name.to_ascii_lowercase();
        if let Some(other) = seen.insert(lower.clone(), name) {
            out.push(Issue::new(
                hat.clone(),
                format!("header {name:?} is also given as {other:?}"),
            ));
        }
        if RESERVED_HEADERS.contains(&lower.as_str()) {
            out.push(Issue::new(
                hat.clone(),
                format!("{name:?} is set by the HTTP client and cannot be configured"),
            ));
        }
        if let Some(problem) = header_value_problem(value) {
            // Never quote the value: it may be a secret.
            out.push(Issue::new(hat, problem));
        }
    }
}

/// Why `name` is not a header name (an RFC 9110 token), if it is not one.
pub fn header_name_problem(name: &str) -> Option<String> {
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if name.is_empty() || name.len() > MAX_HEADER_NAME || !name.bytes().all(token) {
        let shown: String = name.chars().take(64).collect();
        return Some(format!(
            "header name {shown:?} must be 1 to {MAX_HEADER_NAME} letters, digits or !#$%&'*+-.^_`|~"
        ));
    }
    None
}

/// Why `value` cannot be a header value, if it cannot: a control character (CR and LF
/// above all) or too long. A tab is allowed, as in HTTP.
pub fn header_value_problem(value: &str) -> Option<String> {
    if value.len() > MAX_HEADER_VALUE {
        return Some(format!(
            "header value is {} bytes; at most {MAX_HEADER_VALUE}",
            value.len()
        ));
    }
    if value.chars().any(|c| c.is_control() && c != '\t') {
        return Some(
            "header value contains a control character (CR, LF, NUL, …), which could end the header line"
                .into(),
        );
    }
    None
}

/// The default of `models.outageCooldown`: a minute.
pub(crate) fn outage_cooldown_default() -> Duration {
    Duration::from_secs(60)
}

#[cfg(test)]
#[path = "models_tests.rs"]
mod tests;
