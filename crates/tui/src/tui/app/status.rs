//! Notices with a level (issue 23): `app.status` is an **info** message that expires after a few
//! seconds; an **error** is raised with [`App::fail`] (or a `UiMsg::Notice` of level `Error`) and
//! stays, whole, until Esc acknowledges it, so the next message cannot overwrite it. Nothing is
//! guessed from the words of a message: searching for 失敗 or "failed" is not an error, and a
//! success is never sent as one. The loop sleeps until `status_deadline` only while a message is
//! shown — an idle screen has no timer.

use std::time::{Duration, Instant};

use crate::tui::app::App;
use crate::tui::app::commands::status_data;

pub use crate::tui::error::Level;

fn lifetime() -> Duration {
    Duration::from_secs_f64(status_data().seconds.clamp(0.5, 60.0))
}

impl App {
    /// An error: kept until Esc (the same error twice in a row is one).
    pub fn fail(&mut self, text: impl Into<String>) {
        let e = crate::text::sanitize::for_terminal(&text.into()).into_owned();
        if self.errors.last() != Some(&e) {
            self.errors.push(e);
        }
        self.dirty = true;
    }

    /// A notice of any level.
    pub fn notify(&mut self, level: Level, text: impl Into<String>) {
        let text = crate::text::sanitize::for_terminal(&text.into()).into_owned();
        match level {
            Level::Error => self.fail(text),
            Level::Warn => self.status = format!("⚠ {text}"),
            Level::Info => self.status = text,
        }
    }

    /// Starts the timer of a new info message.
    pub fn settle_status(&mut self, now: Instant) {
        if self.status == self.status_seen {
            return;
        }
        self.status_since = (!self.status.is_empty()).then_some(now);
        self.status_seen = self.status.clone();
        self.dirty = true;
    }

    /// When the shown status message goes (None: nothing to time).
    pub fn status_deadline(&self) -> Option<Instant> {
        self.status_since.map(|t| t + lifetime())
    }

    /// Clears the status message once its time is up; true when it did.
    pub fn expire_status(&mut self, now: Instant) -> bool {
        match self.status_deadline() {
            Some(d) if now >= d => {
                self.status.clear();
                self.status_seen.clear();
                self.status_since = None;
                self.dirty = true;
                true
            }
            _ => false,
        }
    }

    /// Esc with errors shown acknowledges the oldest; true when the key was used so.
    pub fn acknowledge_error(&mut self) -> bool {
        if self.errors.is_empty() {
            return false;
        }
        self.errors.remove(0);
        self.dirty = true;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app() -> App {
        let h = crate::tui::app::Header {
            endpoint: String::new(),
            model: String::new(),
            conn: crate::tui::app::Conn::Probing,
            analyzer: String::new(),
            ruleset: String::new(),
            db: String::new(),
        };
        App::new(
            h,
            crate::tui::theme::load_all().0,
            crate::tui::keymap::Keymap::builtin(),
        )
    }

    #[test]
    fn messages_expire_and_errors_stay_until_acknowledged() {
        let mut a = app();
        let t0 = Instant::now();
        a.status = "saved ✓".into();
        a.settle_status(t0);
        assert!(a.status_deadline().is_some());
        assert!(!a.expire_status(t0 + Duration::from_secs(1)));
        assert!(a.expire_status(t0 + Duration::from_secs(10)));
        assert!(a.status.is_empty() && a.status_deadline().is_none());
        // "👍/👎 NOT saved" is not overwritten by the next message.
        a.fail("👍/👎 NOT saved: database is locked");
        a.settle_status(t0);
        a.status = "theme: light".into();
        a.settle_status(t0);
        assert_eq!(a.errors, ["👍/👎 NOT saved: database is locked"]);
        assert!(a.expire_status(t0 + Duration::from_secs(10)));
        assert_eq!(a.errors.len(), 1, "errors do not expire");
        assert!(a.acknowledge_error());
        assert!(a.errors.is_empty() && !a.acknowledge_error());
        // Nothing shown: no timer.
        assert!(a.status_deadline().is_none());
    }

    #[test]
    fn words_in_a_message_never_make_it_an_error() {
        let mut a = app();
        let t0 = Instant::now();
        for text in [
            "“失敗” is not in this run (/ then Tab: all runs)",
            "“failed” is not in this run (/ then Tab: all runs)",
            "👍 saved ✓ (the pattern's like_rate too)",
            "store: NOT a problem, cannot could not error refused",
        ] {
            a.notify(Level::Info, text);
            a.settle_status(t0);
            assert!(a.errors.is_empty(), "{text} opened the error box");
            assert_eq!(a.status, text);
        }
        a.notify(Level::Warn, "no endpoint answers");
        assert!(a.errors.is_empty() && a.status.starts_with('⚠'));
        a.notify(Level::Error, "override NOT saved: locked");
        a.notify(Level::Error, "override NOT saved: locked");
        assert_eq!(a.errors, ["override NOT saved: locked"]);
    }
}
