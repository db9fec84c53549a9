//! Model resolution: which `provider/model` a run calls (one function, [`resolve_for`],
//! for `/model` choices, agents' models and their fallbacks) and a reference → a
//! provider client, the model id, its price and its answer limit. OPENAI_API_KEY / ANTHROPIC_API_KEY give implicit `openai` / `anthropic`
//! providers when the config does not define them.

use std::sync::Arc;

use crate::config::models::DEFAULT_MAX_TOKENS;
use crate::config::{AgentEntry, AgentModel, Config, ModelCost, ProviderApi, ProviderConfig};
use crate::runtime::EnvKeys;

use super::provider::{self, Provider};

/// Model used when only OPENAI_API_KEY is set and no model is configured.
pub const OPENAI_DEFAULT: &str = "openai/gpt-4o-mini";
/// Model used when only ANTHROPIC_API_KEY is set and no model is configured.
pub const ANTHROPIC_DEFAULT: &str = "anthropic/claude-sonnet-4-5";

pub struct ResolvedModel {
    /// `provider/model`.
    pub reference: String,
    pub model_id: String,
    pub provider: Arc<dyn Provider>,
    pub cost: Option<ModelCost>,
    pub max_retries: u32,
    /// Most tokens of one answer: the model entry's `maxTokens`, else 4096.
    pub max_tokens: u32,
    /// A reasoning model (OpenAI: `max_completion_tokens`): the entry's `reasoning`, else
    /// decided by the id (`provider::is_reasoning_model`).
    pub reasoning_model: bool,
    /// The models that serve a turn while this one is down, in order (empty for a
    /// fallback itself). One that no longer resolves is left out, with a warning.
    pub fallbacks: Vec<ResolvedModel>,
    /// Whether images are sent to this model as images (its entry's `input`; a model
    /// without an entry: yes).
    pub takes_images: bool,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    #[error(
        "No model is configured. Set OPENAI_API_KEY or ANTHROPIC_API_KEY in the daemon's environment, \
         or add a provider under `models.providers` and set `agents.defaults.model` to \"provider/model\" \
         in the config file (see config.example.json5)."
    )]
    NotConfigured,
    #[error("model `{0}` is not of the form provider/model")]
    BadReference(String),
    #[error("unknown model provider `{provider}` (configured: {known})")]
    UnknownProvider { provider: String, known: String },
}

/// What a run's model is picked from, the most specific first: the model the run names
/// (a spawn's `model`), the session's `/model` choice, the agent's config entry, its
/// definition (agent file), `agents.defaults.model`, then the implicit default.
#[derive(Debug, Clone, Copy, Default)]
pub struct Pick<'a> {
    /// A model the run itself names.
    pub run: Option<&'a str>,
    /// The session's `/model` choice.
    pub session: Option<&'a str>,
    /// The agent's config entry.
    pub agent: Option<&'a AgentEntry>,
    /// The `model` of the agent's definition (an agent file or a built-in).
    pub definition: Option<&'a str>,
}

/// The agent's own model (entry, else definition, else `agents.defaults.model`), as a
/// chain; `None` when nothing names one.
fn agent_model(cfg: &Config, pick: &Pick<'_>) -> Option<AgentModel> {
    pick.agent
        .and_then(|a| a.model.clone())
        .or_else(|| pick.definition.map(AgentModel::from))
        .or_else(|| cfg.agents.defaults.model.clone())
}

/// The model an agent uses when nothing more specific names one: its chain's primary,
/// else the first listed model, else the one an API key in the environment implies.
fn implicit_reference(cfg: &Config, env: &EnvKeys) -> Option<String> {
    if let Some((name, p)) = cfg
        .models
        .providers
        .iter()
        .find(|(_, p)| !p.models.is_empty())
    {
        return p.models.first().map(|m| format!("{name}/{}", m.id));
    }
    if env.openai.is_some() {
        return Some(OPENAI_DEFAULT.into());
    }
    if env.anthropic.is_some() {
        return Some(ANTHROPIC_DEFAULT.into());
    }
    None
}

/// The references a run of `pick` calls: the primary (the run's, else the session's,
/// else the agent's) and the agent's fallbacks (without the primary). `None` when no
/// model is configured at all.
pub fn chain_for(cfg: &Config, pick: &Pick<'_>, env: &EnvKeys) -> Option<(String, Vec<String>)> {
    let own = agent_model(cfg, pick);
    let primary = pick
        .run
        .or(pick.session)
        .map(str::to_string)
        .or_else(|| own.as_ref().map(|m| m.primary().to_string()))
        .or_else(|| implicit_reference(cfg, env))?;
    let fallbacks = own
        .as_ref()
        .map(|m| m.fallbacks())
        .unwrap_or_default()
        .iter()
        .filter(|f| **f != primary)
        .cloned()
        .collect();
    Some((primary, fallbacks))
}

