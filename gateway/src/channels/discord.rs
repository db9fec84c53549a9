//! Discord's registration: the adapter built from `channels.discord`, its doctor probe
//! (`GET /users/@me` with the bot token), its capabilities.

use std::sync::Arc;

use futures::future::LocalBoxFuture;
use switchboard_channels::discord::{Discord, DiscordSettings, CHANNEL_ID, TOKEN_ENV};
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
            typing: true,
        }
    }

    fn build(&self, cx: &BuildContext<'_>, cfg: &Config) -> Result<Built, String> {
        let want = &cfg.channels.discord;
        let Some(token) = cx.token(&want.token, TOKEN_ENV) else {
            return Err(format!(
                "enabled but no token: set channels.discord.token or {TOKEN_ENV}"
            ));
        };
        let settings = DiscordSettings {
            token,
            api_url: want.api_url.clone(),
            text_limit: want.text_chunk_limit,
            commands: crate::commands::menu::menu(),
            link_preview: want.link_preview,
        };
        let adapter = Discord::new(settings).map_err(|e| format!("cannot start: {e}"))?;
        Ok(Built::new(Arc::new(adapter)))
    }

    fn probe<'a>(
        &'a self,
        cfg: &'a Config,
        env: &'a dyn Fn(&str) -> Option<String>,
        http: &'a reqwest::Client,
    ) -> LocalBoxFuture<'a, Option<Probe>> {
        Box::pin(async move {
            let d = &cfg.channels.discord;
            if !d.enabled {
                return Some(Probe::Skip("disabled".into()));
            }
            let Some(tok) = token(&d.token, env, TOKEN_ENV) else {
                return Some(Probe::Fail(format!(
                    "enabled, but no token and no {TOKEN_ENV}"
                )));
            };
            let url = format!("{}/api/v10/users/@me", d.api_url.trim_end_matches('/'));
            let rb = http.get(url).header("Authorization", format!("Bot {tok}"));
            Some(match call(rb).await {
                Ok((200, body)) => Probe::Ok(format!(
                    "token accepted: {}",
                    body["username"].as_str().unwrap_or("?")
                )),
                Ok((401, _)) => {
                    Probe::Fail("Discord refused the bot token (GET /users/@me: 401)".into())
                }
                Ok((code, _)) => Probe::Fail(format!("GET /users/@me answered HTTP {code}")),
                Err(e) => Probe::Fail(format!("{}: {e}", d.api_url)),
            })
        })
    }
}
