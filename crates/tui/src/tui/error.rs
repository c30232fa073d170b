//! Why a background task failed, as the workbench shows it (issue 23): typed up to the UI
//! edge. The kind says what failed — the store, the model, a file, input that was refused, or
//! a thing that is not there — and the level it is shown at follows from the kind, never from
//! the words; the message says where and why.

/// How much a notice matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Shown for a few seconds.
    Info,
    /// Shown for a few seconds, marked ⚠.
    Warn,
    /// Stays until Esc.
    Error,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UiError {
    /// The store could not be opened, read or written.
    #[error("{0}")]
    Store(String),
    /// The model's endpoint failed or answered with something unusable.
    #[error("{0}")]
    Model(String),
    /// A file could not be read or written.
    #[error("{0}")]
    File(String),
    /// The input was refused (a malformed value, a check that did not pass).
    #[error("{0}")]
    Refused(String),
    /// What was asked for is not there (no such run, no comparison yet).
    #[error("{0}")]
    Missing(String),
}

impl UiError {
    /// The level the status line shows it at: a missing thing is a warning, the rest errors
    /// that stay until Esc.
    pub fn level(&self) -> Level {
        match self {
            UiError::Missing(_) => Level::Warn,
            _ => Level::Error,
        }
    }

    /// The same error with `what` in front ("patterns: …").
    pub fn context(self, what: &str) -> UiError {
        let wrap = |m: String| format!("{what}: {m}");
        match self {
            UiError::Store(m) => UiError::Store(wrap(m)),
            UiError::Model(m) => UiError::Model(wrap(m)),
            UiError::File(m) => UiError::File(wrap(m)),
            UiError::Refused(m) => UiError::Refused(wrap(m)),
            UiError::Missing(m) => UiError::Missing(wrap(m)),
        }
    }
}

/// A line for the status bar with its level: what a room or a task tells the reviewer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub level: Level,
    pub text: String,
}

impl Notice {
    /// An info line (it expires after a few seconds).
    pub fn info(text: impl Into<String>) -> Notice {
        Notice {
            level: Level::Info,
            text: text.into(),
        }
    }

    /// `e` with `what` in front, at the level its kind sets.
    pub fn failed(what: &str, e: UiError) -> Notice {
        Notice {
            level: e.level(),
            text: e.context(what).to_string(),
        }
    }
}

impl From<crate::store::StoreError> for UiError {
    fn from(e: crate::store::StoreError) -> UiError {
        UiError::Store(e.to_string())
    }
}

impl From<crate::llm::LlmError> for UiError {
    fn from(e: crate::llm::LlmError) -> UiError {
        UiError::Model(e.to_string())
    }
}

impl From<std::io::Error> for UiError {
    fn from(e: std::io::Error) -> UiError {
        UiError::File(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_level_follows_the_kind_not_the_words() {
        assert_eq!(UiError::Missing("failed".into()).level(), Level::Warn);
        assert_eq!(UiError::Store("all fine".into()).level(), Level::Error);
        let e = UiError::Model("timed out".into()).context("drafts");
        assert_eq!(e, UiError::Model("drafts: timed out".into()));
        let n = Notice::failed("patterns", UiError::Store("disk full".into()));
        assert_eq!(
            (n.level, n.text.as_str()),
            (Level::Error, "patterns: disk full")
        );
        let n = Notice::failed("compare", UiError::Missing("no comparison yet".into()));
        assert_eq!(n.level, Level::Warn);
        assert_eq!(Notice::info("drafts ready").level, Level::Info);
    }
}
