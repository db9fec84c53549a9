//! The note that tells the agent a file arrived, and reading it back: the transcript
//! stores the note only (`[photo received: inbox/photo_7.jpg (image/jpeg, 512 KB)]`),
//! and the images a vision model is sent are found again from it at request time.

use switchboard_channels::MediaKind;

/// What a received file's note says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub label: String,
    /// Workspace-relative: `inbox/<name>`.
    pub path: String,
    pub mime: String,
    pub size: u64,
}

impl Note {
    pub fn new(kind: MediaKind, name: &str, mime: &str, size: u64) -> Note {
        Note {
            label: kind.label().to_string(),
            path: format!("{}/{name}", super::INBOX),
            mime: mime.to_string(),
            size,
        }
    }

    /// `[photo received: inbox/x.jpg (image/jpeg, 512 KB)]`.
    pub fn render(&self) -> String {
        format!(
            "[{} received: {} ({}, {})]",
            self.label,
            self.path,
            self.mime,
            human_size(self.size)
        )
    }

    /// A voice note's or audio's note when its words follow.
    pub fn render_transcribed(&self) -> String {
        format!(
            "[{} received: {} ({}, {}); transcript below]",
            self.label,
            self.path,
            self.mime,
            human_size(self.size)
        )
    }
}

/// `512 KB`, `3.4 MB`, `17 bytes`.
pub fn human_size(bytes: u64) -> String {
    const KB: u64 = 1024;
    const MB: u64 = 1024 * 1024;
    if bytes < KB {
        format!("{bytes} bytes")
    } else if bytes < MB {
        format!("{} KB", bytes.div_ceil(KB))
    } else {
        format!("{:.1} MB", bytes as f64 / MB as f64)
    }
}

/// The name of the inbox image a line of a user message notes: a line that is exactly a
/// received-file note with an `image/` type and a path `inbox/<one component>`. A note
/// typed by hand names at most a file already in the agent's own inbox, which the sender
/// could have the agent read anyway; the file is checked again when it is loaded.
pub fn image_name(line: &str) -> Option<&str> {
    let inner = line.trim().strip_prefix('[')?.strip_suffix(")]")?;
    let (_, rest) = inner.split_once(" received: ")?;
    let (path, meta) = rest.rsplit_once(" (")?;
    let (mime, _) = meta.split_once(", ")?;
    if !mime.starts_with("image/") {
        return None;
    }
    let name = path.strip_prefix(super::INBOX)?.strip_prefix('/')?;
    let safe = !name.is_empty()
        && !name.contains(['/', '\\'])
        && !name.starts_with('.')
        && !name.chars().any(char::is_control);
    safe.then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_note_reads_back() {
        let n = Note::new(MediaKind::Photo, "photo_7.jpg", "image/jpeg", 524_288);
        assert_eq!(
            n.render(),
            "[photo received: inbox/photo_7.jpg (image/jpeg, 512 KB)]"
        );
        assert_eq!(image_name(&n.render()), Some("photo_7.jpg"));
        let doc = Note::new(MediaKind::Document, "a (1).pdf", "application/pdf", 10);
        assert_eq!(image_name(&doc.render()), None);
        let png = Note::new(MediaKind::Document, "a (1).png", "image/png", 10);
        assert_eq!(image_name(&png.render()), Some("a (1).png"));
        assert_eq!(
            image_name("[photo received: inbox/../secret.png (image/png, 1 KB)]"),
            None
        );
        assert_eq!(
            image_name("[photo received: /etc/x.png (image/png, 1 KB)]"),
            None
        );
        assert_eq!(human_size(3 * 1024 * 1024 + 1), "3.0 MB");
    }

    proptest! {
        #![proptest_config(crate::proptest_cases::config())]

        /// Whatever a line holds, a name read from it is one component inside the inbox.
        #[test]
        fn names_read_from_lines_stay_in_the_inbox(line in any::<String>(), name in "[ -~]{0,20}") {
            for l in [line.clone(), format!("[photo received: inbox/{name} (image/png, 1 KB)]")] {
                if let Some(n) = image_name(&l) {
                    prop_assert!(!n.is_empty() && !n.contains('/') && !n.starts_with('.'));
                }
            }
        }
    }
}
