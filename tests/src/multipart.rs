//! A `multipart/form-data` reader for the fakes (Telegram's `sendPhoto`/`sendDocument`,
//! Discord's attachment upload, the fake model's `/audio/transcriptions`): binary-safe,
//! every part with its name, file name, type and bytes.

/// One part of a multipart body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub name: String,
    /// Set on file parts.
    pub filename: Option<String>,
    pub content_type: Option<String>,
    pub data: Vec<u8>,
}

impl Part {
    /// The part's bytes as text (text fields).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.data).into_owned()
    }
}

/// The boundary of a `multipart/form-data` content type, if it is one.
pub fn boundary(content_type: &str) -> Option<String> {
    let lower = content_type.to_ascii_lowercase();
    if !lower.starts_with("multipart/form-data") {
        return None;
    }
    content_type
        .split(';')
        .find_map(|p| {
            let p = p.trim();
            p.get(..9)
                .filter(|k| k.eq_ignore_ascii_case("boundary="))
                .map(|_| &p[9..])
        })
        .map(|b| b.trim_matches('"').to_owned())
}

/// Every part of `body`, split on `boundary`. `Err` says what is malformed.
pub fn parse(body: &[u8], boundary: &str) -> Result<Vec<Part>, String> {
    let delimiter = format!("--{boundary}").into_bytes();
    let mut parts = Vec::new();
    let mut at = find(body, &delimiter, 0).ok_or("no multipart boundary in the body")?;
    loop {
        at += delimiter.len();
        if body[at..].starts_with(b"--") {
            return Ok(parts);
        }
        if body[at..].starts_with(b"\r\n") {
            at += 2;
        }
        let head_end = find(body, b"\r\n\r\n", at).ok_or("a multipart part without headers")?;
        let head = String::from_utf8_lossy(&body[at..head_end]).into_owned();
        let data_start = head_end + 4;
        let mut close = delimiter.clone();
        close.splice(0..0, b"\r\n".iter().copied());
        let next = find(body, &close, data_start).ok_or("a multipart part without its end")?;
        parts.push(part(&head, body[data_start..next].to_vec())?);
        at = next + 2;
    }
}

fn part(head: &str, data: Vec<u8>) -> Result<Part, String> {
    let mut name = None;
    let mut filename = None;
    let mut content_type = None;
    for line in head.split("\r\n") {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        if key.trim().eq_ignore_ascii_case("content-disposition") {
            for p in value.split(';').map(str::trim) {
                if let Some(v) = p.strip_prefix("name=") {
                    name = Some(v.trim_matches('"').to_owned());
                } else if let Some(v) = p.strip_prefix("filename=") {
                    filename = Some(v.trim_matches('"').to_owned());
                }
            }
        } else if key.trim().eq_ignore_ascii_case("content-type") {
            content_type = Some(value.trim().to_owned());
        }
    }
    Ok(Part {
        name: name.ok_or("a multipart part without a name")?,
        filename,
        content_type,
        data,
    })
}

fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if needle.is_empty() || from > hay.len() {
        return None;
    }
    hay[from..]
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_text_and_binary_parts() {
        let mut body = b"--XX\r\nContent-Disposition: form-data; name=\"chat_id\"\r\n\r\n42\r\n--XX\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"a.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n".to_vec();
        body.extend_from_slice(&[0, 13, 10, 255, 45, 45]);
        body.extend_from_slice(b"\r\n--XX--\r\n");
        let parts = parse(&body, "XX").unwrap_or_default();
        assert_eq!(
            parts,
            vec![
                Part {
                    name: "chat_id".into(),
                    filename: None,
                    content_type: None,
                    data: b"42".to_vec()
                },
                Part {
                    name: "photo".into(),
                    filename: Some("a.jpg".into()),
                    content_type: Some("image/jpeg".into()),
                    data: vec![0, 13, 10, 255, 45, 45]
                },
            ]
        );
        assert_eq!(
            boundary("multipart/form-data; boundary=\"XX\"").as_deref(),
            Some("XX")
        );
    }
}
