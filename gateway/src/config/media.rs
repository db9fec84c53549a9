//! The `media` section: how large a file a chat may send in, how audio is transcribed, and
//! how many turns of images are sent to a vision model again; and a model entry's `input`
//! kinds. Checks in `config/validate/media.rs`; the behaviour in `gateway/src/media/`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Default `media.maxBytes`: 20 MB (also the Telegram Bot API's download limit).
pub const DEFAULT_MEDIA_MAX_BYTES: u64 = 20 * 1024 * 1024;
/// Smallest and largest `media.maxBytes`.
pub const MIN_MEDIA_MAX_BYTES: u64 = 1024;
pub const MAX_MEDIA_MAX_BYTES: u64 = 100 * 1024 * 1024;
/// Default `media.images.turns`.
pub const DEFAULT_IMAGE_TURNS: u32 = 3;
/// Largest `media.images.turns`.
pub const MAX_IMAGE_TURNS: u32 = 50;
/// Default `media.keepDays`.
pub const DEFAULT_KEEP_DAYS: u32 = 7;
/// Largest `media.keepDays`.
pub const MAX_KEEP_DAYS: u32 = 365;

/// `media`: files sent to the bot (photos, documents, voice notes, attachments, uploads).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct MediaConfig {
    /// Largest file taken from a chat, in bytes (1024 to 104857600; default 20 MB). A
    /// bigger one is refused with a reply to its sender; the rest of the message is kept.
    pub max_bytes: u64,
    /// Speech to text for voice notes and audio files.
    pub audio: MediaAudioConfig,
    /// Images sent to vision models.
    pub images: MediaImagesConfig,
    /// Days a file the agent sent in the web chat stays downloadable after it was
    /// delivered (0 to 365; default 7). Telegram's and Discord's copies are removed once
    /// delivered; 0 removes the web chat's at the next sweep (at start, then hourly).
    pub keep_days: u32,
}

impl Default for MediaConfig {
    fn default() -> Self {
        MediaConfig {
            max_bytes: DEFAULT_MEDIA_MAX_BYTES,
            audio: MediaAudioConfig::default(),
            images: MediaImagesConfig::default(),
            keep_days: DEFAULT_KEEP_DAYS,
        }
    }
}

/// `media.audio`: the transcription model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct MediaAudioConfig {
    /// `provider/model` of an OpenAI-compatible transcription model (e.g.
    /// `"openai/whisper-1"`), called at `{baseUrl}/audio/transcriptions`. Unset: voice
    /// notes reach the agent as a file path, untranscribed.
    pub model: Option<String>,
}

/// `media.images`: which images a vision model is sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct MediaImagesConfig {
    /// Images of the latest this many user messages that carry images are sent as images
    /// (0 to 50; default 3); older ones reach the model as their note only, so a picture
    /// is not paid for on every later turn.
    pub turns: u32,
}

impl Default for MediaImagesConfig {
    fn default() -> Self {
        MediaImagesConfig {
            turns: DEFAULT_IMAGE_TURNS,
        }
    }
}

/// What a model takes as input (`models.providers.<p>.models[].input`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ModelInput {
    Text,
    Image,
}
