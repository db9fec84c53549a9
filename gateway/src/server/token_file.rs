//! The generated gateway token (README, Security): `<state_dir>/gateway.token`, made on the
//! first start without `gateway.auth.token` or `$SWITCHBOARD_TOKEN` and reused after. It
//! is born with mode 0600 (a private temporary file linked into place, so no other user
//! can read it even for an instant, and two starting processes agree on one token), and
//! refused when it is not a regular file of this user readable by it alone.

use std::fs::{File, OpenOptions};
use std::io::{Read as _, Write as _};
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use crate::config::{AuthConfig, AuthMode};

/// The file's name inside the state dir.
pub const TOKEN_FILE: &str = "gateway.token";
/// Random bytes in a token (256 bits), written as unpadded base64url (43 characters).
const TOKEN_BYTES: usize = 32;
/// The longest file accepted as a token (a generated one is 43 characters and a newline).
const MAX_FILE_BYTES: u64 = 4096;

/// Why the token file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TokenFileError {
    #[error("cannot read the gateway token {0}: {1}")]
    Read(PathBuf, std::io::Error),
    #[error("cannot create the gateway token {0}: {1}")]
    Create(PathBuf, std::io::Error),
    #[error("refusing the gateway token {0}: it is not a regular file (remove it; a new token is made at the next start)")]
    NotAFile(PathBuf),
    #[error("refusing the gateway token {0}: its mode {1:o} lets others read or change it (chmod 600 it, or remove it for a new one)")]
    TooOpen(PathBuf, u32),
    #[error("refusing the gateway token {0}: it belongs to another user (uid {1})")]
    NotOwned(PathBuf, u32),
    #[error("refusing the gateway token {0}: it is empty, too long, or holds whitespace or control characters (remove it for a new one)")]
    Malformed(PathBuf),
}

/// A token read from, or just written to, the state dir.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileToken {
    pub token: String,
    pub path: PathBuf,
    /// Made by this call (the first start without a configured token).
    pub created: bool,
}

/// Where the token in force comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenSource {
    /// `gateway.auth.token` or `$SWITCHBOARD_TOKEN`.
    Configured,
    /// The generated file in the state dir.
    File(FileToken),
    /// `gateway.auth.mode: "none"`.
    Off,
}

/// The token every route but `/healthz` (and the pages) needs, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayToken {
    pub token: Option<String>,
    pub source: TokenSource,
}

/// The daemon's token: the configured one, else the generated one (made now if needed),
/// none with `mode: "none"`.
pub fn for_daemon(
    auth: &AuthConfig,
    env: &dyn Fn(&str) -> Option<String>,
    state_dir: &Path,
) -> Result<GatewayToken, TokenFileError> {
    if auth.mode == AuthMode::None {
        return Ok(GatewayToken {
            token: None,
            source: TokenSource::Off,
        });
    }
    if let Some(token) = auth.effective_token(env) {
        return Ok(GatewayToken {
            token: Some(token),
            source: TokenSource::Configured,
        });
    }
    let file = load_or_create(state_dir)?;
    Ok(GatewayToken {
        token: Some(file.token.clone()),
        source: TokenSource::File(file),
    })
}

/// The CLI's token for a daemon of this config and state dir: the configured one, else
/// the generated file's (never made here: a missing file means the daemon never ran).
pub fn for_client(
    auth: &AuthConfig,
    env: &dyn Fn(&str) -> Option<String>,
    state_dir: &Path,
) -> Result<Option<String>, TokenFileError> {
    if auth.mode == AuthMode::None {
        return Ok(None);
    }
    match auth.effective_token(env) {
        Some(t) => Ok(Some(t)),
        None => Ok(read(state_dir)?.map(|f| f.token)),
    }
}

/// `<state_dir>/gateway.token`.
pub fn path_in(state_dir: &Path) -> PathBuf {
    state_dir.join(TOKEN_FILE)
}

/// The token in the state dir, or `None` when there is no file (the CLI's reading).
pub fn read(state_dir: &Path) -> Result<Option<FileToken>, TokenFileError> {
    let path = path_in(state_dir);
    match open_checked(&path)? {
        None => Ok(None),
        Some(file) => Ok(Some(FileToken {
            token: read_token(&path, file)?,
            path,
            created: false,
        })),
    }
}

/// The token in the state dir, made first if there is none (the daemon's start).
pub fn load_or_create(state_dir: &Path) -> Result<FileToken, TokenFileError> {
    if let Some(found) = read(state_dir)? {
        return Ok(found);
    }
    let path = path_in(state_dir);
    let token = generate().map_err(|e| TokenFileError::Create(path.clone(), e))?;
    match publish(state_dir, &path, &token) {
        Ok(()) => Ok(FileToken {
            token,
            path,
            created: true,
        }),
        // Another process made it between the look and the link: use theirs.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            read(state_dir)?.ok_or_else(|| TokenFileError::Create(path.clone(), e))
        }
        Err(e) => Err(TokenFileError::Create(path, e)),
    }
}

