//! The web chat's registration: the process's one [`WebChat`] (shared with the HTTP
//! server, which serves its sockets), run in every process (not under a lease: each
//! serves the browsers connected to it).

use switchboard_channels::webchat::CHANNEL_ID;
use switchboard_channels::Capabilities;

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
            threads: false,
            typing: true,
        }
    }

    fn leased(&self) -> bool {
        false
    }

    fn build(&self, cx: &BuildContext<'_>, _cfg: &Config) -> Result<Built, String> {
        Ok(Built::new(cx.webchat.clone()))
    }
}
