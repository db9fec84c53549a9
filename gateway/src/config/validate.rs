//! Semantic checks on a `Config` that deserialized cleanly: ranges, references between
//! sections, and safety rules. Every problem is returned with its key path.

mod channels;
mod gateway;
mod hooks;
mod mcp_cron;
mod media;
mod sandbox;
mod tools;
mod workspaces;

use std::collections::BTreeMap;

use super::error::{Issue, KeyPath};
use super::Config;
use channels::{discord, telegram};
use gateway::gateway;

/// Checks `config`; an empty result means it is fine. `env` is consulted for the
/// `SWITCHBOARD_TOKEN` fallback of `gateway.auth.token`.
pub(crate) fn validate(config: &Config, env: &dyn Fn(&str) -> Option<String>) -> Vec<Issue> {
    let mut out = Vec::new();
    gateway(config, env, &mut out);
    storage(config, &mut out);
    models(config, &mut out);
    agents(config, &mut out);
    telegram(config, &mut out);
    discord(config, &mut out);
    super::slack::validate(&config.channels.slack, &mut out);
    super::limits::check(config, &mut out);
    tools::tools(config, &mut out);
    sandbox::sandbox(config, &mut out);
    mcp_cron::mcp_cron(config, &mut out);
    hooks::hooks(config, &mut out);
    super::context::check(&config.session.compaction, &config.session.reset, &mut out);
    super::models::check(config, &mut out);
    media::media(config, &mut out);
    super::budget::check(config, &mut out);
    // The daemon's own paths as the environment names them (`run --config` elsewhere is
    // checked again at start with the real path: `workspace_issues`).
    workspaces::workspaces(config, &super::Paths::resolve(None, env), &mut out);
    out
}

/// The workspaces of `config` that contain the state dir or the config file of `paths`,
/// as config errors (checked at start with the paths in force).
pub fn workspace_issues(config: &Config, paths: &super::Paths) -> Vec<super::ConfigError> {
    let mut out = Vec::new();
    workspaces::workspaces(config, paths, &mut out);
    out.into_iter()
        .map(|i| super::ConfigError {
            path: i.path.to_string(),
            line: None,
            column: None,
            message: i.message,
        })
        .collect()
}

fn storage(config: &Config, out: &mut Vec<Issue>) {
    if let Some(url) = &config.storage.url {
        if !url.starts_with("sqlite:") && !super::is_postgres_url(url) {
            out.push(Issue::new(
                KeyPath::dotted("storage.url"),
                format!(
                    "must be a sqlite: URL (e.g. \"sqlite:///var/lib/switchboard/switchboard.db\") or a postgres:// or postgresql:// URL (e.g. \"postgres://switchboard:${{PGPASSWORD}}@db:5432/switchboard\"), got {:?}",
                    super::redact_url(url)
                ),
            ));
        }
    }
    let postgres = config
        .storage
        .url
        .as_deref()
        .is_some_and(super::is_postgres_url);
    if config.storage.processes == super::schema::Processes::Shared && !postgres {
        out.push(Issue::new(
            KeyPath::dotted("storage.processes"),
            "\"shared\" needs a PostgreSQL database (storage.url \"postgres://…\"): on SQLite one process acts on a database file",
        ));
    }
}

fn models(config: &Config, out: &mut Vec<Issue>) {
    for (name, provider) in &config.models.providers {
        let at = KeyPath::dotted("models.providers").key(name);
        if name.is_empty() || name.contains('/') {
            out.push(Issue::new(
                at.clone(),
                format!("provider name {name:?} must be non-empty and contain no \"/\""),
            ));
        }
        if let Some(url) = &provider.base_url {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                out.push(Issue::new(
                    at.key("baseUrl"),
                    format!("must start with http:// or https://, got {url:?}"),
                ));
            }
        }
        for (i, model) in provider.models.iter().enumerate() {
            let at = at.key("models").index(i);
            if model.id.trim().is_empty() {
                out.push(Issue::new(at.key("id"), "must not be empty"));
            }
            if let Some(cost) = &model.cost {
                for (key, v) in [("input", cost.input), ("output", cost.output)] {
                    if !(v >= 0.0 && v.is_finite()) {
                        out.push(Issue::new(
                            at.key("cost").key(key),
                            format!("must be a number >= 0, got {v}"),
                        ));
                    }
                }
            }
        }
    }
}

