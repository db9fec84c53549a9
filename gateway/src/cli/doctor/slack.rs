//! Doctor's Slack check: the bot token tried with `auth.test`, the app token with
//! `apps.connections.open` (which only opens a ticket; no socket is connected). Tokens
//! travel in headers only; no error printed here quotes a URL.

use std::time::Duration;

use serde_json::Value;

use super::{Report, Status};
use crate::config::Config;

const TIMEOUT: Duration = Duration::from_secs(10);

async fn post(http: &reqwest::Client, url: String, token: &str) -> Result<Value, String> {
    let resp = http
        .post(url)
        .bearer_auth(token)
        .send()
        .await
        .map_err(|e| format!("cannot connect ({})", e.without_url()))?;
    let status = resp.status().as_u16();
    if status != 200 {
        return Err(format!("HTTP {status}"));
    }
    resp.json::<Value>()
        .await
        .map_err(|_| "an answer that is not JSON".to_string())
}

pub async fn check(cfg: &Config, env: &dyn Fn(&str) -> Option<String>, r: &mut Report) {
    let s = &cfg.channels.slack;
    if !s.enabled {
        r.add("slack", Status::Skip, "disabled");
        return;
    }
    let token = |configured: &Option<String>, var: &str| {
        configured
            .clone()
            .or_else(|| env(var))
            .filter(|t| !t.trim().is_empty())
    };
    let (Some(bot), Some(app)) = (
        token(&s.bot_token, "SLACK_BOT_TOKEN"),
        token(&s.app_token, "SLACK_APP_TOKEN"),
    ) else {
        r.add(
            "slack",
            Status::Fail,
            "enabled, but botToken (SLACK_BOT_TOKEN) or appToken (SLACK_APP_TOKEN) is missing",
        );
        return;
    };
    let http = reqwest::Client::builder()
        .timeout(TIMEOUT)
        .build()
        .unwrap_or_default();
    let base = s.api_url.trim_end_matches('/');
    let who = match post(&http, format!("{base}/auth.test"), &bot).await {
        Ok(v) if v["ok"] == true => v["user"].as_str().unwrap_or("?").to_string(),
        Ok(v) => {
            let e = v["error"].as_str().unwrap_or("?");
            r.add(
                "slack",
                Status::Fail,
                format!("Slack refused the bot token (auth.test: {e})"),
            );
            return;
        }
        Err(e) => {
            r.add("slack", Status::Fail, format!("{}: {e}", s.api_url));
            return;
        }
    };
    match post(&http, format!("{base}/apps.connections.open"), &app).await {
        Ok(v) if v["ok"] == true => r.add(
            "slack",
            Status::Ok,
            format!("tokens accepted: {who}, Socket Mode available"),
        ),
        Ok(v) => r.add(
            "slack",
            Status::Fail,
            format!(
                "Slack refused the app token (apps.connections.open: {})",
                v["error"].as_str().unwrap_or("?")
            ),
        ),
        Err(e) => r.add("slack", Status::Fail, format!("{}: {e}", s.api_url)),
    }
}
