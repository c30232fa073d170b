//! The filtered context one reader receives (seed 004 §4): level 0 contributes nothing, level 1
//! a neutral absence notice, level 2 reference material through the Level 2 template, level 3
//! the text itself. `prompt` is exactly the text that goes into the model's system prompt.

use serde::Serialize;

use super::load::Work;
use super::resolve::{Item, ItemKind};
use super::template::{Vars, subtlety_guideline};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContextItem {
    pub key: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct FilteredContext {
    pub context: Vec<ContextItem>,
    pub hints: Vec<String>,
    /// The level each of `hints` comes from (1 or 2), for the budget's lighter rungs.
    #[serde(skip)]
    pub hint_levels: Vec<u8>,
    pub forbidden_keywords: Vec<String>,
    pub prompt: String,
    /// What this reader was not given in full, as counts (never content).
    pub withheld: Withheld,
}

/// Counts by level of what a reader's context holds back: sections, secrets and
/// foreshadowing at level 0 (nothing at all), 1 (a notice only) and 2 (reference only, not to
/// be written), and how many were given in full. `level0` includes foreshadowing sections
/// left out because they are marked below their foreshadowing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Withheld {
    pub level0: usize,
    pub level1: usize,
    pub level2: usize,
    pub given: usize,
}

impl Withheld {
    /// One line for the writer: `withheld from ayu: 4 at level 0, 1 notice only, …`.
    pub fn summary(&self, reader: &str) -> String {
        format!(
            "withheld from {reader}: {} hidden (level 0) · {} notice only (level 1) · {} reference only (level 2) · {} given (level 3)",
            self.level0, self.level1, self.level2, self.given
        )
    }
}

/// What a Level 1 notice calls a foreshadowing: its title can be a keyword itself, so it is
/// named by a neutral ordinal among this reader's level-1 foreshadowing.
fn neutral_foreshadowing(n: usize) -> String {
    format!("伏線{n}")
}

/// Removes every `<!-- … -->` (an unclosed one to the end): no comment reaches a prompt.
pub fn strip_comments(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("<!--") {
        out.push_str(&rest[..i]);
        match rest[i + 4..].find("-->") {
            Some(j) => rest = &rest[i + 4 + j + 3..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

/// Heading of the settings block inside the world section of a duo prompt.
pub const SETTINGS_HEADING: &str = "【設定資料】";

impl Work {
    /// The context `reader` gets (None: the common levels).
    pub fn context(&self, reader: Option<&str>) -> FilteredContext {
        let items = self.items(reader);
        let mut out = FilteredContext::default();
        let mut fs_notices = 0;
        for item in &items {
            out.withheld.level0 += item.cut.len();
            match item.level.get() {
                0 => out.withheld.level0 += 1,
                1 if item.kind == ItemKind::Foreshadowing => {
                    out.withheld.level1 += 1;
                    fs_notices += 1;
                    let mut neutral = item.clone();
                    neutral.entity_name = "物語".into();
                    neutral.section_name = neutral_foreshadowing(fs_notices);
                    neutral.hint = None;
                    out.hints.push(self.render(&neutral, 1));
                    out.hint_levels.push(1);
                }
                1 => {
                    out.withheld.level1 += 1;
                    out.hints.push(self.render(item, 1));
                    out.hint_levels.push(1);
                }
                2 => {
                    out.withheld.level2 += 1;
                    out.hints.push(self.render(item, 2));
                    out.hint_levels.push(2);
                    for k in &item.forbidden_keywords {
                        if !out.forbidden_keywords.contains(k) {
                            out.forbidden_keywords.push(k.clone());
                        }
                    }
                }
                _ => {
                    out.withheld.given += 1;
                    if !item.text.trim().is_empty() {
                        out.context.push(ContextItem {
                            key: item.key.clone(),
                            text: item.text.clone(),
                        });
                    }
                }
            }
        }
        out.prompt = strip_comments(&prompt_text(&out, &items));
        out.hints = out.hints.iter().map(|h| strip_comments(h)).collect();
        for c in &mut out.context {
            c.text = strip_comments(&c.text);
        }
        out
    }

    /// The prompt text `reader` gets with the vault levels in `drop` left out — the token
    /// budget's lighter rungs (3: sections given in full, 2: reference notes, 1: notices).
    /// Only ever less than `context(reader).prompt`: level 0 is never in it.
    pub fn prompt_without(&self, reader: Option<&str>, drop: &[u8]) -> String {
        let mut c = self.context(reader);
        if drop.contains(&3) {
            c.context.clear();
        }
        let kept: Vec<String> = c
            .hints
            .iter()
            .zip(&c.hint_levels)
            .filter(|(_, l)| !drop.contains(l))
            .map(|(h, _)| h.clone())
            .collect();
        c.hints = kept;
        strip_comments(&prompt_text(&c, &self.items(reader)))
    }

    fn render(&self, item: &Item, level: u8) -> String {
        let Some(t) = self.templates.resolve(level, item.template_id.as_deref()) else {
            return String::new();
        };
        let mut vars = Vars::default()
            .set("entity_type", item.entity_type.clone())
            .set("entity_name", item.entity_name.clone())
            .set("section_name", item.section_name.clone())
            .set("hint_text", item.hint.clone().unwrap_or_default());
        if level == 2 {
            let list = |v: &[String]| {
                v.iter()
                    .map(|e| format!("- {e}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            vars = vars
                .set(
                    "secret_id",
                    item.secret_id.clone().unwrap_or_else(|| item.key.clone()),
                )
                .set("secret_content", item.text.clone())
                .set("forbidden_keywords", item.forbidden_keywords.join("、"))
                .set(
                    "allowed_expressions",
                    if item.allowed_expressions.is_empty() {
                        "- （指定なし）".into()
                    } else {
                        list(&item.allowed_expressions)
                    },
                )
                .set("subtlety_level", item.subtlety.to_string())
                .set("subtlety_guideline", subtlety_guideline(item.subtlety));
        }
        t.render(&vars)
    }
}

fn prompt_text(c: &FilteredContext, items: &[Item]) -> String {
    let mut s = String::new();
    if !c.context.is_empty() {
        s.push_str(SETTINGS_HEADING);
        s.push('\n');
        for ci in &c.context {
            let label = items
                .iter()
                .find(|i| i.key == ci.key)
                .map(|i| match i.kind {
                    ItemKind::Section => format!("{}／{}", i.entity_name, i.section_name),
                    _ => i.entity_name.clone(),
                })
                .unwrap_or_else(|| ci.key.clone());
            s.push_str(&format!("■ {label}\n{}\n", ci.text.trim()));
        }
    }
    // Templates repeat their fixed lines in every notice (会話では、ここに書かれていることだけを…):
    // a line already told is not told again, so no line of a prompt repeats (issue 26 §5).
    let mut told: Vec<String> = s.lines().map(|l| l.trim().to_string()).collect();
    for h in &c.hints {
        let mut lines = Vec::new();
        for l in h.trim().lines() {
            let t = l.trim();
            if !t.is_empty() && told.iter().any(|x| x == t) {
                continue;
            }
            told.push(t.to_string());
            lines.push(l);
        }
        if lines.iter().all(|l| l.trim().is_empty()) {
            continue;
        }
        if !s.is_empty() {
            s.push('\n');
        }
        s.push_str(&lines.join("\n"));
        s.push('\n');
    }
    s.trim_end().to_string()
}
