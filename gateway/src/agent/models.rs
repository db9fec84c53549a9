//! Model resolution: `provider/model` references → a provider client, the model id and
//! its price. OPENAI_API_KEY / ANTHROPIC_API_KEY give implicit `openai` / `anthropic`
//! providers when the config does not define them.

use std::sync::Arc;

use crate::config::{AgentEntry, Config, ModelCost, ProviderApi, ProviderConfig};
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

/// The model reference an agent uses by default.
pub fn default_reference(cfg: &Config, agent_model: Option<&str>, env: &EnvKeys) -> Option<String> {
    if let Some(m) = agent_model.or(cfg.agents.defaults.model.as_deref()) {
        return Some(m.to_string());
    }
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

/// The model reference a run of `agent` uses: `explicit` (a model the run names), else the
/// agent's model, else the default.
pub fn reference_for(
    cfg: &Config,
    agent: Option<&AgentEntry>,
    explicit: Option<&str>,
    env: &EnvKeys,
) -> Option<String> {
    match explicit {
        Some(m) => Some(m.to_string()),
        None => default_reference(cfg, agent.and_then(|a| a.model.as_deref()), env),
    }
}

/// The model a run of `agent` calls: [`reference_for`], resolved. Every caller (a run's
/// setup, an announce step) resolves a model this one way.
pub fn resolve_for(
    cfg: &Config,
    agent: Option<&AgentEntry>,
    explicit: Option<&str>,
    http: &reqwest::Client,
    env: &EnvKeys,
) -> Result<ResolvedModel, ModelError> {
    let reference = reference_for(cfg, agent, explicit, env);
    resolve(cfg, reference.as_deref(), http, env)
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
            };
            &implicit
        }
    };
    let fallback_key = match prov_cfg.api {
        ProviderApi::OpenaiChat => env.openai.clone(),
        ProviderApi::Anthropic => env.anthropic.clone(),
    };
    let cost = prov_cfg
        .models
        .iter()
        .find(|m| m.id == model_id)
        .and_then(|m| m.cost);
    let takes_images = prov_cfg
        .models
        .iter()
        .find(|m| m.id == model_id)
        .is_none_or(crate::config::ModelEntry::takes_images);
    Ok(ResolvedModel {
        reference: reference.to_string(),
        model_id: model_id.to_string(),
        provider: provider::build(http, prov_cfg, fallback_key),
        cost,
        max_retries: prov_cfg.max_retries,
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
        let r = resolve(
            &cfg,
            default_reference(&cfg, None, &env).as_deref(),
            &reqwest::Client::new(),
            &env,
        );
        assert_eq!(r.err(), Some(ModelError::NotConfigured));
    }

    #[test]
    fn env_key_gives_an_implicit_provider() {
        let cfg = Config::default();
        let env = EnvKeys {
            openai: Some("k".into()),
            anthropic: None,
        };
        let reference = default_reference(&cfg, None, &env);
        assert_eq!(reference.as_deref(), Some(OPENAI_DEFAULT));
        assert!(resolve(&cfg, reference.as_deref(), &reqwest::Client::new(), &env).is_ok());
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
    /// (the model the run names, then its agent's, then the default).
    #[test]
    fn a_run_s_model_is_its_own_then_its_agent_s_then_the_default() {
        let mut cfg = Config::default();
        cfg.agents.defaults.model = Some("p/default".into());
        let env = EnvKeys::default();
        let agent = AgentEntry {
            model: Some("p/agent".into()),
            ..AgentEntry::default()
        };
        let pick =
            |agent: Option<&AgentEntry>, explicit| reference_for(&cfg, agent, explicit, &env);
        assert_eq!(pick(Some(&agent), Some("p/run")).as_deref(), Some("p/run"));
        assert_eq!(pick(Some(&agent), None).as_deref(), Some("p/agent"));
        assert_eq!(pick(None, None).as_deref(), Some("p/default"));
    }
}
