//! `SharedSafety`: the safety rules for the workbench, loaded off the start-up path (their
//! regexes and word automata are the largest part of start-up) and shared by every chat task.
//! Whoever needs them first loads them; everyone else waits for that load.

use std::sync::{Arc, OnceLock};

use super::SafetyRules;

/// The rules, plus the error that made them fall back to the defaults (when one did).
type Loaded = (Arc<SafetyRules>, Option<String>);

#[derive(Clone, Default)]
pub struct SharedSafety(Arc<OnceLock<Loaded>>);

impl SharedSafety {
    /// Rules loaded on first use: defaults ⊕ `<config_dir>/safety/*.toml`; the defaults alone
    /// when those do not load (`load_error` says why).
    pub fn pending() -> SharedSafety {
        SharedSafety::default()
    }

    /// Rules already built (tests, or a caller that loaded them itself).
    pub fn ready(rules: SafetyRules) -> SharedSafety {
        let cell = OnceLock::new();
        let _ = cell.set((Arc::new(rules), None));
        SharedSafety(Arc::new(cell))
    }

    fn loaded(&self) -> &Loaded {
        self.0.get_or_init(|| match SafetyRules::load() {
            Ok(r) => (Arc::new(r), None),
            Err(e) => (Arc::new(SafetyRules::builtin()), Some(e.to_string())),
        })
    }

    /// The rules, loading them now if nobody has.
    pub fn get(&self) -> Arc<SafetyRules> {
        Arc::clone(&self.loaded().0)
    }

    /// Why the user's safety files were not used (loading them now if nobody has).
    pub fn load_error(&self) -> Option<String> {
        self.loaded().1.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_one_load() {
        let a = SharedSafety::pending();
        let b = a.clone();
        assert!(Arc::ptr_eq(&a.get(), &b.get()));
        let r = SharedSafety::ready(SafetyRules::builtin());
        assert!(r.load_error().is_none());
        assert!(Arc::ptr_eq(&r.get(), &r.clone().get()));
    }
}
