//! Secret visibility (seed 004): a vault of works on disk, the four-level model with per-reader
//! overrides, templates, the filtered context each sister receives, leak review of what she
//! wrote, and atomic saving of edited levels.
//!
//! Level precedence for a section, most specific first: the section's entry in visibility.yaml
//! (a reader override, then its level; names matched after NFKC) > the lowest of its inline
//! `<!-- ai_visibility: N -->` markers > the entity's level in visibility.yaml > the entity
//! file's front matter (`ai_visibility.<section>`, then `ai_visibility.default`) > the work's
//! `default_visibility` > 0. A subsection never exceeds an enclosing heading, nor a section the
//! marker of the file's `# title` line. Ambiguity fails closed (see `markup`, `validate`).

pub mod context;
pub mod entity;
pub mod judge;
pub mod leak;
pub mod load;
pub mod marks;
pub mod markup;
pub mod model;
pub mod probe;
pub mod resolve;
pub mod review;
pub mod save;
pub mod scorecard;
pub mod semantic;
pub mod shared;
pub mod similarity;
pub mod stamp;
pub mod validate;
pub mod yaml_edit;

use std::path::Path;

use crate::config::ConfigError;

pub use context::{ContextItem, FilteredContext};
pub use load::{
    Work, list_works, load_vault, open, sample, sample_save_dir, sibling_works, user_vault_dir,
};
pub use model::{Level, LevelSpec};
pub use resolve::{Item, ItemKind, LevelSource};
pub use shared::SharedVault;

pub mod template;

/// A YAML error as `path:line:col: message`; `line_offset` is added for embedded YAML (front
/// matter starts on line 2 of its file).
pub(crate) fn yaml_error(
    path: &Path,
    e: &serde_norway::Error,
    line_offset: usize,
    text: &str,
) -> ConfigError {
    let message = e.to_string();
    // serde_norway appends " at line L column C"; the location is reported separately.
    let message = message
        .split(" at line ")
        .next()
        .unwrap_or(&message)
        .to_string();
    let message = excerpt(&message, 160);
    match e.location() {
        Some(l) => {
            // A level error is located at the start of its mapping (serde reads the values of
            // `sections:` before judging one): point at the line holding the bad value.
            let mut message = message;
            let (line, col) = if let Some(at) = tab_indent_near(text, l.line()) {
                // A tab in the indentation makes the line part of its neighbour's value.
                message = format!("{message} (a tab in the indentation; indent with spaces)");
                at
            } else if let Some(at) = wide_indent_near(text, l.line()) {
                // The IME left on: a full-width space looks like indentation but is a key's text.
                message = format!(
                    "{message} (a full-width space `　` in the indentation; indent with half-width spaces)"
                );
                at
            } else if message.contains(model::LEVEL_EXPECTED) {
                bad_level_line(text, l.line()).unwrap_or((l.line(), l.column()))
            } else if message.contains(model::NUMBER_EXPECTED) {
                bad_number_line(text, l.line()).unwrap_or((l.line(), l.column()))
            } else if let Some(at) = full_width_colon_before(text, l.line()) {
                // YAML stumbles a line later over `秘密：０` typed with the IME on.
                message = format!("{message} (a full-width colon `：`; write `:` and a space)");
                at
            } else {
                (l.line(), l.column())
            };
            // Name what the bad value belongs to (`characters/やな/基本`), not just where it is.
            let keys = yaml_path_at(text, line);
            let message = match describe_path(&keys) {
                Some(what) => format!("{}: {message}", excerpt(&what, 80)),
                None => message,
            };
            ConfigError::Syntax {
                path: path.to_path_buf(),
                line: line + line_offset,
                col,
                message,
            }
        }
        None => ConfigError::Invalid {
            path: path.to_path_buf(),
            at: None,
            key: None,
            message,
        },
    }
}

