//! Telegram's registration: the adapter built from `channels.telegram` (its update offset
//! kept in the store, fenced by the lease that says which process polls), its webhook
//! calls taken by every process in shared mode, its doctor probe (`getMe`), its
//! capabilities.

mod offsets;

use std::sync::Arc;
use std::time::Duration;

use futures::future::LocalBoxFuture;
use futures::FutureExt as _;
use switchboard_channels::telegram::{
    Mode, Telegram, TelegramMode, TelegramSettings, CHANNEL_ID, TOKEN_ENV,
};
use switchboard_channels::Capabilities;

use super::probe::{call, token, Probe};
use super::{BuildContext, Built, ChannelKind};
use crate::config::Config;

use offsets::StoreOffsets;

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
        let want = &cfg.channels.telegram;
        let Some(token) = cx.token(&want.bot_token, TOKEN_ENV) else {
            return Err(format!(
                "enabled but no token: set channels.telegram.botToken or {TOKEN_ENV}"
            ));
        };
        let mode = match want.mode {
            TelegramMode::Polling => Mode::Polling,
            TelegramMode::Webhook => Mode::Webhook {
                url: want.webhook_url.clone().unwrap_or_default(),
                secret: want.webhook_secret.clone().unwrap_or_default(),
            },
        };
        let settings = TelegramSettings {
            token,
            api_url: want.api_url.clone(),
            text_limit: want.text_chunk_limit,
            poll_timeout: Duration::from_secs(want.poll_timeout_seconds),
            mode,
            commands: crate::commands::menu::menu(),
            link_preview: want.link_preview,
        };
        let fence = cx.fence_slot();
        let offsets = Arc::new(StoreOffsets {
            store: cx.rt.store.clone(),
            fence: fence.clone(),
        });
        let adapter =
            Arc::new(Telegram::new(settings, offsets).map_err(|e| format!("cannot start: {e}"))?);
        let mut built = Built::new(adapter.clone());
        built.fence = fence;
        // Webhook mode, shared mode: the lease holder registers the webhook, and every
        // process takes webhook calls (a load balancer may send them to any).
        if adapter.is_webhook() {
            built.everywhere = Some(Box::new(move |sink, cancel| {
                async move { adapter.receive_webhooks(sink, cancel).await }.boxed()
            }));
        }
        Ok(built)
    }

    fn probe<'a>(
        &'a self,
        cfg: &'a Config,
        env: &'a dyn Fn(&str) -> Option<String>,
        http: &'a reqwest::Client,
    ) -> LocalBoxFuture<'a, Option<Probe>> {
        Box::pin(async move {
            let t = &cfg.channels.telegram;
            if !t.enabled {
                return Some(Probe::Skip("disabled".into()));
            }
            let Some(tok) = token(&t.bot_token, env, TOKEN_ENV) else {
                return Some(Probe::Fail(format!(
                    "enabled, but no botToken and no {TOKEN_ENV}"
                )));
            };
            let url = format!("{}/bot{tok}/getMe", t.api_url.trim_end_matches('/'));
            Some(match call(http.get(url)).await {
                Ok((200, body)) if body["ok"] == true => Probe::Ok(format!(
                    "token accepted: @{}",
                    body["result"]["username"].as_str().unwrap_or("?")
                )),
                Ok((401 | 404, _)) => {
                    Probe::Fail("Telegram refused the bot token (getMe: 401)".into())
                }
                Ok((code, _)) => Probe::Fail(format!("getMe answered HTTP {code}")),
                Err(e) => Probe::Fail(format!("{}: {e}", t.api_url)),
            })
        })
    }
}
