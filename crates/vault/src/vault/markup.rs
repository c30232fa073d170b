//! The Markdown body of an entity file as the vault reads it: headings (`##` and deeper) with
//! their nesting, `<!-- … -->` comments removed wherever they stand, and visibility markers in
//! every reasonable spelling (any case, full-width colon or digits, extra spaces, on the
//! heading line itself). Anything that looks like a marker but cannot be read is an error with
//! its line and column, never body text; a marker never becomes part of a section name.

use unicode_normalization::UnicodeNormalization;

use super::model::Level;

/// One heading's own body (not its subsections').
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub name: String,
    /// 0 for the text before the first heading, else the number of `#`s (2–6).
    pub depth: usize,
    /// 1-based line of the heading (of the body's first line for the preamble).
    pub line: usize,
    pub text: String,
    /// The lowest of every marker in the heading line and the body.
    pub marker: Option<Level>,
    /// Index of the enclosing heading's block.
    pub parent: Option<usize>,
}

/// A body as parsed: its blocks and the markers of a `# title` line, which bound every block.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Body {
    pub blocks: Vec<Block>,
    pub title_marker: Option<Level>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MarkupError {
    pub line: usize,
    pub col: usize,
    pub message: String,
}

/// Text before the first heading becomes a block with this name.
pub const PREAMBLE: &str = "前文";

