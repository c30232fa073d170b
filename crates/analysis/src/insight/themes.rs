//! LLM themes (seed 003 §8 step 4): the prompt, and a lenient parser of the
//! `THEME / JTBD / SUMMARY / SEVERITY / EVIDENCE` lines.
//!
//! Leniency: keys in any case, `:` or `：`, fields split at ` / `, `|` or line breaks, a theme
//! may also be a block of one field per line (a new THEME starts a new theme); list bullets
//! and markdown bold are ignored; severity accepts high/medium/low, 高/中/低, H/M/L and 1–5
//! (4–5 high, 3 medium, 1–2 low; anything else medium). Evidence quotes are the 「…」 or "…"
//! parts, else the whole field split at 、/;. A theme without a name is dropped; an output
//! without any theme is unreadable (the caller re-asks once).

use serde::{Deserialize, Serialize};

pub const PROMPT: &str = include_str!("../../../../assets/insight/themes_prompt.txt");
pub const REASK: &str = include_str!("../../../../assets/insight/themes_reask.txt");

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Low,
    Medium,
    High,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
        }
    }

    pub fn parse(s: &str) -> Severity {
        let s = s.trim().trim_matches(['*', '`']).to_lowercase();
        match s.as_str() {
            "high" | "高" | "h" | "4" | "5" | "critical" => Severity::High,
            "low" | "低" | "l" | "1" | "2" => Severity::Low,
            _ => Severity::Medium,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Theme {
    pub theme: String,
    pub jtbd: String,
    pub summary: String,
    pub severity: Severity,
    pub evidence: Vec<String>,
}

fn keys() -> &'static regex::Regex {
    static R: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    R.get_or_init(|| {
        regex::Regex::new(r"(?i)\b(THEME|JTBD|SUMMARY|SEVERITY|EVIDENCE)\b\s*(?:\*\*)?\s*[:：]")
            .expect("valid regex")
    })
}

/// The (KEY, value) fields of one line, in order.
fn fields(line: &str) -> Vec<(String, String)> {
    let line = line.replace("**", "");
    let found: Vec<(usize, usize, String)> = keys()
        .captures_iter(&line)
        .filter_map(|c| {
            let m = c.get(0)?;
            Some((m.start(), m.end(), c[1].to_uppercase()))
        })
        .collect();
    found
        .iter()
        .enumerate()
        .map(|(i, (_, end, k))| {
            let stop = found.get(i + 1).map(|f| f.0).unwrap_or(line.len());
            let v = line[*end..stop]
                .trim()
                .trim_end_matches(['/', '／', '|', '｜'])
                .trim();
            (k.clone(), v.to_string())
        })
        .collect()
}

fn quotes(v: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (open, close) in [('「', '」'), ('"', '"'), ('“', '”'), ('『', '』')] {
        let mut rest = v;
        while let Some(s) = rest.find(open) {
            let after = &rest[s + open.len_utf8()..];
            let Some(e) = after.find(close) else { break };
            let q = after[..e].trim();
            if !q.is_empty() {
                out.push(q.to_string());
            }
            rest = &after[e + close.len_utf8()..];
        }
        if !out.is_empty() {
            return out;
        }
    }
    v.split(['、', ';', '；'])
        .map(|q| q.trim().to_string())
        .filter(|q| !q.is_empty())
        .collect()
}

/// Every readable theme in `text`; empty when nothing could be read.
pub fn parse(text: &str) -> Vec<Theme> {
    let mut out: Vec<Theme> = Vec::new();
    let mut cur: Option<Theme> = None;
    for line in text.lines() {
        for (k, v) in fields(line) {
            if k == "THEME" {
                if let Some(t) = cur.take() {
                    out.push(t);
                }
                cur = Some(Theme {
                    theme: v,
                    jtbd: String::new(),
                    summary: String::new(),
                    severity: Severity::Medium,
                    evidence: Vec::new(),
                });
                continue;
            }
            let Some(t) = cur.as_mut() else { continue };
            match k.as_str() {
                "JTBD" => t.jtbd = v,
                "SUMMARY" => t.summary = v,
                "SEVERITY" => t.severity = Severity::parse(&v),
                _ => t.evidence.extend(quotes(&v)),
            }
        }
    }
    out.extend(cur);
    out.retain(|t| !t.theme.trim().is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_themes_parse() {
        let t = "THEME: 献立決め / JTBD: 毎晩の献立をすぐ決めたい / SUMMARY: 献立を考えるのに時間がかかる / SEVERITY: high / EVIDENCE: 「毎晩悩みます」「冷蔵庫を見て決める」\nTHEME: 後片付け / JTBD: 洗い物を減らしたい / SUMMARY: 片付けが面倒 / SEVERITY: 低 / EVIDENCE: 「洗い物が多い」";
        let v = parse(t);
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].theme, "献立決め");
        assert_eq!(v[0].severity, Severity::High);
        assert_eq!(v[0].evidence, vec!["毎晩悩みます", "冷蔵庫を見て決める"]);
        assert_eq!(v[1].severity, Severity::Low);
        assert_eq!(v[1].jtbd, "洗い物を減らしたい");
    }

    #[test]
    fn blocks_bullets_and_odd_case_parse() {
        let t = "以下が分析です。\n- **Theme**：買い物\n- jtbd: 買い忘れをなくしたい\n- Severity: 4\n- Evidence: 牛乳を忘れる、卵を二回買った\n";
        let v = parse(t);
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].theme, "買い物");
        assert_eq!(v[0].severity, Severity::High);
        assert_eq!(v[0].evidence, vec!["牛乳を忘れる", "卵を二回買った"]);
    }

    #[test]
    fn unreadable_output_gives_nothing() {
        for t in [
            "",
            "すみません、分析できません。",
            "JTBD: 何か / SEVERITY: high",
            "THEME: ",
        ] {
            assert!(parse(t).is_empty(), "{t}");
        }
    }
}
