//! Nesting depth of YAML and TOML text, measured by a linear pre-scan (indentation levels,
//! sequence dashes and flow brackets outside quotes), so a file nested 100,000 levels deep is
//! refused in milliseconds instead of being handed to a parser that is slow on it.

use std::path::Path;

use super::{LimitError, MAX_DEPTH};

/// Rejects YAML nested deeper than [`MAX_DEPTH`] and YAML with more than one document. With
/// `front_matter`, only a leading `---` … `---` block is YAML (a Markdown file).
pub fn yaml_check(path: &Path, text: &str, front_matter: bool) -> Result<(), LimitError> {
    let mut indents: Vec<usize> = Vec::new();
    let mut flow = 0usize;
    let mut content = false;
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        if line.starts_with("---") && line[3..].trim().is_empty() {
            if front_matter && line_no > 1 {
                return Ok(());
            }
            if content {
                return Err(LimitError::MultiDocument {
                    path: path.to_path_buf(),
                    line: line_no,
                });
            }
            continue;
        }
        if front_matter && line_no == 1 {
            return Ok(());
        }
        let body = line.trim_start_matches(' ');
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        content = true;
        let indent = line.len() - body.len();
        if flow == 0 {
            while indents.last().is_some_and(|&t| t >= indent) {
                indents.pop();
            }
            indents.push(indent);
            // Compact nested sequences and complex keys: `- - - x` and `? ? ? x` nest one
            // level per indicator.
            let mut rest = body;
            let mut col = indent;
            while let Some(r) = rest.strip_prefix("- ").or_else(|| rest.strip_prefix("? ")) {
                col += 2;
                indents.push(col);
                rest = r.trim_start_matches(' ');
            }
        }
        let (end, peak) = flow_depth(line, flow);
        flow = end;
        let depth = indents.len() + peak;
        if depth > MAX_DEPTH {
            return Err(LimitError::TooDeep {
                path: path.to_path_buf(),
                line: line_no,
                col: indent + 1,
                limit: MAX_DEPTH,
            });
        }
    }
    Ok(())
}

/// Rejects TOML whose arrays and inline tables nest deeper than [`MAX_DEPTH`].
pub fn toml_depth(path: &Path, text: &str) -> Result<(), LimitError> {
    let mut flow = 0usize;
    for (i, line) in text.lines().enumerate() {
        let body = line.trim_start();
        // A table header's brackets are not nesting.
        if flow == 0 && body.starts_with('[') {
            continue;
        }
        let (end, peak) = flow_depth(line, flow);
        flow = end;
        if peak > MAX_DEPTH {
            return Err(LimitError::TooDeep {
                path: path.to_path_buf(),
                line: i + 1,
                col: 1,
                limit: MAX_DEPTH,
            });
        }
    }
    Ok(())
}

/// Flow depth after `line` and the deepest it reached, counting `[`/`{` and `]`/`}` outside
/// quotes and comments.
fn flow_depth(line: &str, mut depth: usize) -> (usize, usize) {
    let mut peak = depth;
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    for c in line.chars() {
        match quote {
            Some(q) if c == q && prev != '\\' => quote = None,
            Some(_) => {}
            None => match c {
                '"' | '\'' => quote = Some(c),
                '#' if prev.is_whitespace() => break,
                '[' | '{' => {
                    depth += 1;
                    peak = peak.max(depth);
                }
                ']' | '}' => depth = depth.saturating_sub(1),
                _ => {}
            },
        }
        prev = c;
    }
    (depth, peak)
}
