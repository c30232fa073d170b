//! Finds the vault part of a stored system message and its level per section (issue 14 §4),
//! so a reviewer sees which text reached the model at which level. The duo prompt embeds the
//! filtered context (context.rs) in its 【世界設定】 section after the scene: level 3 under
//! 【設定資料】 as `■ label` items, then one paragraph per level 1 / level 2 hint rendered
//! from a template. A hint is recognised by the longest literal line of its template (the
//! built-ins, or the work's own when given); vault text no template explains is marked with
//! an unknown level rather than passed off as the scene.

use super::context::SETTINGS_HEADING;
use super::template::Templates;

/// Heading of the world section in a duo system message (duo/prompt.rs).
pub const WORLD_HEADING: &str = "【世界設定】";
/// The heading after the world section.
const TOPIC_HEADING: &str = "\n\n【話題】";
/// A level 3 item's first line inside the settings block.
const ITEM_PREFIX: &str = "■ ";

/// Where a run of the system message comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Not vault text (persona, scene, topic …).
    Prompt,
    /// Vault context at this level (1, 2 or 3).
    Level(u8),
    /// In the vault part, but no template explains it (a template edited since?).
    Unknown,
}

impl Source {
    /// The text marker shown before a section: `[L2]`, `[L?]`; none for prompt text.
    pub fn marker(self) -> Option<String> {
        match self {
            Source::Prompt => None,
            Source::Level(l) => Some(format!("[L{l}]")),
            Source::Unknown => Some("[L?]".into()),
        }
    }
}

/// One section of the system message: its lines, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub source: Source,
    pub text: String,
}

/// The literal lines a template's output can be recognised by: for each template line, its
/// longest piece between `{placeholders}` (at least 4 characters), with whether it starts
/// the line.
fn signatures(templates: &Templates) -> Vec<(u8, String, bool)> {
    let mut out = Vec::new();
    for t in templates.iter().filter(|t| t.level == 1 || t.level == 2) {
        let Some(first) = t.prompt_template.lines().find(|l| !l.trim().is_empty()) else {
            continue;
        };
        let first = first.trim();
        let mut best: Option<(String, bool)> = None;
        let mut rest = first;
        let mut at_start = true;
        loop {
            let (lit, next) = match rest.find('{') {
                Some(i) => (&rest[..i], rest[i..].find('}').map(|j| &rest[i + j + 1..])),
                None => (rest, None),
            };
            if lit.chars().count() >= 4
                && best
                    .as_ref()
                    .is_none_or(|(b, _)| lit.chars().count() > b.chars().count())
            {
                best = Some((lit.to_string(), at_start));
            }
            match next {
                Some(n) => {
                    rest = n;
                    at_start = false;
                }
                None => break,
            }
        }
        if let Some((lit, start)) = best {
            out.push((t.level, lit, start));
        }
    }
    out
}

/// The level of a hint whose first line is `line`, if a template explains it.
fn hint_level(line: &str, sigs: &[(u8, String, bool)]) -> Option<u8> {
    sigs.iter()
        .find(|(_, lit, start)| {
            if *start {
                line.starts_with(lit.as_str())
            } else {
                line.contains(lit.as_str())
            }
        })
        .map(|(l, _, _)| *l)
}

/// Splits `system` into prompt text and vault sections marked by level. Without a world
/// section the whole message is prompt text.
pub fn mark_system(system: &str, templates: &Templates) -> Vec<Part> {
    let Some(w) = system.find(WORLD_HEADING) else {
        return vec![part(Source::Prompt, system)];
    };
    let body = w + WORLD_HEADING.len();
    let end = system[body..]
        .find(TOPIC_HEADING)
        .map(|i| body + i)
        .unwrap_or(system.len());
    let sigs = signatures(templates);
    let mut parts = vec![part(Source::Prompt, &system[..body])];
    let mut cur = Source::Prompt;
    let mut buf = String::new();
    // Once the vault part began, a line is never scene text again.
    let mut in_vault = false;
    for line in system[body..end].split_inclusive('\n') {
        let bare = line.trim_end_matches('\n');
        let start = if bare == SETTINGS_HEADING {
            Some(Source::Level(3))
        } else if let Some(l) = hint_level(bare, &sigs) {
            Some(Source::Level(l))
        } else if bare.starts_with(ITEM_PREFIX) && cur == Source::Level(3) {
            Some(Source::Level(3))
        } else if in_vault && cur == Source::Level(3) && !bare.is_empty() && ends_block(&buf) {
            // A paragraph after the settings block that no template explains.
            Some(Source::Unknown)
        } else {
            None
        };
        if let Some(s) = start {
            flush(&mut parts, cur, &mut buf);
            cur = s;
            in_vault = true;
        }
        buf.push_str(line);
    }
    flush(&mut parts, cur, &mut buf);
    parts.push(part(Source::Prompt, &system[end..]));
    parts.retain(|p| !p.text.is_empty());
    parts
}

/// The text so far ends with a blank line (a paragraph ended).
fn ends_block(buf: &str) -> bool {
    buf.ends_with("\n\n")
}

fn part(source: Source, text: &str) -> Part {
    Part {
        source,
        text: text.to_string(),
    }
}

fn flush(parts: &mut Vec<Part>, source: Source, buf: &mut String) {
    if !buf.is_empty() {
        parts.push(part(source, buf));
        buf.clear();
    }
}

#[cfg(test)]
#[path = "marks_tests.rs"]
mod tests;
