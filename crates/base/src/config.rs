//! Where kakeai keeps its files (XDG dirs via `directories`, overridable by environment for
//! tests) and TOML loading that reports errors as path:line:col.

use std::fmt;
use std::path::{Path, PathBuf};

use directories::ProjectDirs;

/// A configuration file that could not be used. Display gives `path:line:col: message`.
#[derive(Debug, Clone, PartialEq)]
pub enum ConfigError {
    Io {
        path: PathBuf,
        message: String,
    },
    Syntax {
        path: PathBuf,
        line: usize,
        col: usize,
        message: String,
    },
    Invalid {
        path: PathBuf,
        at: Option<(usize, usize)>,
        key: Option<String>,
        message: String,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Io { path, message } => write!(f, "{}: {message}", path.display()),
            ConfigError::Syntax {
                path,
                line,
                col,
                message,
            } => {
                write!(f, "{}:{line}:{col}: {message}", path.display())
            }
            ConfigError::Invalid {
                path,
                at,
                key,
                message,
            } => {
                write!(f, "{}", path.display())?;
                if let Some((l, c)) = at {
                    write!(f, ":{l}:{c}")?;
                }
                match key {
                    Some(k) => write!(f, ": in `{k}`: {message}"),
                    None => write!(f, ": {message}"),
                }
            }
        }
    }
}

impl std::error::Error for ConfigError {}

/// A file over a limit (size, depth, encoding) is a configuration error at its position.
impl From<crate::limits::LimitError> for ConfigError {
    fn from(e: crate::limits::LimitError) -> ConfigError {
        use crate::limits::LimitError as L;
        let message = e.to_string();
        let message = message
            .split_once(": ")
            .map(|(_, m)| m.to_string())
            .unwrap_or(message);
        match e {
            L::TooDeep {
                path, line, col, ..
            }
            | L::NotUtf8 {
                path, line, col, ..
            }
            | L::Alias { path, line, col } => ConfigError::Syntax {
                path,
                line,
                col,
                message,
            },
            L::MultiDocument { path, line } => ConfigError::Syntax {
                path,
                line,
                col: 1,
                message,
            },
            L::Io { path, .. } | L::TooBig { path, .. } => ConfigError::Io { path, message },
        }
    }
}

fn project_dirs() -> Option<ProjectDirs> {
    ProjectDirs::from("", "", "kakeai")
}

/// $KAKEAI_CONFIG_DIR, else the XDG config dir (~/.config/kakeai).
pub fn config_dir() -> Option<PathBuf> {
    std::env::var_os("KAKEAI_CONFIG_DIR")
        .map(PathBuf::from)
        .or_else(|| project_dirs().map(|p| p.config_dir().to_path_buf()))
}

/// $KAKEAI_DATA_DIR, else the XDG data dir (~/.local/share/kakeai).
pub fn data_dir() -> Option<PathBuf> {
    std::env::var_os("KAKEAI_DATA_DIR")
        .map(PathBuf::from)
        .or_else(|| project_dirs().map(|p| p.data_dir().to_path_buf()))
}

/// Creates `dir` and its missing parents 0700 (the data dir holds conversations, the PII key and
/// the vault: private to its user, as the operator guide says). Dirs that exist are left alone
/// (the parent may be /tmp or a home dir).
pub fn create_private_dirs(dir: &Path) -> std::io::Result<()> {
    if dir.as_os_str().is_empty() || dir.is_dir() {
        return Ok(());
    }
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir)
}

/// 1-based line and column (in chars) of a byte offset.
pub fn line_col(text: &str, byte: usize) -> (usize, usize) {
    let byte = byte.min(text.len());
    let before = text.get(..byte).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let col = before
        .rsplit('\n')
        .next()
        .map(|l| l.chars().count())
        .unwrap_or(0)
        + 1;
    (line, col)
}

/// Parses TOML into a table; a syntax error carries path:line:col and what was expected.
pub fn load_toml_table(path: &Path, text: &str) -> Result<toml::Table, ConfigError> {
    crate::limits::toml_depth(path, text)?;
    text.parse::<toml::Table>().map_err(|e| {
        let (line, col) = e.span().map(|s| line_col(text, s.start)).unwrap_or((1, 1));
        ConfigError::Syntax {
            path: path.to_path_buf(),
            line,
            col,
            message: e.message().trim().to_string(),
        }
    })
}

/// Deep-merges `over` into `base`: tables merge key by key, everything else is replaced.
pub fn merge_tables(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge_tables(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// Deserialises a merged table; a type error names the dotted key it happened at.
pub fn from_table<T: serde::de::DeserializeOwned>(
    table: toml::Table,
    path: &Path,
) -> Result<T, ConfigError> {
    // Round-trip through text so the error carries a span we can turn into a key path.
    let text = toml::to_string(&table).map_err(|e| ConfigError::Invalid {
        path: path.to_path_buf(),
        at: None,
        key: None,
        message: e.to_string(),
    })?;
    toml::from_str::<T>(&text).map_err(|e| {
        let key = e.span().map(|s| key_at(&text, s.start));
        ConfigError::Invalid {
            path: path.to_path_buf(),
            at: None,
            key: key.filter(|k| !k.is_empty()),
            message: e.message().trim().to_string(),
        }
    })
}

/// The dotted key path of the value at `byte` in TOML text written by `toml::to_string`.
fn key_at(text: &str, byte: usize) -> String {
    // Up to the end of the line the span starts on: an unknown-field error points at the key
    // itself, so that line's key is the one meant (not the one before it).
    let byte = byte.min(text.len());
    let end = text[byte..].find('\n').map_or(text.len(), |i| byte + i);
    let before = text.get(..end).unwrap_or(text);
    let mut table = String::new();
    let mut key = String::new();
    for line in before.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            table = t.trim_matches(|c| c == '[' || c == ']').trim().to_string();
            key.clear();
        } else if let Some((k, _)) = t.split_once('=') {
            key = k.trim().trim_matches('"').to_string();
        }
    }
    match (table.is_empty(), key.is_empty()) {
        (true, _) => key,
        (false, true) => table,
        (false, false) => format!("{table}.{key}"),
    }
}

