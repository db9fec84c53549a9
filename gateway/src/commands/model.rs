//! `/model` and `/think`: the chat picks its session's model and thinking level (stored
//! on the session row, so they outlast a restart; `/new` starts with the defaults). A
//! choice applies from the session's next run; the model is resolved the one way runs
//! resolve it (`models::resolve_for`).

use std::sync::Arc;

use crate::agent::models::{self, Pick};
use crate::agent::provider::Thinking;
use crate::config::Config;
use crate::runtime::Runtime;
use crate::store::{Choice, SessionChoices, StoreError};

/// Longest model reference taken from the chat.
const MAX_REFERENCE: usize = 200;

/// `/model …`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelCommand {
    /// List the configured models, the current one marked.
    Show,
    /// Use this `provider/model` in this session.
    Set(String),
    /// Back to the agent's model.
    Default,
}

/// `/think …`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ThinkCommand {
    Show,
    Set(Thinking),
    Default,
}

pub const MODEL_USAGE: &str = "Usage: /model [provider/model | default]";
pub const THINK_USAGE: &str = "Usage: /think [off | low | medium | high | default]";

pub fn parse_model(args: &[&str]) -> Result<ModelCommand, String> {
    match args {
        [] => Ok(ModelCommand::Show),
        [d] if d.eq_ignore_ascii_case("default") => Ok(ModelCommand::Default),
        [m] if m.len() <= MAX_REFERENCE && m.contains('/') => Ok(ModelCommand::Set(m.to_string())),
        _ => Err(MODEL_USAGE.into()),
    }
}

pub fn parse_think(args: &[&str]) -> Result<ThinkCommand, String> {
    match args {
        [] => Ok(ThinkCommand::Show),
        [d] if d.eq_ignore_ascii_case("default") => Ok(ThinkCommand::Default),
        [level] => level
            .parse()
            .map(ThinkCommand::Set)
            .map_err(|_| THINK_USAGE.to_string()),
        _ => Err(THINK_USAGE.into()),
    }
}

/// What picks the agent's own model (without the session's choice).
fn agent_pick<'a>(
    agent: Option<&'a crate::config::AgentEntry>,
    def: Option<&'a crate::agents::AgentDef>,
) -> Pick<'a> {
    Pick {
        agent,
        definition: def.and_then(|d| d.model.as_deref()),
        ..Pick::default()
    }
}

/// The `Model:` value of `/status`: the session's model, and the agent's when the
/// session chose another.
pub(crate) fn status_line(
    rt: &Runtime,
    cfg: &Arc<Config>,
    agent_id: &str,
    choices: &SessionChoices,
) -> String {
    let agent = crate::config::agent_entry(cfg, agent_id);
    let def = rt.agents(cfg).get(agent_id).cloned();
    let pick = agent_pick(agent.as_ref(), def.as_deref());
    let default = models::default_reference(cfg, &pick, &rt.http.keys);
    match (&choices.model, default) {
        (Some(m), Some(d)) if *m != d => format!("{m} (chosen with /model; the agent's: {d})"),
        (Some(m), None) => format!("{m} (chosen with /model)"),
        (_, Some(d)) => d,
        (None, None) => "none configured".into(),
    }
}

/// The `Thinking:` value of `/status`.
pub(crate) fn thinking_line(choices: &SessionChoices) -> String {
    match &choices.thinking {
        Some(t) => format!("{t} (chosen with /think)"),
        None => "default".into(),
    }
}

/// " It applies from the next run; the current one keeps its own." when a run is active.
fn from_next_run(rt: &Runtime, session_key: &str) -> &'static str {
    if rt.active_run(session_key).is_some() {
        " The run in progress keeps its settings; this applies from the next one."
    } else {
        ""
    }
}

