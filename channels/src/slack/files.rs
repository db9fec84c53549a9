//! Sending a file, Slack's external upload: `files.getUploadURLExternal` (name and
//! length) → the file's bytes streamed to the URL it answers → `files.completeUploadExternal`
//! sharing it in the channel (and thread). The upload URL must be on the configured API's
//! host or Slack's `files.slack.com` over HTTPS: a crafted answer sends the file nowhere else.

use serde_json::json;

use super::web::Body;
use super::Inner;
use crate::{ChannelError, OutboundFile};

/// Whether `url` may receive an upload: HTTPS on Slack's file host, or the scheme, host
/// and port of the configured API base (a fake in tests).
pub(super) fn allowed_upload_url(url: &str, api: &str) -> bool {
    super::received::allowed(url, api)
}

pub(super) async fn upload(
    inner: &Inner,
    channel: &str,
    thread: Option<&str>,
    file: &OutboundFile,
) -> Result<(), ChannelError> {
    if file.size > super::UPLOAD_LIMIT || file.size == 0 {
        return Err(ChannelError::Permanent(format!(
            "{} is {} bytes; Slack takes files of 1 to {} bytes",
            file.name,
            file.size,
            super::UPLOAD_LIMIT
        )));
    }
    let answer = inner
        .web
        .call(
            "files.getUploadURLExternal",
            Body::Form(vec![
                ("filename", file.name.clone()),
                ("length", file.size.to_string()),
            ]),
        )
        .await?;
    let (Some(url), Some(id)) = (answer["upload_url"].as_str(), answer["file_id"].as_str()) else {
        return Err(ChannelError::Permanent(
            "files.getUploadURLExternal answered no upload_url or file_id".into(),
        ));
    };
    if !allowed_upload_url(url, &inner.settings.api_url) {
        return Err(ChannelError::Permanent(format!(
            "files.getUploadURLExternal answered an upload URL on another host: {url}"
        )));
    }
    let f = tokio::fs::File::open(&file.path)
        .await
        .map_err(|e| ChannelError::Permanent(format!("cannot read {}: {e}", file.name)))?;
    let resp = inner
        .web
        .http()
        .post(url)
        .bearer_auth(inner.web.bot_token())
        .header("content-type", "application/octet-stream")
        .header("content-length", file.size)
        .body(reqwest::Body::from(f))
        .send()
        .await
        .map_err(|e| {
            ChannelError::Temporary(format!("uploading {}: {}", file.name, e.without_url()))
        })?;
    if !resp.status().is_success() {
        let status = resp.status();
        return Err(if status.is_server_error() {
            ChannelError::Temporary(format!("uploading {}: HTTP {status}", file.name))
        } else {
            ChannelError::Permanent(format!("uploading {}: HTTP {status}", file.name))
        });
    }
    let files = json!([{"id": id, "title": file.name}]).to_string();
    let mut form = vec![("files", files), ("channel_id", channel.to_owned())];
    if let Some(t) = thread {
        form.push(("thread_ts", t.to_owned()));
    }
    inner
        .web
        .call("files.completeUploadExternal", Body::Form(form))
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uploads_go_to_slack_or_the_configured_base_only() {
        let api = "http://127.0.0.1:4000/api";
        assert!(allowed_upload_url(
            "https://files.slack.com/upload/v1/abc",
            api
        ));
        assert!(allowed_upload_url("http://127.0.0.1:4000/upload/F1", api));
        assert!(!allowed_upload_url(
            "http://files.slack.com/upload/v1/abc",
            api
        ));
        assert!(!allowed_upload_url(
            "https://files.slack.com.evil.test/x",
            api
        ));
        assert!(!allowed_upload_url("http://127.0.0.1:4001/upload/F1", api));
        assert!(!allowed_upload_url("https://u@files.slack.com/x", api));
        assert!(!allowed_upload_url("http://169.254.169.254/", api));
    }
}