fn range(out: &mut Vec<Issue>, path: &str, v: u64, min: u64, max: u64, unit: &str) {
    if v < min || v > max {
        out.push(Issue::new(
            KeyPath::dotted(path),
            format!("must be between {min} and {max}{unit}, got {v}"),
        ));
    }
}

fn agents(config: &Config, out: &mut Vec<Issue>) {
    let d = &config.agents.defaults;
    range(
        out,
        "agents.defaults.maxConcurrent",
        u64::from(d.max_concurrent),
        1,
        1024,
        "",
    );
    range(
        out,
        "agents.defaults.subagents.maxConcurrent",
        u64::from(d.subagents.max_concurrent),
        1,
        1024,
        "",
    );
    range(
        out,
        "agents.defaults.stepTimeoutSeconds",
        d.step_timeout_seconds,
        1,
        1800,
        " seconds",
    );
    // agents.defaults.maxSteps: limits.rs.

    let providers: Vec<&str> = config.models.providers.keys().map(String::as_str).collect();
    let mut model_ref = |path: KeyPath, model: &Option<String>| {
        if let Some(model) = model {
            if let Some(message) = check_model_ref(model, &providers) {
                out.push(Issue::new(path, message));
            }
        }
    };
    let primary = |at: KeyPath, m: &Option<super::AgentModel>| match m {
        Some(super::AgentModel::Chain(c)) => (at.key("primary"), Some(c.primary.clone())),
        Some(super::AgentModel::One(s)) => (at, Some(s.clone())),
        None => (at, None),
    };
    let (at, m) = primary(KeyPath::dotted("agents.defaults.model"), &d.model);
    model_ref(at, &m);
    model_ref(
        KeyPath::dotted("agents.defaults.subagents.model"),
        &d.subagents.model,
    );
    for (i, agent) in config.agents.list.iter().enumerate() {
        let at = KeyPath::dotted("agents.list").index(i);
        let (mat, m) = primary(at.key("model"), &agent.model);
        model_ref(mat, &m);
        if let Some(sub) = &agent.subagents {
            model_ref(at.key("subagents").key("model"), &sub.model);
        }
    }

    if let Some(t) = &d.subagents.thinking {
        if let Err(e) = t.parse::<super::thinking::Thinking>() {
            out.push(Issue::new(
                KeyPath::dotted("agents.defaults.subagents.thinking"),
                e.to_string(),
            ));
        }
    }

    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    let mut first_default: Option<usize> = None;
    for (i, agent) in config.agents.list.iter().enumerate() {
        let at = KeyPath::dotted("agents.list").index(i);
        if agent.id.is_empty() {
            out.push(Issue::new(at.key("id"), "every agent needs a non-empty id"));
        } else if !valid_agent_id(&agent.id) {
            out.push(Issue::new(
                at.key("id"),
                format!(
                    "agent id {:?} must be lowercase letters, digits, '_' or '-', starting with a letter or digit",
                    agent.id
                ),
            ));
        } else if let Some(first) = seen.get(agent.id.as_str()) {
            out.push(Issue::new(
                at.key("id"),
                format!(
                    "duplicate agent id {:?} (also agents.list[{first}])",
                    agent.id
                ),
            ));
        } else {
            seen.insert(&agent.id, i);
        }
        for (j, alias) in agent.aliases.iter().enumerate() {
            if !valid_alias(alias) {
                out.push(Issue::new(
                    at.key("aliases").index(j),
                    format!("alias {alias:?} must be 1 to 64 letters, digits, '_', '-' or '.', starting with a letter or digit"),
                ));
            }
        }
        if agent.default {
            match first_default {
                Some(first) => out.push(Issue::new(
                    at.key("default"),
                    format!("only one agent may have default: true (also agents.list[{first}])"),
                )),
                None => first_default = Some(i),
            }
        }
    }
}