pub async fn execute_model(
    rt: &Arc<Runtime>,
    session_key: &str,
    agent_id: &str,
    cmd: ModelCommand,
) -> Result<String, StoreError> {
    let cfg = rt.config();
    let agent = crate::config::agent_entry(&cfg, agent_id);
    let def = rt.agents(&cfg).get(agent_id).cloned();
    let pick = agent_pick(agent.as_ref(), def.as_deref());
    let default = models::default_reference(&cfg, &pick, &rt.http.keys);
    let choices = rt.store.session_choices(session_key).await?;
    // Every model the chat may pick: the configured ones, and the agent's own chain.
    let mut known = models::configured(&cfg);
    if let Some((primary, fallbacks)) = models::chain_for(&cfg, &pick, &rt.http.keys) {
        for m in std::iter::once(primary).chain(fallbacks) {
            if !known.contains(&m) {
                known.push(m);
            }
        }
    }
    let current = choices.model.clone().or_else(|| default.clone());
    let list = || render_list(&known, current.as_deref(), default.as_deref());
    match cmd {
        ModelCommand::Show => Ok(list()),
        ModelCommand::Set(m) => {
            if !known.contains(&m) {
                return Ok(format!(
                    "Unknown model {}.\n{}",
                    super::cut_name(&m),
                    list()
                ));
            }
            if let Err(e) = models::resolve(&cfg, Some(&m), &rt.http, &rt.http.keys) {
                return Ok(format!("⚠️ {m} cannot be used: {e}"));
            }
            let value = (Some(&m) != default.as_ref()).then_some(m.as_str());
            rt.store
                .set_session_choice(session_key, agent_id, Choice::Model, value)
                .await?;
            Ok(format!(
                "This session now uses {m}.{}",
                from_next_run(rt, session_key)
            ))
        }
        ModelCommand::Default => {
            rt.store
                .set_session_choice(session_key, agent_id, Choice::Model, None)
                .await?;
            Ok(format!(
                "This session uses the agent's model again: {}.{}",
                default.as_deref().unwrap_or("none configured"),
                from_next_run(rt, session_key)
            ))
        }
    }
}

/// The model list: one per line, the current one marked, the agent's default named.
fn render_list(known: &[String], current: Option<&str>, default: Option<&str>) -> String {
    if known.is_empty() {
        return "No models are configured (models.providers).".into();
    }
    let mut out =
        String::from("Models (/model provider/model to switch, /model default to reset):");
    for m in known {
        let mark = if Some(m.as_str()) == current {
            "▶"
        } else {
            "•"
        };
        let tag = if Some(m.as_str()) == default {
            " (agent default)"
        } else {
            ""
        };
        out.push_str(&format!("\n{mark} {m}{tag}"));
    }
    out
}

pub async fn execute_think(
    rt: &Arc<Runtime>,
    session_key: &str,
    agent_id: &str,
    cmd: ThinkCommand,
) -> Result<String, StoreError> {
    match cmd {
        ThinkCommand::Show => {
            let choices = rt.store.session_choices(session_key).await?;
            Ok(format!(
                "Thinking: {}. {THINK_USAGE}",
                thinking_line(&choices)
            ))
        }
        ThinkCommand::Set(level) => {
            let text = level.to_string();
            rt.store
                .set_session_choice(session_key, agent_id, Choice::Thinking, Some(&text))
                .await?;
            Ok(format!(
                "Thinking for this session: {text}.{}",
                from_next_run(rt, session_key)
            ))
        }
        ThinkCommand::Default => {
            rt.store
                .set_session_choice(session_key, agent_id, Choice::Thinking, None)
                .await?;
            Ok(format!(
                "Thinking for this session: the agent's default.{}",
                from_next_run(rt, session_key)
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Catches: a level or reference read wrong, or a bad argument taken for a choice.
    #[test]
    fn parses_model_and_think_arguments() {
        assert_eq!(parse_model(&[]), Ok(ModelCommand::Show));
        assert_eq!(parse_model(&["DEFAULT"]), Ok(ModelCommand::Default));
        assert_eq!(
            parse_model(&["openai/gpt-4o"]),
            Ok(ModelCommand::Set("openai/gpt-4o".into()))
        );
        assert_eq!(parse_model(&["gpt-4o"]), Err(MODEL_USAGE.into()));
        assert_eq!(parse_model(&["a/b", "c"]), Err(MODEL_USAGE.into()));
        let long = format!("p/{}", "m".repeat(MAX_REFERENCE));
        assert_eq!(parse_model(&[&long]), Err(MODEL_USAGE.into()));
        assert_eq!(parse_think(&[]), Ok(ThinkCommand::Show));
        assert_eq!(
            parse_think(&["High"]),
            Ok(ThinkCommand::Set(Thinking::High))
        );
        assert_eq!(parse_think(&["off"]), Ok(ThinkCommand::Set(Thinking::Off)));
        assert_eq!(parse_think(&["default"]), Ok(ThinkCommand::Default));
        assert_eq!(parse_think(&["lots"]), Err(THINK_USAGE.into()));
    }

    #[test]
    fn the_list_marks_the_current_and_the_default() {
        let known = vec!["a/x".to_string(), "b/y".to_string()];
        assert_eq!(
            render_list(&known, Some("b/y"), Some("a/x")),
            "Models (/model provider/model to switch, /model default to reset):\n• a/x (agent default)\n▶ b/y"
        );
    }
}