/// A vault YAML text as `T`. YAML forbids a key twice in one mapping, and a typed read lets the
/// later value win silently (`秘密: 0` … `秘密: 3` would print a level-0 section): the text is
/// first read as an untyped value, which refuses duplicates, and the duplicate is reported at
/// its own line and column (characters), naming the first.
pub(crate) fn parse_yaml<T: serde::de::DeserializeOwned>(
    path: &Path,
    text: &str,
    line_offset: usize,
) -> Result<T, ConfigError> {
    if let Err(e) = serde_norway::from_str::<serde_norway::Value>(text) {
        let m = e.to_string();
        if let Some(key) = m
            .split("duplicate entry with key ")
            .nth(1)
            .map(|k| k.split(" at line ").next().unwrap_or(k).trim_matches('"'))
        {
            let (line, col) = e
                .location()
                .map(|l| (l.line(), l.column()))
                .unwrap_or((1, 1));
            let (first, dup, dcol) =
                duplicate_at(text, line, col, key).unwrap_or((line, line, col));
            return Err(ConfigError::Syntax {
                path: path.to_path_buf(),
                line: dup + line_offset,
                col: dcol,
                message: format!(
                    "`{}` is written twice in one mapping (first at line {}); YAML forbids a duplicate key and the later value would silently win — keep one",
                    excerpt(key, 60),
                    first + line_offset
                ),
            });
        }
    }
    serde_norway::from_str(text).map_err(|e| yaml_error(path, &e, line_offset, text))
}

/// The first and second line (1-based) holding `key:` at the indentation of the mapping that
/// starts at `line`:`col`, and the second's column (characters).
fn duplicate_at(text: &str, line: usize, col: usize, key: &str) -> Option<(usize, usize, usize)> {
    let indent = col.saturating_sub(1);
    let mut seen = None;
    for (i, l) in text.lines().enumerate().skip(line.saturating_sub(1)) {
        let t = l.trim_start();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let at = l.chars().count() - t.chars().count();
        // A list item opens its mapping after `- `.
        let (at, t) = match t.strip_prefix("- ") {
            Some(rest) if at + 2 == indent => (indent, rest.trim_start()),
            _ => (at, t),
        };
        if at < indent && i + 1 > line {
            break;
        }
        if at != indent {
            continue;
        }
        let k = t
            .split(':')
            .next()
            .unwrap_or("")
            .trim()
            .trim_matches(['"', '\'']);
        if k == key {
            match seen {
                None => seen = Some(i + 1),
                Some(first) => return Some((first, i + 1, at + 1)),
            }
        }
    }
    None
}

