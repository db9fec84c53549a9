//! Tests of the web chat's file references: ids are one hex component, frames' files are
//! bounded, an upload is read once, capped, and never through a link.

use proptest::prelude::*;

use super::*;

const ID: &str = "0123456789abcdef0123456789abcdef";

fn upload(id: &str, name: &str, mime: Option<&str>) -> UploadRef {
    UploadRef {
        id: id.into(),
        name: name.into(),
        mime: mime.map(Into::into),
    }
}

/// Catches: a path, a dot-dot or an upper-case/short id taken for an upload id.
#[test]
fn only_lowercase_hex_ids_of_the_right_length_are_ids() {
    assert!(valid_id(ID));
    for bad in [
        "",
        "..",
        "../../etc/passwd",
        &ID[1..],
        &ID.to_uppercase(),
        &format!("{ID}0"),
        "0123456789abcdef0123456789abcde/",
    ] {
        assert!(!valid_id(bad), "{bad}");
    }
}

/// Catches: too many files, a bad id or a huge name taken; an image not told apart.
#[test]
fn frame_files_become_media_within_bounds() {
    let m = media_of(&[
        upload(ID, "cat.png", Some("image/png")),
        upload(ID, "a.pdf", None),
    ])
    .expect("test setup");
    assert_eq!(
        (m[0].kind, m[1].kind),
        (MediaKind::Photo, MediaKind::Document)
    );
    assert_eq!(m[0].source, ID);
    assert!(media_of(&vec![upload(ID, "a", None); 11]).is_err());
    assert!(media_of(&[upload("../x", "a", None)]).is_err());
    assert!(media_of(&[upload(ID, &"n".repeat(2000), None)]).is_err());
}

/// Catches: an upload read twice, a capped copy left behind, a link followed.
#[tokio::test]
async fn an_upload_is_taken_once_capped_and_never_through_a_link() {
    let dir = std::env::temp_dir().join(format!("sb-webchat-files-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("test setup");
    let up = UploadDir(dir.clone());
    std::fs::write(dir.join(ID), b"hello").expect("test setup");
    let mut out = Vec::new();
    assert_eq!(up.fetch(ID, 100, &mut out).await, Ok(5));
    assert_eq!(out, b"hello");
    assert!(
        up.fetch(ID, 100, &mut Vec::new()).await.is_err(),
        "taken once"
    );
    std::fs::write(dir.join(ID), b"too long").expect("test setup");
    assert_eq!(
        up.fetch(ID, 3, &mut Vec::new()).await,
        Err(MediaError::TooBig { limit: 3 })
    );
    assert!(!dir.join(ID).exists());
    std::fs::write(dir.join("secret"), b"secret").expect("test setup");
    std::os::unix::fs::symlink(dir.join("secret"), dir.join(ID)).expect("test setup");
    assert!(up.fetch(ID, 100, &mut Vec::new()).await.is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_download_id_is_the_copy_folder() {
    let p = std::path::Path::new("/state/media/out")
        .join(ID)
        .join("r.pdf");
    assert_eq!(download_id(&p).as_deref(), Some(ID));
    assert_eq!(download_id(std::path::Path::new("/etc/passwd")), None);
}

proptest! {
    #![proptest_config(crate::proptest_cases::config())]

    /// Catches: a panic on any frame a browser can send, and an accepted file whose id is
    /// not one safe path component.
    #[test]
    fn any_message_frame_parses_or_is_refused(raw in any::<String>(), id in "[0-9a-fA-F./]{0,40}", name in any::<String>()) {
        let frame = serde_json::json!({"type": "message", "text": raw, "files": [{"id": id, "name": name}]});
        if let Ok(crate::webchat::ClientFrame::Message { files, .. }) = serde_json::from_value(frame) {
            if let Ok(media) = media_of(&files) {
                for m in media {
                    prop_assert!(valid_id(&m.source));
                    prop_assert!(!m.source.contains('/') && !m.source.contains('.'));
                }
            }
        }
    }
}