/// The agent's default reference (what `/model default` goes back to): the agent's
/// model's primary, else the implicit default.
pub fn default_reference(cfg: &Config, pick: &Pick<'_>, env: &EnvKeys) -> Option<String> {
    let pick = Pick {
        run: None,
        session: None,
        ..*pick
    };
    chain_for(cfg, &pick, env).map(|(primary, _)| primary)
}

/// The primary reference a run of `pick` uses (see [`chain_for`]).
pub fn reference_for(cfg: &Config, pick: &Pick<'_>, env: &EnvKeys) -> Option<String> {
    chain_for(cfg, pick, env).map(|(primary, _)| primary)
}

/// The model a run calls, with its fallbacks: [`chain_for`], resolved. Every caller (a
/// run's setup, an announce step, `/model`'s check) resolves a run's model this one way.
pub fn resolve_for(
    cfg: &Config,
    pick: &Pick<'_>,
    http: &reqwest::Client,
    env: &EnvKeys,
) -> Result<ResolvedModel, ModelError> {
    let (primary, fallbacks) = chain_for(cfg, pick, env).ok_or(ModelError::NotConfigured)?;
    let mut model = resolve(cfg, Some(&primary), http, env)?;
    for f in fallbacks {
        match resolve(cfg, Some(&f), http, env) {
            Ok(m) => model.fallbacks.push(m),
            Err(e) => tracing::warn!(fallback = %f, error = %e, "fallback model left out"),
        }
    }
    Ok(model)
}

/// Every `provider/model` the config lists (`models.providers.*.models[]`), in order.
pub fn configured(cfg: &Config) -> Vec<String> {
    cfg.models
        .providers
        .iter()
        .flat_map(|(name, p)| p.models.iter().map(move |m| format!("{name}/{}", m.id)))
        .collect()
}

/// Resolve a `provider/model` reference against the config and the environment.
pub fn resolve(
    cfg: &Config,
    reference: Option<&str>,
    http: &reqwest::Client,
    env: &EnvKeys,
) -> Result<ResolvedModel, ModelError> {
    let reference = reference.ok_or(ModelError::NotConfigured)?;
    let (prov_name, model_id) = reference
        .split_once('/')
        .filter(|(p, m)| !p.is_empty() && !m.is_empty())
        .ok_or_else(|| ModelError::BadReference(reference.to_string()))?;
    let implicit;
    let prov_cfg: &ProviderConfig = match cfg.models.providers.get(prov_name) {
        Some(p) => p,
        None => {
            let api = match prov_name {
                "openai" if env.openai.is_some() => ProviderApi::OpenaiChat,
                "anthropic" if env.anthropic.is_some() => ProviderApi::Anthropic,
                _ => {
                    let mut known: Vec<&str> =
                        cfg.models.providers.keys().map(String::as_str).collect();
                    if env.openai.is_some() {
                        known.push("openai");
                    }
                    if env.anthropic.is_some() {
                        known.push("anthropic");
                    }
                    return Err(ModelError::UnknownProvider {
                        provider: prov_name.to_string(),
                        known: if known.is_empty() {
                            "none".into()
                        } else {
                            known.join(", ")
                        },
                    });
                }
            };
            implicit = ProviderConfig {
                api,
                base_url: None,
                api_key: None,
                models: vec![],
                max_retries: 3,
                headers: Default::default(),
            };
            &implicit
        }
    };
    let fallback_key = match prov_cfg.api {
        ProviderApi::OpenaiChat => env.openai.clone(),
        ProviderApi::Anthropic => env.anthropic.clone(),
    };
    let entry = prov_cfg.models.iter().find(|m| m.id == model_id);
    let takes_images = entry.is_none_or(crate::config::ModelEntry::takes_images);
    Ok(ResolvedModel {
        reference: reference.to_string(),
        model_id: model_id.to_string(),
        provider: provider::build(http, prov_cfg, fallback_key),
        cost: entry.and_then(|m| m.cost),
        max_retries: prov_cfg.max_retries,
        max_tokens: entry
            .and_then(|m| m.max_tokens)
            .unwrap_or(DEFAULT_MAX_TOKENS),
        reasoning_model: entry
            .and_then(|m| m.reasoning)
            .unwrap_or_else(|| provider::is_reasoning_model(model_id)),
        fallbacks: Vec::new(),
        takes_images,
    })
}