/// At most `max` characters of `s` (a parser may quote a whole 400 KB key), `…` marking a cut.
pub(crate) fn excerpt(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

/// A YAML scalar as typed after `key:`: NFKC (`０` → `0`), a trailing ` #` comment and quotes
/// dropped.
fn scalar(value: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    let v: String = value.nfkc().collect();
    v.split(" #")
        .next()
        .unwrap_or("")
        .trim()
        .trim_matches(['"', '\''])
        .to_string()
}

/// The first line from `from` (1-based) in the same block whose `key: value` holds no level:
/// not 0–3 after NFKC (`０` is fine, `５` and `たかい` are not) and not a `{level: …}` map.
/// Returns its line and the column (chars) of the value.
fn bad_level_line(text: &str, from: usize) -> Option<(usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let first = lines.get(from.checked_sub(1)?)?;
    let indent = first.len() - first.trim_start().len();
    for (i, l) in lines.iter().enumerate().skip(from - 1) {
        let t = l.trim_start();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if l.len() - t.len() < indent {
            break;
        }
        let Some((key, value)) = t.split_once(':') else {
            return Some((i + 1, l[..l.len() - t.len()].chars().count() + 1));
        };
        let v = scalar(value);
        let v = v.as_str();
        if v.is_empty() || v.starts_with('{') {
            continue;
        }
        if !v.parse::<i64>().is_ok_and(|n| (0..=3).contains(&n)) {
            let col = l[..l.len() - t.len()].chars().count() + key.chars().count() + 2;
            return Some((
                i + 1,
                col + (value.chars().count() - value.trim_start().chars().count()),
            ));
        }
    }
    None
}

/// The first line from `from` (1-based) whose `visibility:`/`subtlety:`/`default_visibility:`
/// value is no whole number after NFKC: its line and the column of the value.
fn bad_number_line(text: &str, from: usize) -> Option<(usize, usize)> {
    const KEYS: [&str; 3] = ["visibility", "subtlety", "default_visibility"];
    text.lines()
        .enumerate()
        .skip(from.saturating_sub(1))
        .find_map(|(i, l)| {
            let t = l.trim_start();
            let t = t.strip_prefix("- ").unwrap_or(t);
            let (key, value) = t.split_once(':')?;
            if !KEYS.contains(&key.trim()) {
                return None;
            }
            let v = scalar(value);
            if v.is_empty() || v.parse::<i64>().is_ok() {
                return None;
            }
            let col = l.chars().count() - value.trim_start().chars().count() + 1;
            Some((i + 1, col))
        })
}

/// A line from `line` (1-based) to three after it whose indentation holds a tab: its line and
/// the column of the tab.
fn tab_indent_near(text: &str, line: usize) -> Option<(usize, usize)> {
    text.lines()
        .enumerate()
        .skip(line.saturating_sub(1))
        .take(4)
        .find_map(|(i, l)| {
            let lead = &l[..l.len() - l.trim_start().len()];
            lead.chars().position(|c| c == '\t').map(|c| (i + 1, c + 1))
        })
}

/// The first line from `line` (1-based, up to four lines) whose indentation holds a full-width
/// space (U+3000), and that space's column (characters).
fn wide_indent_near(text: &str, line: usize) -> Option<(usize, usize)> {
    text.lines()
        .enumerate()
        .skip(line.saturating_sub(1))
        .take(4)
        .find_map(|(i, l)| {
            let lead = &l[..l.len() - l.trim_start().len()];
            lead.chars()
                .position(|c| c == '\u{3000}')
                .map(|c| (i + 1, c + 1))
        })
}

/// A line at or up to two before `line` (1-based) where a key is followed by a full-width
/// colon and no ASCII colon: its line and the column of the `：`.
fn full_width_colon_before(text: &str, line: usize) -> Option<(usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    (line.saturating_sub(2).max(1)..=line).rev().find_map(|n| {
        let l = lines.get(n - 1)?;
        let t = l.trim_start();
        if t.starts_with('#') || t.starts_with('-') || l.contains(':') {
            return None;
        }
        let c = l.chars().position(|c| c == '：')?;
        Some((n, c + 1))
    })
}

/// `entities/characters/やな/sections/基本` → `characters/やな/基本`; a secret's field →
/// `characters/やな/SEC-1 (visibility)`; any other path is joined with dots.
fn describe_path(keys: &[String]) -> Option<String> {
    match keys {
        [] => None,
        [e, ty, name, rest @ ..] if e == "entities" => Some(match rest {
            [list, item, field @ ..] if list == "sections" || list == "secrets" => {
                let mut s = format!("{ty}/{name}/{item}");
                if !field.is_empty() {
                    s.push_str(&format!(" ({})", field.join(".")));
                }
                s
            }
            [] => format!("{ty}/{name}"),
            field => format!("{ty}/{name} ({})", field.join(".")),
        }),
        keys => Some(keys.join(".")),
    }
}

/// 1-based (line, col) of the first line at or after `after_line` whose trimmed text starts
/// with `key:`. Used to point a semantic error (a bad level) at the line the writer typed.
pub(crate) fn find_key(text: &str, key: &str, after_line: usize) -> Option<(usize, usize)> {
    find_entry(text, key, None, after_line)
}

/// As [`find_key`], and when `value` is given only a line where the key holds that value
/// (`- id: SEC-2` points at that secret, not the entity's first).
pub(crate) fn find_entry(
    text: &str,
    key: &str,
    value: Option<&str>,
    after_line: usize,
) -> Option<(usize, usize)> {
    let pat = format!("{key}:");
    text.lines()
        .enumerate()
        .skip(after_line.saturating_sub(1))
        .find_map(|(i, l)| {
            let t = l.trim_start();
            let t = t.strip_prefix("- ").unwrap_or(t);
            let unq = t.trim_start_matches(['"', '\'']);
            let rest = [pat.clone(), format!("{key}\":"), format!("{key}':")]
                .iter()
                .find_map(|p| unq.strip_prefix(p.as_str()))?;
            let holds = value.is_none_or(|v| rest.trim().trim_matches(['"', '\'']) == v);
            holds.then(|| (i + 1, l.len() - t.len() + 1))
        })
}

#[cfg(test)]
mod fail_closed_tests;
#[cfg(test)]
#[path = "hidden_ids_tests.rs"]
mod hidden_ids_tests;
#[cfg(test)]
mod tests;

/// One line of block YAML as the path finder sees it.
struct YamlLine<'a> {
    /// Column of the line's first character (the `-` of a list item).
    indent: usize,
    /// Column of the key (after `- ` on a list item's first line).
    key_indent: usize,
    item: bool,
    key: &'a str,
    value: &'a str,
}

