//! The environment a command runs with: built, not inherited. Only harmless variables of
//! the daemon's own environment are passed on (PATH, HOME, locale, time zone, user,
//! TMPDIR), TERM is `dumb`, and `tools.exec.env` adds to it. Provider keys, bot tokens
//! and the gateway token never get in (README, Security): not even through `tools.exec.env`,
//! whose entries holding one of them are dropped with a warning.

use crate::config::Config;
use crate::runtime::EnvKeys;

/// Variables of the daemon's environment passed on to commands.
const PASSED: &[&str] = &[
    "PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "USER", "LOGNAME", "TMPDIR",
];
/// PATH when the daemon has none.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";
/// Environment variables that hold secrets the daemon reads (besides each channel's:
/// `ChannelsConfig::secret_env`).
const SECRET_VARS: &[&str] = &[
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    crate::config::TOKEN_ENV,
];

/// The environment of a command (sorted by name).
pub fn build(
    cfg: &Config,
    keys: &EnvKeys,
    host: &dyn Fn(&str) -> Option<String>,
) -> Vec<(String, String)> {
    let mut env = passed(PASSED, host);
    env.insert("TERM".into(), "dumb".into());
    let secrets = secrets(cfg, keys, host);
    for (k, v) in &cfg.tools.exec.env {
        if secrets.iter().any(|s| v.contains(s.as_str())) {
            tracing::warn!(variable = %k, "tools.exec.env.{k} holds a provider key or token; it is not passed to commands");
            continue;
        }
        env.insert(k.clone(), v.clone());
    }
    env.into_iter().collect()
}

/// The environment of a stdio MCP server (sorted by name): `PATH`, `HOME` and `LANG` of
/// the daemon's own (defaults when it has none) and the server's configured `env`, from
/// which any value holding one of the daemon's secrets is dropped with a warning, as for
/// `tools.exec.env`.
pub fn for_server(
    cfg: &Config,
    keys: &EnvKeys,
    host: &dyn Fn(&str) -> Option<String>,
    extra: &std::collections::BTreeMap<String, String>,
) -> Vec<(String, String)> {
    let mut env = helper(host);
    let secrets = secrets(cfg, keys, host);
    for (k, v) in extra {
        if secrets.iter().any(|s| v.contains(s.as_str())) {
            tracing::warn!(variable = %k, "an MCP server's env.{k} holds a provider key or token; it is not passed to the server");
            continue;
        }
        env.insert(k.clone(), v.clone());
    }
    env.into_iter().collect()
}

/// The environment of a helper program the daemon runs for itself (git, an MCP server
/// before its own `env`): `PATH`, `HOME` and `LANG` of the daemon's own, defaults when it
/// has none, and nothing else.
pub fn helper(host: &dyn Fn(&str) -> Option<String>) -> std::collections::BTreeMap<String, String> {
    passed(&["PATH", "HOME", "LANG"], host)
}

/// The variables `names` of the daemon's environment, with a default `PATH` and `LANG`.
fn passed(
    names: &[&str],
    host: &dyn Fn(&str) -> Option<String>,
) -> std::collections::BTreeMap<String, String> {
    let mut env: std::collections::BTreeMap<String, String> = names
        .iter()
        .filter_map(|k| host(k).map(|v| (k.to_string(), v)))
        .collect();
    env.entry("PATH".into())
        .or_insert_with(|| DEFAULT_PATH.into());
    env.entry("LANG".into()).or_insert_with(|| "C.UTF-8".into());
    env
}

/// Every secret the daemon knows (non-trivial ones: at least 8 characters).
fn secrets(cfg: &Config, keys: &EnvKeys, host: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let mut out: Vec<String> = SECRET_VARS
        .iter()
        .copied()
        .chain(crate::config::ChannelsConfig::secret_env())
        .filter_map(host)
        .collect();
    out.extend(keys.openai.clone());
    out.extend(keys.anthropic.clone());
    out.extend(
        cfg.models
            .providers
            .values()
            .filter_map(|p| p.api_key.clone()),
    );
    out.extend(cfg.channels.secrets());
    out.extend(cfg.gateway.auth.token.clone());
    out.retain(|s| s.trim().len() >= 8);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The environment is built from a short list plus `tools.exec.env`; secrets stay out
    /// even when `tools.exec.env` names one. Catches: inheriting the daemon's environment.
    #[test]
    fn secrets_never_reach_a_command() {
        let cfg: Config = crate::config::parse_config(
            &serde_json::json!({
                "gateway": {"auth": {"token": "gateway-token-123"}},
                "tools": {"exec": {"env": {"CI": "1", "LEAK": "Bearer sk-provider-456", "TOK": "gateway-token-123",
                    "APP": "xapp-slack-app-111", "BOT": "xoxb-from-the-env-222"}}},
                "models": {"providers": {"p": {"api": "openai-chat", "apiKey": "sk-provider-456"}}},
                "channels": {"slack": {"appToken": "xapp-slack-app-111"}}
            })
            .to_string(),
            &|_| None,
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
        let host = |k: &str| match k {
            "PATH" => Some("/bin".to_string()),
            "HOME" => Some("/home/u".to_string()),
            "OPENAI_API_KEY" => Some("sk-env-789xyz".to_string()),
            "SECRET_THING" => Some("x".to_string()),
            // A registered channel's token read from the daemon's environment.
            "SLACK_BOT_TOKEN" => Some("xoxb-from-the-env-222".to_string()),
            _ => None,
        };
        let env = build(&cfg, &EnvKeys::default(), &host);
        let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, vec!["CI", "HOME", "LANG", "PATH", "TERM"]);
        assert!(env.contains(&("TERM".into(), "dumb".into())));
    }

    /// An MCP server gets PATH, HOME, LANG and its own env, never the daemon's secrets
    /// (not even through its env). Catches: a server inheriting the daemon's environment.
    #[test]
    fn an_mcp_server_gets_a_built_environment() {
        let cfg: Config = crate::config::parse_config(
            &serde_json::json!({
                "gateway": {"auth": {"token": "gateway-token-123"}},
            })
            .to_string(),
            &|_| None,
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
        let host = |k: &str| match k {
            "PATH" => Some("/bin".to_string()),
            "HOME" => Some("/home/u".to_string()),
            "USER" => Some("u".to_string()),
            "TELEGRAM_BOT_TOKEN" => Some("123456:telegram-secret".to_string()),
            _ => None,
        };
        let extra = [
            ("GITHUB_TOKEN".to_string(), "ghp_x".to_string()),
            ("LEAK".to_string(), "123456:telegram-secret".to_string()),
            ("GW".to_string(), "gateway-token-123".to_string()),
        ]
        .into_iter()
        .collect();
        let env = for_server(&cfg, &EnvKeys::default(), &host, &extra);
        assert_eq!(
            env,
            vec![
                ("GITHUB_TOKEN".to_string(), "ghp_x".to_string()),
                ("HOME".to_string(), "/home/u".to_string()),
                ("LANG".to_string(), "C.UTF-8".to_string()),
                ("PATH".to_string(), "/bin".to_string()),
            ]
        );
    }
}
