//! Speech to text: a voice note or audio file sent to an OpenAI-compatible
//! `POST {baseUrl}/audio/transcriptions` (multipart: `model`, `file`), the model named by
//! `media.audio.model`. The answer is read bounded; a failure leaves the file's note.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use crate::config::{Config, ProviderApi};
use crate::runtime::EnvKeys;

/// Longest a transcription may take.
const TIMEOUT: Duration = Duration::from_secs(120);
/// Largest transcription answer read, in bytes.
const MAX_ANSWER: usize = 256 * 1024;
/// Longest transcript kept in the message, in bytes.
pub const MAX_TRANSCRIPT: usize = 32 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum TranscribeError {
    #[error("{0}")]
    Config(String),
    #[error("transcription failed: {0}")]
    Failed(String),
}

#[derive(Deserialize)]
struct Answer {
    text: String,
}

/// The words of the audio file at `file` (named `name`, of type `mime`), from the model
/// `media.audio.model` names.
pub async fn transcribe(
    cfg: &Config,
    env: &EnvKeys,
    http: &reqwest::Client,
    file: &Path,
    name: &str,
    mime: &str,
) -> Result<String, TranscribeError> {
    let reference = cfg
        .media
        .audio
        .model
        .as_deref()
        .ok_or_else(|| TranscribeError::Config("media.audio.model is not set".into()))?;
    let (provider, model) = reference
        .split_once('/')
        .ok_or_else(|| TranscribeError::Config(format!("bad model reference {reference}")))?;
    let (base, key) = match cfg.models.providers.get(provider) {
        Some(p) if p.api == ProviderApi::OpenaiChat => (
            p.base_url
                .clone()
                .unwrap_or_else(|| "https://api.openai.com/v1".into()),
            p.api_key.clone().or_else(|| env.openai.clone()),
        ),
        Some(_) => {
            return Err(TranscribeError::Config(format!(
                "provider {provider} is not OpenAI-compatible"
            )))
        }
        None if provider == "openai" => ("https://api.openai.com/v1".into(), env.openai.clone()),
        None => {
            return Err(TranscribeError::Config(format!(
                "unknown provider {provider}"
            )))
        }
    };
    let bytes = tokio::fs::read(file)
        .await
        .map_err(|e| TranscribeError::Failed(format!("cannot read the file: {e}")))?;
    // `mime` is the sanitized type (`media::receive`), always a valid `type/subtype`.
    let part = reqwest::multipart::Part::bytes(bytes)
        .file_name(name.to_string())
        .mime_str(mime)
        .map_err(|e| TranscribeError::Failed(format!("bad file type {mime}: {e}")))?;
    let form = reqwest::multipart::Form::new()
        .text("model", model.to_string())
        .text("response_format", "json")
        .part("file", part);
    let mut req = http
        .post(format!(
            "{}/audio/transcriptions",
            base.trim_end_matches('/')
        ))
        .multipart(form)
        .timeout(TIMEOUT);
    if let Some(k) = key {
        req = req.bearer_auth(k);
    }
    let resp = req
        .send()
        .await
        .map_err(|e| TranscribeError::Failed(e.without_url().to_string()))?;
    let status = resp.status();
    let body = read_bounded(resp).await?;
    if !status.is_success() {
        return Err(TranscribeError::Failed(format!(
            "HTTP {status}: {}",
            crate::text::head(&String::from_utf8_lossy(&body), 300)
        )));
    }
    let answer: Answer = serde_json::from_slice(&body)
        .map_err(|e| TranscribeError::Failed(format!("unreadable answer: {e}")))?;
    Ok(crate::text::head(answer.text.trim(), MAX_TRANSCRIPT).to_string())
}

async fn read_bounded(mut resp: reqwest::Response) -> Result<Vec<u8>, TranscribeError> {
    let mut body = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| TranscribeError::Failed(e.without_url().to_string()))?
    {
        if body.len() + chunk.len() > MAX_ANSWER {
            return Err(TranscribeError::Failed(format!(
                "the answer is over {MAX_ANSWER} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
