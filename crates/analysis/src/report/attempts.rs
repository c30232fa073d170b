//! The attempts a turn did not commit, each in a collapsible `<details>` (no script needed): its
//! verdict, the findings (rule, severity, message), the guidance it was sent with and how long
//! it took. Never-leak first: an attempt a never-leak rule (the leak review, a prompt leak or
//! echo, a forbidden word … — [`PROTECTED`]) spoke on at WARN or worse, or one the Director never
//! judged, is listed without its text and without its findings' messages (which may quote it),
//! saying that it was withheld and why; guidance that follows a withheld attempt is withheld too
//! (it was written from that attempt's findings).

use std::fmt::Write as _;

use serde_json::Value;

use super::html::{badge, esc};
use super::safe_text;
use crate::director::ruleset::PROTECTED;
use crate::store::AttemptRow;

/// One attempt as the page may show it.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    pub attempt: u32,
    pub status: String,
    /// The line, made safe; None when withheld.
    pub text: Option<String>,
    /// Why the text is withheld.
    pub withheld: Option<String>,
    /// (rule, severity, message — None when not shown).
    pub findings: Vec<(String, String, Option<String>)>,
    /// The guidance it was sent with: Some(Ok) shown, Some(Err) withheld (and why).
    pub guidance: Option<Result<String, &'static str>>,
    pub latency_ms: Option<u64>,
    pub first_token_ms: Option<u64>,
}

fn severe(f: &Value) -> bool {
    matches!(f["status"].as_str(), Some("WARN" | "RETRY" | "MODIFY"))
}

/// Why an attempt's text may not be shown (None: it may, made safe).
pub fn withheld_because(a: &AttemptRow) -> Option<String> {
    let Some(v) = a.verdict.as_ref() else {
        return Some("the Director never judged it (no verdict stored)".into());
    };
    let Some(fs) = v.get("findings").and_then(Value::as_array) else {
        return Some("its verdict has no readable findings".into());
    };
    let mut rules: Vec<String> = fs
        .iter()
        .filter(|f| severe(f))
        .filter_map(|f| {
            let r = f["rule"].as_str()?;
            PROTECTED
                .iter()
                .any(|p| p.as_str() == r)
                .then(|| format!("{r} {}", f["status"].as_str().unwrap_or("?")))
        })
        .collect();
    rules.dedup();
    (!rules.is_empty()).then(|| format!("a never-leak rule spoke on it ({})", rules.join(", ")))
}

/// The attempts of a turn as shown: every attempt but the committed one — and that one too
/// when the turn was withheld (its text is the leaked line). In attempt order.
pub fn shown(attempts: &[&AttemptRow], committed: Option<i64>, withheld: bool) -> Vec<Shown> {
    let mut out = Vec::new();
    let mut after_withheld = false;
    for a in attempts {
        let why = withheld_because(a).or_else(|| {
            (withheld && Some(a.id) == committed)
                .then(|| "the leak review rejected it: her fallback line was committed".into())
        });
        if Some(a.id) != committed || withheld {
            out.push(one(a, why.clone(), after_withheld));
        }
        after_withheld |= why.is_some();
    }
    out
}

fn one(a: &AttemptRow, why: Option<String>, after_withheld: bool) -> Shown {
    let findings = a
        .verdict
        .as_ref()
        .and_then(|v| v.get("findings"))
        .and_then(Value::as_array)
        .map(|fs| {
            fs.iter()
                .filter(|f| !matches!(f["status"].as_str(), Some("INFO" | "PASS")))
                .map(|f| {
                    let rule = f["rule"].as_str().unwrap_or("?").to_string();
                    let protected = PROTECTED.iter().any(|p| p.as_str() == rule);
                    let message = (why.is_none() && !protected)
                        .then(|| safe_text(f["message"].as_str().unwrap_or(""), None));
                    (
                        rule,
                        f["status"].as_str().unwrap_or("?").to_string(),
                        message,
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let guidance = a
        .guidance
        .as_deref()
        .filter(|g| !g.trim().is_empty())
        .map(|g| {
            if after_withheld || why.is_some() {
                Err("it was written from a withheld attempt's findings")
            } else {
                Ok(safe_text(g, None))
            }
        });
    Shown {
        attempt: a.attempt,
        status: a.status.map_or_else(
            || a.state.as_str().to_uppercase(),
            |s| s.as_str().to_string(),
        ),
        text: why
            .is_none()
            .then(|| safe_text(a.text.as_deref().unwrap_or(""), a.verdict.as_ref())),
        withheld: why,
        findings,
        guidance,
        latency_ms: a.latency_ms,
        first_token_ms: a.first_token_ms,
    }
}

fn timing(s: &Shown) -> String {
    let ms = |v: Option<u64>| v.map_or("—".to_string(), |v| format!("{v} ms"));
    format!(
        "latency {} · first token {}",
        ms(s.latency_ms),
        ms(s.first_token_ms)
    )
}

/// The attempts as HTML: one `<details class="attempt">` each.
pub fn html(list: &[Shown]) -> String {
    let mut s = String::new();
    for a in list {
        let rules: Vec<&str> = a.findings.iter().map(|f| f.0.as_str()).collect();
        let _ = write!(
            s,
            "<details class=\"attempt\"><summary>attempt {} {} · {}{}{}</summary>",
            a.attempt,
            badge(&a.status),
            esc(&timing(a)),
            if rules.is_empty() { "" } else { " · " },
            esc(&rules.join(", "))
        );
        match (&a.text, &a.withheld) {
            (Some(t), _) => {
                let _ = write!(s, "<div class=\"atext\">{}</div>", esc(t));
            }
            (None, why) => {
                let _ = write!(
                    s,
                    "<p class=\"withheld\">（本文は表示しません: {}）</p>",
                    esc(why.as_deref().unwrap_or("withheld"))
                );
            }
        }
        if !a.findings.is_empty() {
            s.push_str("<ul class=\"findings\">");
            for (rule, status, message) in &a.findings {
                let m = message.as_deref().map_or_else(
                    || "<span class=\"note\">message not shown</span>".to_string(),
                    esc,
                );
                let _ = write!(s, "<li>{} {}: {m}</li>", esc(rule), badge(status));
            }
            s.push_str("</ul>");
        }
        match &a.guidance {
            Some(Ok(g)) => {
                let _ = write!(s, "<p class=\"guidance\">guidance: {}</p>", esc(g));
            }
            Some(Err(why)) => {
                let _ = write!(
                    s,
                    "<p class=\"guidance note\">guidance withheld: {}</p>",
                    esc(why)
                );
            }
            None => s.push_str("<p class=\"guidance meta\">no guidance</p>"),
        }
        s.push_str("</details>");
    }
    s
}
