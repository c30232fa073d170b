//! Secret visibility (seed 004): a vault of works on disk, the four-level model with per-reader
//! overrides, templates, the filtered context each sister receives, leak review of what she
//! wrote, and atomic saving of edited levels.
//!
//! Level precedence for a section, most specific first: the section's entry in visibility.yaml
//! (a reader override, then its level) > the inline `<!-- ai_visibility: N -->` marker > the
//! entity's level in visibility.yaml > the entity file's front matter (`ai_visibility.<section>`,
//! then `ai_visibility.default`) > the work's `default_visibility` > 0.

pub mod context;
pub mod entity;
pub mod leak;
pub mod load;
pub mod model;
pub mod resolve;
pub mod review;
pub mod save;
pub mod shared;
pub mod similarity;

use std::path::Path;

use crate::config::ConfigError;

pub use context::{ContextItem, FilteredContext};
pub use load::{Work, load_vault, open, sample, sample_save_dir, user_vault_dir};
pub use model::{Level, LevelSpec};
pub use resolve::{Item, ItemKind, LevelSource};
pub use shared::SharedVault;

pub mod template;

/// A YAML error as `path:line:col: message`; `line_offset` is added for embedded YAML (front
/// matter starts on line 2 of its file).
pub(crate) fn yaml_error(path: &Path, e: &serde_norway::Error, line_offset: usize) -> ConfigError {
    let message = e.to_string();
    // serde_norway appends " at line L column C"; the location is reported separately.
    let message = message
        .split(" at line ")
        .next()
        .unwrap_or(&message)
        .to_string();
    match e.location() {
        Some(l) => ConfigError::Syntax {
            path: path.to_path_buf(),
            line: l.line() + line_offset,
            col: l.column(),
            message,
        },
        None => ConfigError::Invalid {
            path: path.to_path_buf(),
            at: None,
            key: None,
            message,
        },
    }
}

/// 1-based (line, col) of the first line at or after `after_line` whose trimmed text starts
/// with `key:`. Used to point a semantic error (a bad level) at the line the writer typed.
pub(crate) fn find_key(text: &str, key: &str, after_line: usize) -> Option<(usize, usize)> {
    let pat = format!("{key}:");
    text.lines()
        .enumerate()
        .skip(after_line.saturating_sub(1))
        .find_map(|(i, l)| {
            let t = l.trim_start();
            let t = t.strip_prefix("- ").unwrap_or(t);
            let unq = t.trim_start_matches(['"', '\'']);
            (unq.starts_with(&pat)
                || unq.starts_with(&format!("{key}\":"))
                || unq.starts_with(&format!("{key}':")))
            .then(|| (i + 1, l.len() - t.len() + 1))
        })
}

#[cfg(test)]
mod tests;