/// Finds the line:col of a dotted key (`lines.warn`) in a user's TOML file: the key's own
/// position wherever it is written (a `[table]` header, a dotted key, an inline table, an
/// array of tables), else the deepest enclosing table that is there.
pub fn locate_key(text: &str, dotted: &str) -> Option<(usize, usize)> {
    use toml::de::{DeTable, DeValue};
    let doc = DeTable::parse(text).ok()?;
    let mut table: &DeTable = doc.get_ref();
    let mut found = None;
    let parts: Vec<&str> = dotted.split('.').collect();
    for (i, part) in parts.iter().enumerate() {
        let Some((k, v)) = table.iter().find(|(k, _)| k.get_ref().as_ref() == *part) else {
            break;
        };
        found = Some(k.span().start);
        table = match v.get_ref() {
            DeValue::Table(t) => t,
            // An array of tables: the element that has the next key, else the last one.
            DeValue::Array(a) => {
                let tables = a.iter().filter_map(|e| match e.get_ref() {
                    DeValue::Table(t) => Some(t),
                    _ => None,
                });
                let next = parts.get(i + 1).copied().unwrap_or_default();
                match tables
                    .clone()
                    .find(|t| t.iter().any(|(k, _)| k.get_ref().as_ref() == next))
                    .or_else(|| tables.clone().next_back())
                {
                    Some(t) => t,
                    None => break,
                }
            }
            _ => break,
        };
    }
    found.map(|b| line_col(text, b))
}

/// Embedded defaults ⊕ the user's file (if it exists), deserialised; an error in the user's
/// file is reported at its own path:line:col, naming the key.
pub fn load_layered<T: serde::de::DeserializeOwned>(
    embedded_name: &str,
    embedded: &str,
    user: Option<&Path>,
) -> Result<T, ConfigError> {
    let user_text = match user.filter(|p| p.exists()) {
        Some(p) => Some((
            p,
            crate::limits::read_text(p, crate::limits::MAX_FILE_BYTES)?,
        )),
        None => None,
    };
    layered_from_str(
        embedded_name,
        embedded,
        user_text.as_ref().map(|(p, t)| (*p, t.as_str())),
    )
}

/// Like [`load_layered`], with the user's text already in hand.
pub fn layered_from_str<T: serde::de::DeserializeOwned>(
    embedded_name: &str,
    embedded: &str,
    user: Option<(&Path, &str)>,
) -> Result<T, ConfigError> {
    let mut table = load_toml_table(Path::new(embedded_name), embedded)?;
    if let Some((p, text)) = user {
        merge_tables(&mut table, load_toml_table(p, text)?);
    }
    from_table(table, Path::new(embedded_name)).map_err(|e| match user {
        Some((p, text)) => relocate(e, p, text),
        None => e,
    })
}

/// Points an `Invalid` error at the user's file, at the line of the key it names.
pub fn relocate(e: ConfigError, path: &Path, text: &str) -> ConfigError {
    match e {
        ConfigError::Invalid {
            key, message, at, ..
        } => ConfigError::Invalid {
            path: path.to_path_buf(),
            at: key.as_deref().and_then(|k| locate_key(text, k)).or(at),
            key,
            message,
        },
        e => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_error_has_line_and_col() {
        let err = load_toml_table(Path::new("r.toml"), "[lines]\nwarn = \n").unwrap_err();
        let s = err.to_string();
        assert!(s.starts_with("r.toml:2:"), "{s}");
    }

    /// Every dir it creates is 0700, at any depth; a dir that was there keeps its mode.
    #[cfg(unix)]
    #[test]
    fn private_dirs_are_0700_and_existing_ones_are_left_alone() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let d = tempfile::tempdir().unwrap();
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        for depth in 1..5 {
            let top = d.path().join(format!("d{depth}"));
            let leaf = (1..depth).fold(top.clone(), |p, i| p.join(format!("s{i}")));
            create_private_dirs(&leaf).unwrap();
            let mut p = leaf.as_path();
            while p != d.path() {
                assert_eq!(mode(p), 0o700, "{}", p.display());
                p = p.parent().unwrap();
            }
            create_private_dirs(&leaf).unwrap();
        }
        assert_eq!(mode(d.path()), 0o755);
    }

    #[test]
    fn merge_is_deep() {
        let mut a: toml::Table = "[x]\na = 1\nb = 2\n".parse().unwrap();
        let b: toml::Table = "[x]\nb = 3\n".parse().unwrap();
        merge_tables(&mut a, b);
        assert_eq!(a["x"]["a"].as_integer(), Some(1));
        assert_eq!(a["x"]["b"].as_integer(), Some(3));
    }

    #[test]
    fn locates_keys() {
        let t = "tone_mode = \"x\"\n[lines]\n  warn = \"six\"\n";
        assert_eq!(locate_key(t, "lines.warn"), Some((3, 3)));
        assert_eq!(locate_key(t, "tone_mode"), Some((1, 1)));
    }
}
