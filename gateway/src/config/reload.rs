//! Deciding what a changed config file means for the running daemon (README, Configuration:
//! Config, hot reload): agents, models, tools and messages apply live; a changed
//! `channels.<id>` restarts only that channel; `gateway.*` and `storage.*` need a restart
//! and stay as they are.

use serde_json::Value;

use super::Config;

/// Top-level sections that cannot change while the daemon runs.
const RESTART_SECTIONS: [&str; 2] = ["gateway", "storage"];

/// The outcome of comparing the config in force with a newly loaded one.
#[derive(Debug, Clone, PartialEq)]
pub struct ReloadPlan {
    /// What to put in force: the new config, but with the old `gateway` and `storage`.
    pub config: Config,
    /// Sections that changed and apply live: `"agents"`, `"models"`, `"tools"`,
    /// `"messages"`, and `"channels.<id>"` per changed channel. Empty: nothing to apply.
    pub changed: Vec<String>,
    /// Key paths that changed but only take effect after a restart, e.g. `"gateway.port"`.
    pub restart_required: Vec<String>,
}

/// Compares `old` (in force) with `new` (just loaded and validated).
pub fn plan_reload(old: &Config, new: &Config) -> ReloadPlan {
    let mut config = new.clone();
    config.gateway = old.gateway.clone();
    config.storage = old.storage.clone();

    let (old_v, new_v) = (as_object(old), as_object(new));
    let mut changed = Vec::new();
    let mut restart_required = Vec::new();
    for (section, new_section) in &new_v {
        let old_section = old_v.get(section).unwrap_or(&Value::Null);
        if old_section == new_section {
            continue;
        }
        if RESTART_SECTIONS.contains(&section.as_str()) {
            diff_paths(section, old_section, new_section, &mut restart_required);
        } else if section == "channels" {
            let empty = serde_json::Map::new();
            let old_channels = old_section.as_object().unwrap_or(&empty);
            let new_channels = new_section.as_object().unwrap_or(&empty);
            let ids = old_channels.keys().chain(
                new_channels
                    .keys()
                    .filter(|k| !old_channels.contains_key(*k)),
            );
            for id in ids {
                if old_channels.get(id) != new_channels.get(id) {
                    changed.push(format!("channels.{id}"));
                }
            }
        } else {
            changed.push(section.clone());
        }
    }
    changed.sort();
    restart_required.sort();
    ReloadPlan {
        config,
        changed,
        restart_required,
    }
}

/// The config as a JSON object with the file's key names. Serializing a `Config` cannot
/// fail (string map keys, infallible field serializers), so the fallback is never used.
fn as_object(config: &Config) -> serde_json::Map<String, Value> {
    match serde_json::to_value(config) {
        Ok(Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    }
}

/// Pushes the paths of the leaves (or arrays) that differ between `old` and `new`.
fn diff_paths(path: &str, old: &Value, new: &Value, out: &mut Vec<String>) {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            let keys = a.keys().chain(b.keys().filter(|k| !a.contains_key(*k)));
            for k in keys {
                let (x, y) = (
                    a.get(k).unwrap_or(&Value::Null),
                    b.get(k).unwrap_or(&Value::Null),
                );
                if x != y {
                    diff_paths(&format!("{path}.{k}"), x, y, out);
                }
            }
        }
        _ if old != new => out.push(path.to_owned()),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{AgentEntry, QueueMode};
    use std::time::Duration;

    #[test]
    fn nothing_changed() {
        let c = Config::default();
        assert_eq!(
            plan_reload(&c, &c.clone()),
            ReloadPlan {
                config: c.clone(),
                changed: vec![],
                restart_required: vec![],
            }
        );
    }

    #[test]
    fn live_sections_apply_and_gateway_storage_are_kept() {
        let old = Config::default();
        let mut new = Config::default();
        new.agents.list.push(AgentEntry {
            id: "main".into(),
            ..AgentEntry::default()
        });
        new.messages.queue.mode = QueueMode::Followup;
        new.channels.webchat.enabled = false;
        new.gateway.port = 9000;
        new.gateway.auth.token = Some("t".into());
        new.gateway.reload.debounce = Duration::from_secs(1);
        new.storage.url = Some("sqlite://x.db".into());

        let plan = plan_reload(&old, &new);
        let mut want = new.clone();
        want.gateway = old.gateway.clone();
        want.storage = old.storage.clone();
        assert_eq!(
            plan,
            ReloadPlan {
                config: want,
                changed: vec![
                    "agents".into(),
                    "channels.webchat".into(),
                    "messages".into()
                ],
                restart_required: vec![
                    "gateway.auth.token".into(),
                    "gateway.port".into(),
                    "gateway.reload.debounce".into(),
                    "storage.url".into(),
                ],
            }
        );
    }

    #[test]
    fn only_restart_sections_changed_means_nothing_to_apply() {
        let old = Config::default();
        let mut new = Config::default();
        new.gateway.bind = "::1".into();
        let plan = plan_reload(&old, &new);
        assert_eq!(plan.config, old);
        assert!(plan.changed.is_empty());
        assert_eq!(plan.restart_required, vec!["gateway.bind".to_string()]);
    }
}
