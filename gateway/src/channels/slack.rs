//! Slack's registration: the adapter built from `channels.slack` (Socket Mode with the
//! app-level token, the Web API with the bot token), its doctor probe (`auth.test` with
//! the bot token, `apps.connections.open` with the app token, which only opens a ticket:
//! no socket is connected), its capabilities. docs/slack.md.

use std::sync::Arc;

use futures::future::LocalBoxFuture;
use switchboard_channels::slack::{Slack, SlackSettings, APP_TOKEN_ENV, BOT_TOKEN_ENV, CHANNEL_ID};
use switchboard_channels::Capabilities;

use super::probe::{call, token, Probe};
use super::{BuildContext, Built, ChannelKind};
use crate::config::Config;

pub struct Kind;

impl ChannelKind for Kind {
    fn id(&self) -> &'static str {
        CHANNEL_ID
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            edit: true,
            buttons: true,
            files: true,
            threads: true,
            // Slack offers bots no typing indicator.
            typing: false,
        }
    }

    fn build(&self, cx: &BuildContext<'_>, cfg: &Config) -> Result<Built, String> {
        let want = &cfg.channels.slack;
        let bot = cx.token(&want.bot_token, BOT_TOKEN_ENV);
        let app = cx.token(&want.app_token, APP_TOKEN_ENV);
        let (Some(bot_token), Some(app_token)) = (bot, app) else {
            return Err(format!(
                "enabled but a token is missing: set channels.slack.botToken (or \
                 {BOT_TOKEN_ENV}) and channels.slack.appToken (or {APP_TOKEN_ENV})"
            ));
        };
        let settings = SlackSettings {
            bot_token,
            app_token,
            api_url: want.api_url.clone(),
            text_limit: want.text_chunk_limit,
            reply_in_thread: want.reply_in_thread,
        };
        let adapter = Slack::new(settings).map_err(|e| format!("cannot start: {e}"))?;
        Ok(Built::new(Arc::new(adapter)))
    }

    fn probe<'a>(
        &'a self,
        cfg: &'a Config,
        env: &'a dyn Fn(&str) -> Option<String>,
        http: &'a reqwest::Client,
    ) -> LocalBoxFuture<'a, Option<Probe>> {
        Box::pin(async move {
            let s = &cfg.channels.slack;
            if !s.enabled {
                return Some(Probe::Skip("disabled".into()));
            }
            let (Some(bot), Some(app)) = (
                token(&s.bot_token, env, BOT_TOKEN_ENV),
                token(&s.app_token, env, APP_TOKEN_ENV),
            ) else {
                return Some(Probe::Fail(format!(
                    "enabled, but botToken ({BOT_TOKEN_ENV}) or appToken ({APP_TOKEN_ENV}) is missing"
                )));
            };
            let base = s.api_url.trim_end_matches('/');
            let who = match call(http.post(format!("{base}/auth.test")).bearer_auth(&bot)).await {
                Ok((200, v)) if v["ok"] == true => v["user"].as_str().unwrap_or("?").to_string(),
                Ok((200, v)) => {
                    return Some(Probe::Fail(format!(
                        "Slack refused the bot token (auth.test: {})",
                        v["error"].as_str().unwrap_or("?")
                    )))
                }
                Ok((code, _)) => {
                    return Some(Probe::Fail(format!("auth.test answered HTTP {code}")))
                }
                Err(e) => return Some(Probe::Fail(format!("{}: {e}", s.api_url))),
            };
            let open = http
                .post(format!("{base}/apps.connections.open"))
                .bearer_auth(&app);
            Some(match call(open).await {
                Ok((200, v)) if v["ok"] == true => {
                    Probe::Ok(format!("tokens accepted: {who}, Socket Mode available"))
                }
                Ok((200, v)) => Probe::Fail(format!(
                    "Slack refused the app token (apps.connections.open: {})",
                    v["error"].as_str().unwrap_or("?")
                )),
                Ok((code, _)) => Probe::Fail(format!("apps.connections.open answered HTTP {code}")),
                Err(e) => Probe::Fail(format!("{}: {e}", s.api_url)),
            })
        })
    }
}