fn yaml_line(l: &str) -> Option<YamlLine<'_>> {
    let t = l.trim_start_matches(' ');
    if t.is_empty() || t.starts_with('#') {
        return None;
    }
    let indent = l.len() - t.len();
    let (item, body) = match t.strip_prefix('-') {
        Some(rest) if rest.is_empty() || rest.starts_with(' ') => {
            (true, rest.trim_start_matches(' '))
        }
        _ => (false, t),
    };
    let key_indent = l.len() - body.len();
    let (key, value) = body.split_once(':').unwrap_or((body, ""));
    Some(YamlLine {
        indent,
        key_indent,
        item,
        key: key.trim().trim_matches(['"', '\'']),
        value: value.trim().trim_matches(['"', '\'']),
    })
}

/// The keys leading to `line` (1-based) of a block-style YAML text, outermost first; a list
/// item is named by its `id` or `name` (else `[N]`). Lets a type error that serde reports by
/// position say which entity and section it belongs to.
pub(crate) fn yaml_path_at(text: &str, line: usize) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let Some(mut at) = line.checked_sub(1).filter(|i| *i < lines.len()) else {
        return Vec::new();
    };
    let Some(first) = yaml_line(lines[at]) else {
        return Vec::new();
    };
    let mut path = vec![first.key.to_string()];
    let mut want = first.key_indent;
    let mut item_at = first.item.then_some(at);
    loop {
        if let Some(start) = item_at.take() {
            // Inside a list item that starts at `start`: name it, then find the list's key.
            let m = yaml_line(lines[start]).map(|y| y.indent).unwrap_or(0);
            path.push(item_label(&lines, start, m));
            let parent = (0..start).rev().find_map(|j| {
                let y = yaml_line(lines[j])?;
                let other_item = y.item && y.indent == m;
                (!other_item && (y.key_indent < m || (y.key_indent == m && !y.item)))
                    .then_some((j, y))
            });
            let Some((j, y)) = parent else { break };
            path.push(y.key.to_string());
            want = y.key_indent;
            item_at = y.item.then_some(j);
            at = j;
            continue;
        }
        let found = (0..at).rev().find_map(|j| {
            let y = yaml_line(lines[j])?;
            (y.key_indent < want || (y.item && y.key_indent == want)).then_some((j, y))
        });
        let Some((j, y)) = found else { break };
        at = j;
        if y.key_indent == want {
            // The first line of the list item this mapping belongs to.
            item_at = Some(j);
            continue;
        }
        path.push(y.key.to_string());
        want = y.key_indent;
        item_at = y.item.then_some(j);
    }
    path.reverse();
    path
}

fn item_label(lines: &[&str], start: usize, marker: usize) -> String {
    let ki = yaml_line(lines[start]).map_or(marker + 2, |y| y.key_indent);
    let mut n = 0;
    for l in &lines[..start] {
        if let Some(y) = yaml_line(l)
            && y.item
            && y.indent == marker
        {
            n += 1;
        }
    }
    for (k, l) in lines.iter().enumerate().skip(start) {
        let Some(y) = yaml_line(l) else { continue };
        if k > start && (y.key_indent <= marker || (y.item && y.indent == marker)) {
            break;
        }
        if y.key_indent == ki && matches!(y.key, "id" | "name") && !y.value.is_empty() {
            return y.value.to_string();
        }
    }
    format!("[{n}]")
}