/// Opens the file without following a symlink and checks what was opened (not the name,
/// which could be swapped between a check and the open).
fn open_checked(path: &Path) -> Result<Option<File>, TokenFileError> {
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        // ELOOP: the name is a symlink.
        Err(e) if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => {
            return Err(TokenFileError::NotAFile(path.to_owned()))
        }
        Err(e) => return Err(TokenFileError::Read(path.to_owned(), e)),
    };
    let meta = file
        .metadata()
        .map_err(|e| TokenFileError::Read(path.to_owned(), e))?;
    if !meta.file_type().is_file() {
        return Err(TokenFileError::NotAFile(path.to_owned()));
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(TokenFileError::TooOpen(path.to_owned(), mode));
    }
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me {
        return Err(TokenFileError::NotOwned(path.to_owned(), meta.uid()));
    }
    Ok(Some(file))
}

fn read_token(path: &Path, file: File) -> Result<String, TokenFileError> {
    let mut text = String::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| TokenFileError::Read(path.to_owned(), e))?;
    let token = text.strip_suffix('\n').unwrap_or(&text);
    let usable = !token.is_empty()
        && text.len() as u64 <= MAX_FILE_BYTES
        && !token.chars().any(|c| c.is_whitespace() || c.is_control());
    if usable {
        Ok(token.to_owned())
    } else {
        Err(TokenFileError::Malformed(path.to_owned()))
    }
}

/// Writes `token` to a private temporary file (created 0600), syncs it, and links it to
/// `path`: the name appears complete or not at all, and never over another one.
fn publish(dir: &Path, path: &Path, token: &str) -> std::io::Result<()> {
    let tmp = dir.join(format!(".{TOKEN_FILE}.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let written = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(&tmp)?;
        f.write_all(format!("{token}\n").as_bytes())?;
        f.sync_all()?;
        std::fs::hard_link(&tmp, path)
    })();
    let _ = std::fs::remove_file(&tmp);
    written?;
    // The link survives a crash once the folder is synced.
    File::open(dir)?.sync_all()
}

/// 32 bytes from the kernel's CSPRNG as unpadded base64url.
fn generate() -> std::io::Result<String> {
    let mut bytes = [0u8; TOKEN_BYTES];
    File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(base64url(&bytes))
}

fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk.first().copied().unwrap_or(0),
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            let index = (n >> (18 - 6 * i)) & 0x3f;
            out.push(char::from(ALPHABET[index as usize]));
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    /// Catches: a token file readable by others, a new token at each start, or a short or
    /// non-URL-safe token.
    #[test]
    fn the_token_is_made_once_private_and_url_safe() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read(dir.path()).unwrap().is_none());
        let first = load_or_create(dir.path()).unwrap();
        assert!(first.created);
        assert_eq!(first.token.len(), 43, "{}", first.token);
        assert!(first
            .token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
        assert_eq!(mode(&first.path), 0o600);
        let again = load_or_create(dir.path()).unwrap();
        assert_eq!(again.token, first.token);
        assert!(!again.created);
        let other = load_or_create(tempfile::tempdir().unwrap().path()).unwrap();
        assert_ne!(other.token, first.token);
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [TOKEN_FILE]);
    }

    /// Catches: a token file others could read or swap being trusted.
    #[test]
    fn a_wide_mode_a_symlink_or_a_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let made = load_or_create(dir.path()).unwrap();
        for wide in [0o640, 0o604, 0o620, 0o666] {
            std::fs::set_permissions(&made.path, std::fs::Permissions::from_mode(wide)).unwrap();
            let err = load_or_create(dir.path()).unwrap_err();
            assert!(
                matches!(err, TokenFileError::TooOpen(_, m) if m == wide),
                "{err}"
            );
            assert!(err.to_string().contains("chmod 600"), "{err}");
        }
        std::fs::set_permissions(&made.path, std::fs::Permissions::from_mode(0o400)).unwrap();
        assert_eq!(load_or_create(dir.path()).unwrap().token, made.token);

        let linked = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(&made.path, path_in(linked.path())).unwrap();
        let err = load_or_create(linked.path()).unwrap_err();
        assert!(matches!(err, TokenFileError::NotAFile(_)), "{err}");

        let folder = tempfile::tempdir().unwrap();
        std::fs::create_dir(path_in(folder.path())).unwrap();
        let err = load_or_create(folder.path()).unwrap_err();
        assert!(matches!(err, TokenFileError::NotAFile(_)), "{err}");
    }

    /// Catches: an empty or damaged file taken as a token (an empty token would match an
    /// empty `Bearer`).
    #[test]
    fn a_damaged_file_is_refused() {
        for text in ["", "\n", "a b\n", "tok\r\n", "x\n\n"] {
            let dir = tempfile::tempdir().unwrap();
            let path = path_in(dir.path());
            std::fs::write(&path, text).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
            let err = load_or_create(dir.path()).unwrap_err();
            assert!(
                matches!(err, TokenFileError::Malformed(_)),
                "{text:?}: {err}"
            );
        }
    }

    #[test]
    fn base64url_matches_the_rfc_vectors() {
        assert_eq!(base64url(b""), "");
        assert_eq!(base64url(b"f"), "Zg");
        assert_eq!(base64url(b"fo"), "Zm8");
        assert_eq!(base64url(b"foo"), "Zm9v");
        assert_eq!(base64url(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
    }
}