/// `[A-Za-z0-9][A-Za-z0-9_.-]{0,63}` (as in agent files).
fn valid_alias(a: &str) -> bool {
    let mut chars = a.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && a.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// `[a-z0-9][a-z0-9_-]*`
fn valid_agent_id(id: &str) -> bool {
    let mut chars = id.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

/// Problem with a `provider/model` reference, if any. With no providers configured, any
/// provider name is accepted (the built-in ones are picked from API keys in the env).
pub(crate) fn check_model_ref(model: &str, providers: &[&str]) -> Option<String> {
    let Some((provider, id)) = model
        .split_once('/')
        .filter(|(p, m)| !p.is_empty() && !m.is_empty())
    else {
        return Some(format!(
            "model {model:?} must be written as \"provider/model\", e.g. \"openai/gpt-4o-mini\""
        ));
    };
    let _ = id; // any id is allowed: providers accept models they do not list
    if providers.is_empty() || providers.contains(&provider) {
        return None;
    }
    Some(format!(
        "unknown provider {provider:?} in model {model:?}; known providers (models.providers): {}",
        providers.join(", ")
    ))
}

/// An environment variable name: letters, digits and `_`, not starting with a digit
/// (`${VAR}` references, `tools.exec.env`, an MCP server's `env`).
pub(crate) fn valid_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The errors of a config given as JSON, as `path: message` lines (the sections' tests).
#[cfg(test)]
pub(crate) fn test_errors(json: serde_json::Value) -> Vec<String> {
    match super::parse_config(&json.to_string(), &|_| None) {
        Ok(_) => Vec::new(),
        Err(errors) => errors
            .iter()
            .map(|e| format!("{}: {}", e.path, e.message))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{
        AgentEntry, AgentSubagents, ModelCost, ModelEntry, ProviderApi, ProviderConfig,
    };

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn check(config: &Config) -> Vec<(String, String)> {
        validate(config, &no_env)
            .into_iter()
            .map(|i| (i.path.to_string(), i.message))
            .collect()
    }

    fn agent(id: &str) -> AgentEntry {
        AgentEntry {
            id: id.into(),
            ..AgentEntry::default()
        }
    }

    #[test]
    fn defaults_are_valid() {
        assert_eq!(check(&Config::default()), vec![]);
    }

    /// SQLite and PostgreSQL URLs are accepted, anything else refused naming both (with
    /// its password masked); `storage.leaseTimeout` is held to its range.
    #[test]
    fn storage_urls_and_lease_timeout() {
        let mut c = Config::default();
        for url in [
            "sqlite:///x.db",
            "postgres://sb:pw@db/sb",
            "postgresql://db/sb",
        ] {
            c.storage.url = Some(url.into());
            assert_eq!(check(&c), vec![], "{url}");
        }
        c.storage.url = Some("postgres:/db".into());
        let issues = check(&c);
        assert_eq!(issues.len(), 1);
        assert!(
            issues[0].1.contains("a postgres:// or postgresql:// URL"),
            "{issues:?}"
        );
        c.storage.url = None;
        c.storage.processes = crate::config::schema::Processes::Shared;
        let issues = check(&c);
        assert_eq!(issues.len(), 1, "{issues:?}");
        assert_eq!(issues[0].0, "storage.processes");
        assert!(
            issues[0].1.contains("needs a PostgreSQL database"),
            "{issues:?}"
        );
        c.storage.url = Some("postgres://sb:pw@db/sb".into());
        assert_eq!(check(&c), vec![]);
        c.storage.url = None;
        c.storage.processes = crate::config::schema::Processes::Standby;
        for (timeout, ok) in [(1, false), (2, true), (15, true), (600, true), (601, false)] {
            c.storage.lease_timeout = std::time::Duration::from_secs(timeout);
            let issues = check(&c);
            assert_eq!(issues.is_empty(), ok, "{timeout}s: {issues:?}");
            if !ok {
                assert_eq!(
                    issues,
                    vec![(
                        "storage.leaseTimeout".to_string(),
                        format!(
                            "must be between \"2s\" and \"10m\", got \"{}\"",
                            crate::config::duration::format(c.storage.lease_timeout)
                        )
                    )]
                );
            }
        }
    }

    #[test]
    fn agent_rules() {
        let mut c = Config::default();
        c.agents.defaults.max_concurrent = 0;
        c.agents.defaults.subagents.max_concurrent = 2000;
        c.agents.defaults.step_timeout_seconds = 3600;
        c.agents.defaults.max_steps = 0;
        c.agents.list = vec![
            AgentEntry {
                default: true,
                ..agent("main")
            },
            agent(""),
            agent("Main"),
            AgentEntry {
                default: true,
                ..agent("main")
            },
            AgentEntry {
                aliases: vec!["Ok.Alias".into(), "no spaces".into()],
                ..agent("ok_2-x")
            },
        ];
        assert_eq!(
            check(&c),
            vec![
                ("agents.defaults.maxConcurrent".into(), "must be between 1 and 1024, got 0".into()),
                ("agents.defaults.subagents.maxConcurrent".into(), "must be between 1 and 1024, got 2000".into()),
                ("agents.defaults.stepTimeoutSeconds".into(), "must be between 1 and 1800 seconds, got 3600".into()),
                ("agents.list[1].id".into(), "every agent needs a non-empty id".into()),
                ("agents.list[2].id".into(), "agent id \"Main\" must be lowercase letters, digits, '_' or '-', starting with a letter or digit".into()),
                ("agents.list[3].id".into(), "duplicate agent id \"main\" (also agents.list[0])".into()),
                ("agents.list[3].default".into(), "only one agent may have default: true (also agents.list[0])".into()),
                ("agents.list[4].aliases[1]".into(), "alias \"no spaces\" must be 1 to 64 letters, digits, '_', '-' or '.', starting with a letter or digit".into()),
                ("agents.defaults.maxSteps".into(), "must be between 1 and 1000, got 0".into()),
            ]
        );
    }

    #[test]
    fn model_references_and_providers() {
        let mut c = Config::default();
        c.agents.defaults.model = Some("anything/goes".into());
        assert_eq!(
            check(&c),
            vec![],
            "no providers configured: any provider name"
        );
        c.models.providers.insert(
            "openai".into(),
            ProviderConfig {
                api: ProviderApi::OpenaiChat,
                base_url: Some("ftp://x".into()),
                api_key: None,
                models: vec![ModelEntry {
                    id: "gpt".into(),
                    cost: Some(ModelCost {
                        input: -1.0,
                        output: f64::NAN,
                    }),
                    context_window: None,
                    max_tokens: None,
                    reasoning: None,
                    input: None,
                }],
                max_retries: 3,
                headers: Default::default(),
            },
        );
        c.agents.defaults.model = Some("openai/not-listed-is-fine".into());
        c.agents.defaults.subagents.model = Some("gpt-4o".into());
        c.agents.defaults.subagents.thinking = Some("lots".into());
        c.agents.list = vec![AgentEntry {
            model: Some("anthropic/claude".into()),
            subagents: Some(AgentSubagents {
                allow_agents: None,
                model: Some("/x".into()),
            }),
            ..agent("main")
        }];
        c.storage.url = Some("mysql://root:hunter2@db".into());
        assert_eq!(
            check(&c),
            vec![
                ("storage.url".into(), "must be a sqlite: URL (e.g. \"sqlite:///var/lib/switchboard/switchboard.db\") or a postgres:// or postgresql:// URL (e.g. \"postgres://switchboard:${PGPASSWORD}@db:5432/switchboard\"), got \"mysql://root:***@db\"".into()),
                ("models.providers.openai.baseUrl".into(), "must start with http:// or https://, got \"ftp://x\"".into()),
                ("models.providers.openai.models[0].cost.input".into(), "must be a number >= 0, got -1".into()),
                ("models.providers.openai.models[0].cost.output".into(), "must be a number >= 0, got NaN".into()),
                ("agents.defaults.subagents.model".into(), "model \"gpt-4o\" must be written as \"provider/model\", e.g. \"openai/gpt-4o-mini\"".into()),
                ("agents.list[0].model".into(), "unknown provider \"anthropic\" in model \"anthropic/claude\"; known providers (models.providers): openai".into()),
                ("agents.list[0].subagents.model".into(), "model \"/x\" must be written as \"provider/model\", e.g. \"openai/gpt-4o-mini\"".into()),
                ("agents.defaults.subagents.thinking".into(), "unknown thinking level \"lots\"; accepted: off, minimal, low, medium, high".into()),
            ]
        );
    }
}
