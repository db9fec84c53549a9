//! Doctor's network checks: each enabled channel's token tried against its platform
//! (each registered channel's probe: Telegram `getMe`, Discord `GET /users/@me`), each model provider asked for its model
//! list (a cheap call that needs the key), the default model resolved, and whether a
//! daemon answers at the configured address. Tokens travel in URLs (Telegram) and
//! headers only; no error printed here quotes a URL.

use std::time::Duration;

use super::{Report, Status};
use crate::agent::models;
use crate::channels::probe::{call, http, Probe};
use crate::config::{Config, ProviderApi, ProviderConfig};
use crate::runtime::EnvKeys;

/// The Anthropic API version sent with the model list request.
const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Each registered channel's own check (`ChannelKind::probe`), in registry order.
pub async fn channels(cfg: &Config, env: &dyn Fn(&str) -> Option<String>, r: &mut Report) {
    let http = http();
    for kind in crate::channels::KINDS {
        match kind.probe(cfg, env, &http).await {
            Some(Probe::Ok(detail)) => r.add(kind.id(), Status::Ok, detail),
            Some(Probe::Fail(detail)) => r.add(kind.id(), Status::Fail, detail),
            Some(Probe::Skip(detail)) => r.add(kind.id(), Status::Skip, detail),
            None => {}
        }
    }
}

/// The providers the config defines, or the built-in ones the environment's keys enable.
fn providers(cfg: &Config, keys: &EnvKeys) -> Vec<(String, ProviderConfig)> {
    if !cfg.models.providers.is_empty() {
        return cfg
            .models
            .providers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
    }
    let builtin = |api| ProviderConfig {
        api,
        base_url: None,
        api_key: None,
        models: Vec::new(),
        max_retries: 0,
        headers: Default::default(),
    };
    let mut out = Vec::new();
    if keys.openai.is_some() {
        out.push(("openai".to_string(), builtin(ProviderApi::OpenaiChat)));
    }
    if keys.anthropic.is_some() {
        out.push(("anthropic".to_string(), builtin(ProviderApi::Anthropic)));
    }
    out
}

pub async fn models(cfg: &Config, env: &dyn Fn(&str) -> Option<String>, r: &mut Report) {
    let keys = EnvKeys {
        openai: env("OPENAI_API_KEY").filter(|k| !k.is_empty()),
        anthropic: env("ANTHROPIC_API_KEY").filter(|k| !k.is_empty()),
    };
    let http = http();
    let reference = models::default_reference(cfg, &models::Pick::default(), &keys);
    match models::resolve(cfg, reference.as_deref(), &http, &keys) {
        Ok(m) => r.add(
            "model",
            Status::Ok,
            format!("default model {}", m.reference),
        ),
        Err(e) => r.add("model", Status::Fail, e.to_string()),
    }
    for (name, p) in providers(cfg, &keys) {
        let check = format!("provider {name}");
        let key = p.api_key.clone().or(match p.api {
            ProviderApi::OpenaiChat => keys.openai.clone(),
            ProviderApi::Anthropic => keys.anthropic.clone(),
        });
        let rb = match p.api {
            ProviderApi::OpenaiChat => {
                let base = p
                    .base_url
                    .clone()
                    .unwrap_or_else(|| "https://api.openai.com/v1".into());
                let rb = http
                    .get(crate::agent::provider::endpoint(&base, "/models"))
                    .headers(crate::agent::provider::header_map(&p.headers));
                match &key {
                    Some(k) => rb.bearer_auth(k),
                    None => rb,
                }
            }
            ProviderApi::Anthropic => {
                let base = p
                    .base_url
                    .clone()
                    .unwrap_or_else(|| "https://api.anthropic.com".into());
                let base = base.trim_end_matches('/').trim_end_matches("/v1");
                let rb = http
                    .get(format!("{base}/v1/models"))
                    .headers(crate::agent::provider::header_map(&p.headers))
                    .header("anthropic-version", ANTHROPIC_VERSION);
                match &key {
                    Some(k) => rb.header("x-api-key", k),
                    None => rb,
                }
            }
        };
        match call(rb).await {
            Ok((200..=299, _)) => r.add(check, Status::Ok, "reachable, key accepted (GET /models)"),
            Ok((401 | 403, _)) if key.is_none() => r.add(
                check,
                Status::Fail,
                "needs an API key (apiKey, or the API's environment variable)",
            ),
            Ok((401 | 403, _)) => r.add(check, Status::Fail, "the provider refused the API key"),
            Ok((404, _)) => r.add(
                check,
                Status::Warn,
                "reachable, but GET /models is not found: check baseUrl",
            ),
            Ok((code, _)) => r.add(
                check,
                Status::Warn,
                format!("reachable, GET /models answered HTTP {code}"),
            ),
            Err(e) => r.add(check, Status::Fail, e),
        }
    }
}

/// Whether a daemon answers `/healthz` at the configured address (information only).
pub async fn daemon(cfg: &Config, r: &mut Report) {
    let g = &cfg.gateway;
    if g.port == 0 {
        r.add(
            "daemon",
            Status::Skip,
            "gateway.port is 0 (a random port): cannot tell",
        );
        return;
    }
    let host = match g.bind.as_str() {
        "0.0.0.0" => "127.0.0.1".to_string(),
        "::" => "[::1]".to_string(),
        b if b.contains(':') => format!("[{b}]"),
        b => b.to_string(),
    };
    let url = format!("http://{host}:{}/healthz", g.port);
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(2))
        .no_proxy()
        .build()
        .unwrap_or_default();
    match client.get(&url).send().await {
        Ok(resp) if resp.status().is_success() => r.add(
            "daemon",
            Status::Ok,
            format!("running at http://{host}:{}", g.port),
        ),
        _ => r.add(
            "daemon",
            Status::Ok,
            format!("not running at http://{host}:{}", g.port),
        ),
    }
}
