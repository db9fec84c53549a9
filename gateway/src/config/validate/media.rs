//! Checks of the `media` section: the size cap's range, the transcription model names a
//! configured OpenAI-compatible provider, the image turns' range; and model entries'
//! `input` lists.

use super::super::error::{Issue, KeyPath};
use super::super::media::{
    ModelInput, MAX_IMAGE_TURNS, MAX_KEEP_DAYS, MAX_MEDIA_MAX_BYTES, MIN_MEDIA_MAX_BYTES,
};
use super::super::{Config, ProviderApi};

pub(super) fn media(config: &Config, out: &mut Vec<Issue>) {
    let m = &config.media;
    let at = KeyPath::dotted("media");
    if !(MIN_MEDIA_MAX_BYTES..=MAX_MEDIA_MAX_BYTES).contains(&m.max_bytes) {
        out.push(Issue::new(
            at.key("maxBytes"),
            format!(
                "must be {MIN_MEDIA_MAX_BYTES} to {MAX_MEDIA_MAX_BYTES} bytes, got {}",
                m.max_bytes
            ),
        ));
    }
    if m.images.turns > MAX_IMAGE_TURNS {
        out.push(Issue::new(
            at.key("images").key("turns"),
            format!("must be 0 to {MAX_IMAGE_TURNS}, got {}", m.images.turns),
        ));
    }
    if m.keep_days > MAX_KEEP_DAYS {
        out.push(Issue::new(
            at.key("keepDays"),
            format!("must be 0 to {MAX_KEEP_DAYS} days, got {}", m.keep_days),
        ));
    }
    if let Some(model) = &m.audio.model {
        let at = at.key("audio").key("model");
        match model.split_once('/') {
            Some((p, id)) if !p.is_empty() && !id.is_empty() => {
                match config.models.providers.get(p) {
                    Some(prov) if prov.api == ProviderApi::OpenaiChat => {}
                    Some(_) => out.push(Issue::new(
                        at,
                        format!("provider `{p}` is not OpenAI-compatible (api: openai-chat); transcription uses /audio/transcriptions"),
                    )),
                    // The implicit `openai` provider (OPENAI_API_KEY) is fine.
                    None if p == "openai" => {}
                    None => out.push(Issue::new(
                        at,
                        format!("unknown provider `{p}` (define it under models.providers)"),
                    )),
                }
            }
            _ => out.push(Issue::new(
                at,
                format!("must be \"provider/model\", got {model:?}"),
            )),
        }
    }
    for (name, p) in &config.models.providers {
        for (i, entry) in p.models.iter().enumerate() {
            if let Some(input) = &entry.input {
                if !input.contains(&ModelInput::Text) {
                    out.push(Issue::new(
                        KeyPath::dotted("models.providers")
                            .key(name)
                            .key("models")
                            .index(i)
                            .key("input"),
                        "must contain \"text\"",
                    ));
                }
            }
        }
    }
}
