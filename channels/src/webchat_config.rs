//! `channels.webchat`: the web chat's section of the config file.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::section::ChannelSection;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct WebchatConfig {
    pub enabled: bool,
}

impl Default for WebchatConfig {
    fn default() -> Self {
        WebchatConfig { enabled: true }
    }
}

impl ChannelSection for WebchatConfig {
    fn enabled(&self) -> bool {
        self.enabled
    }

    fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}
