//! The installation secret behind the keyed digests: 32 random bytes, hex, in a file readable
//! only by its owner (0600), kept outside the database — `$KAKEAI_PII_KEY_FILE`, else
//! `<data dir>/pii.key` — and created on first use. A file that exists but cannot be read or
//! parsed is an error, never replaced: a new secret would silently unlink every stored digest.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::digest::{DigestKey, KEY_LEN};

/// Environment override of the secret's file (tests, or a secret kept on another disk).
pub const KEY_FILE_ENV: &str = "KAKEAI_PII_KEY_FILE";
/// The file name under the data dir.
pub const KEY_FILE: &str = "pii.key";

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error(
        "no data directory for the PII key (HOME unset?); set {KEY_FILE_ENV} or KAKEAI_DATA_DIR"
    )]
    NoDataDir,
    #[error("{}: cannot {what} the PII key: {source}", path.display())]
    Io {
        path: PathBuf,
        what: &'static str,
        source: std::io::Error,
    },
    #[error("{}:1:1: the PII key must be {} hex digits; not replacing it (stored digests depend on it)", path.display(), KEY_LEN * 2)]
    Malformed { path: PathBuf },
    #[error("{}: the PII key is readable by others (mode {mode:o}); run chmod 600 on it", path.display())]
    Exposed { path: PathBuf, mode: u32 },
    #[error("cannot draw a random PII key: {0}")]
    Random(String),
}

/// Where the secret lives.
pub fn key_path() -> Option<PathBuf> {
    std::env::var_os(KEY_FILE_ENV)
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| crate::config::data_dir().map(|d| d.join(KEY_FILE)))
}

fn parse(text: &str) -> Option<[u8; KEY_LEN]> {
    let t = text.trim();
    if t.len() != KEY_LEN * 2 || !t.is_ascii() {
        return None;
    }
    let mut out = [0u8; KEY_LEN];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(t.get(i * 2..i * 2 + 2)?, 16).ok()?;
    }
    Some(out)
}

fn read(path: &Path) -> Result<DigestKey, KeyError> {
    let io = |what, source| KeyError::Io {
        path: path.to_path_buf(),
        what,
        source,
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)
            .map_err(|e| io("inspect", e))?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            return Err(KeyError::Exposed {
                path: path.to_path_buf(),
                mode: mode & 0o777,
            });
        }
    }
    let text = crate::limits::read_string(path).map_err(|e| io("read", e))?;
    parse(&text)
        .map(|k| DigestKey::from_bytes(&k))
        .ok_or_else(|| KeyError::Malformed {
            path: path.to_path_buf(),
        })
}

/// Reads the secret at `path`, creating it (0600, parent dirs too) when there is none.
pub fn load_or_create(path: &Path) -> Result<DigestKey, KeyError> {
    if path.exists() {
        return read(path);
    }
    let io = |what, source| KeyError::Io {
        path: path.to_path_buf(),
        what,
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::config::create_private_dirs(dir).map_err(|e| io("create the directory of", e))?;
    }
    let mut key = [0u8; KEY_LEN];
    getrandom::fill(&mut key).map_err(|e| KeyError::Random(e.to_string()))?;
    // Written whole to a private file beside it, then linked into place: the key file never
    // exists half-written, so a process killed mid-write (or a second one reading at that
    // moment) never finds an empty key and refuses every later run.
    let tmp = path.with_extension(format!("tmp.{}.{:016x}", std::process::id(), {
        let mut r = [0u8; 8];
        getrandom::fill(&mut r).map_err(|e| KeyError::Random(e.to_string()))?;
        u64::from_le_bytes(r)
    }));
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
    let written = opts
        .open(&tmp)
        .and_then(|mut f| {
            f.write_all(format!("{hex}\n").as_bytes())?;
            f.sync_all()
        })
        .map_err(|e| io("write", e));
    let linked = written.and_then(|()| match std::fs::hard_link(&tmp, path) {
        Ok(()) => Ok(DigestKey::from_bytes(&key)),
        // Another process put its key there first: use theirs.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => read(path),
        Err(e) => Err(io("create", e)),
    });
    let _ = std::fs::remove_file(&tmp);
    linked
}

static INSTALLED: OnceLock<DigestKey> = OnceLock::new();

/// Makes `key` the process's secret (an embedding program, or integration tests that need
/// to know it). Returns false when a secret was already in use; the first one stays.
pub fn install_key(key: DigestKey) -> bool {
    INSTALLED.set(key).is_ok()
}

/// The installation secret, read or created once per process.
pub fn installation_key() -> Result<&'static DigestKey, KeyError> {
    if let Some(k) = INSTALLED.get() {
        return Ok(k);
    }
    // Unit tests never touch the user's data dir.
    #[cfg(test)]
    {
        Ok(INSTALLED.get_or_init(|| DigestKey::from_bytes(&[7; KEY_LEN])))
    }
    #[cfg(not(test))]
    {
        let path = key_path().ok_or(KeyError::NoDataDir)?;
        let key = load_or_create(&path)?;
        Ok(INSTALLED.get_or_init(|| key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_created_once_private_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join(KEY_FILE);
        let a = load_or_create(&path).unwrap();
        let b = load_or_create(&path).unwrap();
        assert_eq!(a.message_digest("x"), b.message_digest("x"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let other = dir.path().join("other.key");
        let c = load_or_create(&other).unwrap();
        assert_ne!(
            a.message_digest("x"),
            c.message_digest("x"),
            "keys are random"
        );
    }

    /// Creators racing on one path all use one key, and no temporary file is left. (The
    /// window this change closes — the key file created empty, then written, so a process
    /// killed in between left a file every later run refused — is too short to hit from
    /// threads; tests/store_contention.rs's SIGKILLed `ingest` is what found it.)
    #[test]
    fn racing_creators_agree_on_one_key_and_leave_nothing_else() {
        for round in 0..20 {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(KEY_FILE);
            let keys: Vec<String> = std::thread::scope(|s| {
                let hs: Vec<_> = (0..8)
                    .map(|_| s.spawn(|| load_or_create(&path).map(|k| k.message_digest("x"))))
                    .collect();
                hs.into_iter()
                    .map(|h| h.join().unwrap().expect("a key"))
                    .collect()
            });
            assert!(keys.windows(2).all(|w| w[0] == w[1]), "round {round}");
            let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
            assert_eq!(left.len(), 1, "round {round}: {left:?}");
        }
        // A temporary file left by a killed process changes nothing.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(KEY_FILE);
        std::fs::write(path.with_extension("tmp.1.0"), "").unwrap();
        assert!(load_or_create(&path).is_ok());
    }

    #[test]
    fn a_bad_key_file_is_refused_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(KEY_FILE);
        std::fs::write(&path, "not hex\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        let e = load_or_create(&path).unwrap_err();
        assert!(matches!(e, KeyError::Malformed { .. }), "{e}");
        assert_eq!(crate::limits::read_string(&path).unwrap(), "not hex\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::write(&path, format!("{}\n", "ab".repeat(KEY_LEN))).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
            let e = load_or_create(&path).unwrap_err();
            assert!(matches!(e, KeyError::Exposed { .. }), "{e}");
        }
    }
}