/// How names are compared (visibility.yaml ↔ headings, entity names ↔ files): NFKC without
/// invisible characters, runs of whitespace as one space, trimmed. `隠し設定(ネタバレ)` and `隠し設定（ネタバレ）` are equal.
pub fn norm_name(s: &str) -> String {
    // Invisible characters an editor or a copy from the web leaves (zero-width space, word
    // joiner, soft hyphen, a BOM mid-text) are no part of a name.
    let n: String = s
        .nfkc()
        .filter(|c| {
            !matches!(
                c,
                '\u{200B}' | '\u{200C}' | '\u{2060}' | '\u{FEFF}' | '\u{00AD}'
            )
        })
        .collect();
    n.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What a comment's content is: an ordinary comment, a marker, or a marker that cannot be read.
fn classify(inner: &str) -> Option<Result<Level, String>> {
    let n: String = inner.nfkc().collect::<String>().to_lowercase();
    let t = n.trim();
    let compact: String = t
        .chars()
        .filter(|c| !matches!(c, ' ' | '\t' | '\n' | '\r' | '_' | '-' | '・'))
        .collect();
    let looks = compact.starts_with("aivis")
        || compact.starts_with("visib")
        || compact.contains("visibility");
    if !looks {
        return None;
    }
    Some(read_marker(t).ok_or_else(|| {
        format!(
            "`<!-- {} -->` looks like a visibility marker but cannot be read; write `<!-- ai_visibility: N -->` with N 0, 1, 2 or 3",
            inner.trim()
        )
    }))
}

/// `ai_visibility: 2` (NFKC'd, lowercased) in any of its spellings → the level.
fn read_marker(t: &str) -> Option<Level> {
    let s = t.strip_prefix("ai").map_or(t, |s| {
        s.trim_start_matches([' ', '\t', '\n', '\r', '_', '-', '・'])
    });
    let s = s.strip_prefix("visibility")?.trim_start();
    let s = s.strip_prefix([':', '='])?.trim();
    let s = s.trim_matches(['"', '\'']).trim();
    if s.is_empty() || !s.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse::<i64>().ok().and_then(Level::new)
}

/// Text outside any comment that would have been a marker had it been inside one: the char
/// index of its `visib…`.
fn stray_marker(visible: &str) -> Option<usize> {
    // One char in, one char out, so the index is a column.
    let chars: Vec<char> = visible
        .chars()
        .map(|c| {
            let n = c.nfkc().next().unwrap_or(c);
            n.to_lowercase().next().unwrap_or(n)
        })
        .collect();
    let compact: String = chars
        .iter()
        .filter(|c| !matches!(c, ' ' | '\t' | '_' | '-' | '・'))
        .collect();
    if !compact.contains("aivisib") {
        return None;
    }
    (0..chars.len()).find(|&i| chars[i..].starts_with(&['v', 'i', 's', 'i', 'b']))
}

/// `## name` (also full-width `＃`, no space after two or more `#`) → (depth, name part).
fn heading(line: &str) -> Option<(usize, &str)> {
    let t = line.trim_start_matches(' ');
    if line.len() - t.len() > 3 {
        return None;
    }
    let depth = t.chars().take_while(|c| matches!(c, '#' | '＃')).count();
    if !(1..=6).contains(&depth) {
        return None;
    }
    let start: usize = t.chars().take(depth).map(char::len_utf8).sum();
    let rest = &t[start..];
    let spaced = rest.is_empty() || rest.starts_with([' ', '\t', '　']);
    (spaced || depth >= 2).then_some((depth, rest))
}

fn heading_name(rest: &str) -> String {
    let t = rest.trim_matches([' ', '\t', '　']);
    // A closing sequence of #s (`## 名前 ##`) is not part of the name.
    let t = t
        .trim_end_matches(['#', '＃'])
        .trim_end_matches([' ', '\t', '　']);
    t.to_string()
}

fn col_of(line: &str, byte: usize) -> usize {
    line[..byte].chars().count() + 1
}

struct OpenComment {
    line: usize,
    col: usize,
    buf: String,
}

/// Parses a body whose first line is line `first_line` of its file.
pub fn parse_body(body: &str, first_line: usize) -> Result<Body, MarkupError> {
    let mut out = Body::default();
    let mut cur = Block {
        name: PREAMBLE.into(),
        depth: 0,
        line: first_line,
        text: String::new(),
        marker: None,
        parent: None,
    };
    // Open headings by depth, for parents: (depth, index in out.blocks).
    let mut stack: Vec<(usize, usize)> = Vec::new();
    let mut open: Option<OpenComment> = None;
    let mut seen_content = false;
    // A body marker after the block's text with no text after it yet: (line, col).
    let mut trailing: Option<(usize, usize)> = None;
    for (i, raw) in body.lines().enumerate() {
        let lineno = first_line + i;
        let started_in_comment = open.is_some();
        let mut visible = String::new();
        let mut markers: Vec<Level> = Vec::new();
        let mut pos = 0;
        loop {
            let rest = &raw[pos..];
            if let Some(c) = open.as_mut() {
                match rest.find("-->") {
                    Some(j) => {
                        c.buf.push_str(&rest[..j]);
                        let c = open.take().expect("open comment");
                        match classify(&c.buf) {
                            None => {}
                            Some(Ok(l)) => markers.push(l),
                            Some(Err(message)) => {
                                return Err(MarkupError {
                                    line: c.line,
                                    col: c.col,
                                    message,
                                });
                            }
                        }
                        pos += j + 3;
                    }
                    None => {
                        c.buf.push_str(rest);
                        c.buf.push('\n');
                        break;
                    }
                }
            } else {
                match rest.find("<!--") {
                    Some(j) => {
                        visible.push_str(&rest[..j]);
                        open = Some(OpenComment {
                            line: lineno,
                            col: col_of(raw, pos + j),
                            buf: String::new(),
                        });
                        pos += j + 4;
                    }
                    None => {
                        visible.push_str(rest);
                        break;
                    }
                }
            }
        }
        if let Some(c) = stray_marker(&visible) {
            return Err(MarkupError {
                line: lineno,
                col: c + 1,
                message: "a visibility marker outside `<!-- … -->`: write `<!-- ai_visibility: N -->` on its own line or after the heading".into(),
            });
        }
        let low = markers.iter().copied().min();
        let head = (!started_in_comment).then(|| heading(&visible)).flatten();
        match head {
            Some((1, _)) if !seen_content => {
                // The document title: not content; its markers bound the whole file.
                if let Some(l) = low {
                    out.title_marker = Some(out.title_marker.map_or(l, |m| m.min(l)));
                }
            }
            Some((depth, rest)) if depth >= 2 => {
                if let Some(at) = trailing {
                    return Err(trailing_marker(at, &cur.name, Some(&heading_name(rest))));
                }
                push(&mut out.blocks, cur);
                while stack.last().is_some_and(|(d, _)| *d >= depth) {
                    stack.pop();
                }
                let index = out.blocks.len();
                cur = Block {
                    name: heading_name(rest),
                    depth,
                    line: lineno,
                    text: String::new(),
                    marker: low,
                    parent: stack.last().map(|(_, i)| *i),
                };
                stack.push((depth, index));
                seen_content = true;
            }
            _ => {
                if let Some(l) = low {
                    cur.marker = Some(cur.marker.map_or(l, |m| m.min(l)));
                    if visible.trim().is_empty() && !cur.text.trim().is_empty() {
                        let col = raw.find("<!--").map_or(1, |b| col_of(raw, b));
                        trailing = Some((lineno, col));
                    }
                } else if !visible.trim().is_empty() {
                    trailing = None;
                }
                if !visible.trim().is_empty() || (markers.is_empty() && !started_in_comment) {
                    cur.text.push_str(&visible);
                    cur.text.push('\n');
                }
                if !visible.trim().is_empty() {
                    seen_content = true;
                }
            }
        }
    }
    if let Some(c) = open {
        return Err(MarkupError {
            line: c.line,
            col: c.col,
            message: "`<!--` is never closed by `-->`".into(),
        });
    }
    if let Some(at) = trailing {
        return Err(trailing_marker(at, &cur.name, None));
    }
    push(&mut out.blocks, cur);
    Ok(out)
}

/// A marker after a section's text with no text after it: it would apply to `section`, though
/// it was most likely written for the heading below it (which would then print at its own,
/// higher level with no warning). Ambiguous, so refused, naming both.
fn trailing_marker((line, col): (usize, usize), section: &str, next: Option<&str>) -> MarkupError {
    let message = match next {
        Some(next) => format!(
            "a visibility marker with no text after it in section `{section}`: it would apply to `{section}`, not to the next heading `{next}` — put it on `{next}`'s heading line (or just below it) if it is for `{next}`, or before the text of `{section}`"
        ),
        None => format!(
            "a visibility marker with no text after it at the end of section `{section}`: put it on the heading line of `{section}` (or just below it)"
        ),
    };
    MarkupError { line, col, message }
}

/// Every block keeps its place (subsections refer to parents by index), except an empty
/// unmarked preamble, which is dropped only when it is first.
fn push(blocks: &mut Vec<Block>, mut b: Block) {
    b.text = b.text.trim().to_string();
    if b.depth == 0 && b.text.is_empty() && b.marker.is_none() {
        return;
    }
    blocks.push(b);
}

#[cfg(test)]
#[path = "markup_tests.rs"]
mod tests;
