//! Doctor's network checks: each enabled channel's token tried against its platform
//! (Telegram `getMe`, Discord `GET /users/@me`), each model provider asked for its model
//! list (a cheap call that needs the key), the default model resolved, and whether a
//! daemon answers at the configured address. Tokens travel in URLs (Telegram) and
//! headers only; no error printed here quotes a URL.

use std::time::Duration;

use serde_json::Value;

use super::{Report, Status};
use crate::agent::models;
use crate::config::{Config, ProviderApi, ProviderConfig};
use crate::runtime::EnvKeys;

/// Longest one check's request may take.
const TIMEOUT: Duration = Duration::from_secs(10);
/// The Anthropic API version sent with the model list request.
const ANTHROPIC_VERSION: &str = "2023-06-01";

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(TIMEOUT)
        .build()
        .unwrap_or_default()
}

/// `GET`, with the outcome as (HTTP status, JSON body) or a network error without its URL.
async fn call(rb: reqwest::RequestBuilder) -> Result<(u16, Value), String> {
    let resp = rb.send().await.map_err(|e| {
        let e = e.without_url();
        if e.is_timeout() {
            format!("no answer within {}s", TIMEOUT.as_secs())
        } else {
            format!("cannot connect ({e})")
        }
    })?;
    let status = resp.status().as_u16();
    let body = resp.json::<Value>().await.unwrap_or(Value::Null);
    Ok((status, body))
}

fn token(
    configured: &Option<String>,
    env: &dyn Fn(&str) -> Option<String>,
    var: &str,
) -> Option<String> {
    configured
        .clone()
        .or_else(|| env(var))
        .filter(|t| !t.trim().is_empty())
}

pub async fn channels(cfg: &Config, env: &dyn Fn(&str) -> Option<String>, r: &mut Report) {
    let http = http();
    let t = &cfg.channels.telegram;
    if !t.enabled {
        r.add("telegram", Status::Skip, "disabled");
    } else {
        match token(&t.bot_token, env, "TELEGRAM_BOT_TOKEN") {
            None => r.add(
                "telegram",
                Status::Fail,
                "enabled, but no botToken and no TELEGRAM_BOT_TOKEN",
            ),
            Some(tok) => {
                let url = format!("{}/bot{tok}/getMe", t.api_url.trim_end_matches('/'));
                match call(http.get(url)).await {
                    Ok((200, body)) if body["ok"] == true => r.add(
                        "telegram",
                        Status::Ok,
                        format!(
                            "token accepted: @{}",
                            body["result"]["username"].as_str().unwrap_or("?")
                        ),
                    ),
                    Ok((401 | 404, _)) => r.add(
                        "telegram",
                        Status::Fail,
                        "Telegram refused the bot token (getMe: 401)",
                    ),
                    Ok((code, _)) => r.add(
                        "telegram",
                        Status::Fail,
                        format!("getMe answered HTTP {code}"),
                    ),
                    Err(e) => r.add("telegram", Status::Fail, format!("{}: {e}", t.api_url)),
                }
            }
        }
    }
    let d = &cfg.channels.discord;
    if !d.enabled {
        r.add("discord", Status::Skip, "disabled");
        return;
    }
    let Some(tok) = token(&d.token, env, "DISCORD_BOT_TOKEN") else {
        r.add(
            "discord",
            Status::Fail,
            "enabled, but no token and no DISCORD_BOT_TOKEN",
        );
        return;
    };
    let url = format!("{}/api/v10/users/@me", d.api_url.trim_end_matches('/'));
    match call(http.get(url).header("Authorization", format!("Bot {tok}"))).await {
        Ok((200, body)) => r.add(
            "discord",
            Status::Ok,
            format!(
                "token accepted: {}",
                body["username"].as_str().unwrap_or("?")
            ),
        ),
        Ok((401, _)) => r.add(
            "discord",
            Status::Fail,
            "Discord refused the bot token (GET /users/@me: 401)",
        ),
        Ok((code, _)) => r.add(
            "discord",
            Status::Fail,
            format!("GET /users/@me answered HTTP {code}"),
        ),
        Err(e) => r.add("discord", Status::Fail, format!("{}: {e}", d.api_url)),
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