/// Estimated cost in USD of a run's usage, when the model has a price.
pub fn estimate_cost(
    cost: Option<ModelCost>,
    input_tokens: u64,
    output_tokens: u64,
) -> Option<f64> {
    cost.map(|c| (input_tokens as f64 * c.input + output_tokens as f64 * c.output) / 1_000_000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_model_gives_a_helpful_error() {
        let cfg = Config::default();
        let env = EnvKeys::default();
        let r = resolve_for(&cfg, &Pick::default(), &reqwest::Client::new(), &env);
        assert_eq!(r.err(), Some(ModelError::NotConfigured));
    }

    #[test]
    fn env_key_gives_an_implicit_provider() {
        let cfg = Config::default();
        let env = EnvKeys {
            openai: Some("k".into()),
            anthropic: None,
        };
        let reference = default_reference(&cfg, &Pick::default(), &env);
        assert_eq!(reference.as_deref(), Some(OPENAI_DEFAULT));
        let m = resolve(&cfg, reference.as_deref(), &reqwest::Client::new(), &env).expect("ok");
        assert_eq!((m.max_tokens, m.reasoning_model), (4096, false));
    }

    #[test]
    fn cost_is_per_million_tokens() {
        let c = Some(ModelCost {
            input: 3.0,
            output: 15.0,
        });
        assert_eq!(estimate_cost(c, 1_000_000, 100_000), Some(4.5));
    }

    /// Catches: a caller picking a run's model in another order than the run itself
    /// (the model the run names, the session's `/model`, its agent's, then the default),
    /// or a `/model` choice dropping the agent's fallbacks.
    #[test]
    fn a_run_s_model_is_its_own_then_the_session_s_then_its_agent_s_then_the_default() {
        let mut cfg = Config::default();
        cfg.agents.defaults.model = Some("p/default".into());
        let env = EnvKeys::default();
        let agent = AgentEntry {
            model: Some(AgentModel::Chain(crate::config::ModelChain {
                primary: "p/agent".into(),
                fallbacks: vec!["q/backup".into(), "p/session".into()],
            })),
            ..AgentEntry::default()
        };
        let pick = |agent, run, session, definition| {
            chain_for(
                &cfg,
                &Pick {
                    run,
                    session,
                    agent,
                    definition,
                },
                &env,
            )
        };
        let chain =
            |p: &str, f: &[&str]| Some((p.to_string(), f.iter().map(|s| s.to_string()).collect()));
        assert_eq!(
            pick(Some(&agent), Some("p/run"), Some("p/session"), None),
            chain("p/run", &["q/backup", "p/session"])
        );
        assert_eq!(
            pick(Some(&agent), None, Some("p/session"), None),
            chain("p/session", &["q/backup"])
        );
        assert_eq!(
            pick(Some(&agent), None, None, Some("p/def")),
            chain("p/agent", &["q/backup", "p/session"])
        );
        assert_eq!(pick(None, None, None, Some("p/def")), chain("p/def", &[]));
        assert_eq!(pick(None, None, None, None), chain("p/default", &[]));
    }

    /// Catches: `maxTokens` or `reasoning` of a model entry not reaching the run, and a
    /// fallback that does not resolve taking the whole model down.
    #[test]
    fn entries_give_max_tokens_reasoning_and_fallbacks() {
        let cfg: Config = serde_json::from_value(serde_json::json!({
            "models": {"providers": {"p": {"api": "openai-chat", "models": [
                {"id": "big", "maxTokens": 16000},
                {"id": "gpt-4o", "reasoning": true},
                {"id": "o3-mini"},
                {"id": "o3-like", "reasoning": false},
            ]}}},
            "agents": {"defaults": {"model": {"primary": "p/big", "fallbacks": ["p/o3-mini", "nope/x"]}}},
        }))
        .expect("config");
        let env = EnvKeys::default();
        let http = reqwest::Client::new();
        let m = resolve_for(&cfg, &Pick::default(), &http, &env).expect("resolves");
        let summary = |m: &ResolvedModel| (m.reference.clone(), m.max_tokens, m.reasoning_model);
        assert_eq!(summary(&m), ("p/big".into(), 16000, false));
        assert_eq!(
            m.fallbacks.iter().map(summary).collect::<Vec<_>>(),
            vec![("p/o3-mini".into(), 4096, true)]
        );
        let one = |r: &str| summary(&resolve(&cfg, Some(r), &http, &env).expect(r));
        assert_eq!(one("p/gpt-4o"), ("p/gpt-4o".into(), 4096, true));
        assert_eq!(one("p/o3-like"), ("p/o3-like".into(), 4096, false));
        assert_eq!(
            configured(&cfg),
            vec!["p/big", "p/gpt-4o", "p/o3-mini", "p/o3-like"]
        );
    }
}
