//! YAML aliases (`*name`) are refused in kakeai's files: one alias re-reads its anchor's whole
//! value, so a 1.7 MB file of one 1 MiB anchor and 100,000 aliases expands to 5.8 GB
//! (serde_norway sets no expansion budget: serde_norway-0.9.42 src/de.rs:481 `jump` follows
//! every alias). A linear scan outside quotes, comments and block scalars finds the first one
//! and names its line:col; the file is never handed to the parser.

use std::path::Path;

use super::LimitError;

/// The first alias of `text` (a YAML file, or a Markdown file's front matter).
pub fn yaml_aliases(path: &Path, text: &str, front_matter: bool) -> Result<(), LimitError> {
    // Inside a `|` / `>` block scalar: the indent of the line that opened it.
    let mut block: Option<usize> = None;
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        if front_matter {
            if line_no == 1 {
                if line.trim_end() != "---" {
                    return Ok(());
                }
                continue;
            }
            if line.trim_end() == "---" {
                return Ok(());
            }
        }
        let body = line.trim_start_matches(' ');
        let indent = line.len() - body.len();
        if let Some(open) = block {
            if body.is_empty() || indent > open {
                continue;
            }
            block = None;
        }
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        let (content, alias_at) = scan(line);
        if let Some(col) = alias_at {
            return Err(LimitError::Alias {
                path: path.to_path_buf(),
                line: line_no,
                col,
            });
        }
        if opens_block(content) {
            block = Some(indent);
        }
    }
    Ok(())
}

/// The line without its comment, and the 1-based column (in chars) of an alias on it.
fn scan(line: &str) -> (&str, Option<usize>) {
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    let mut end = line.len();
    for (col, (at, c)) in line.char_indices().enumerate() {
        match quote {
            Some(q) if c == q && prev != '\\' => quote = None,
            Some(_) => {}
            None => match c {
                '"' | '\'' if starts_node(&line[..at]) => quote = Some(c),
                '#' if prev.is_whitespace() => {
                    end = at;
                    break;
                }
                '*' if starts_node(&line[..at])
                    && line[at + 1..]
                        .chars()
                        .next()
                        .is_some_and(|n| !n.is_whitespace()) =>
                {
                    return (&line[..at], Some(col + 1));
                }
                _ => {}
            },
        }
        prev = c;
    }
    (&line[..end], None)
}

/// Whether a node may start right after `before`: at the line's start, after a sequence dash,
/// a key's `: `, a `? `, or a flow `[`, `{`, `,`.
fn starts_node(before: &str) -> bool {
    let t = before.trim_end();
    let spaced = t.len() < before.len();
    match t.chars().last() {
        None => true,
        Some('[' | '{' | ',') => true,
        Some('-' | '?') => {
            spaced
                && t[..t.len() - 1]
                    .chars()
                    .last()
                    .is_none_or(|c| c == ' ' || c == '-')
        }
        Some(':') => spaced,
        _ => false,
    }
}

/// `key: |`, `- >-`, `|2+` …: the next, deeper lines are a block scalar's text.
fn opens_block(content: &str) -> bool {
    let t = content.trim_end();
    let last = t.rsplit([' ', '\t']).next().unwrap_or(t);
    let mut cs = last.chars();
    matches!(cs.next(), Some('|' | '>')) && cs.all(|c| c == '-' || c == '+' || c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Option<(usize, usize)> {
        match yaml_aliases(Path::new("v.yaml"), text, false) {
            Err(LimitError::Alias { line, col, .. }) => Some((line, col)),
            _ => None,
        }
    }

    #[test]
    fn aliases_are_found_where_nodes_start() {
        assert_eq!(at("a: &x 1\nb: *x\n"), Some((2, 4)));
        assert_eq!(at("list:\n  - &x big\n  - *x\n"), Some((3, 5)));
        assert_eq!(at("f: [1, *x]\n"), Some((1, 8)));
        assert_eq!(at("f: {k: 1, j: *x}\n"), Some((1, 14)));
        assert_eq!(at("*x : 1\n"), Some((1, 1)));
        assert_eq!(at("名前: 「やな」\n別名: *x\n"), Some((2, 5)));
    }

    #[test]
    fn stars_that_are_not_aliases_pass() {
        for ok in [
            "a: 5 * 3\n",
            "a: \"*x\"\n",
            "a: '*x'\n",
            "a: b # *x\n",
            "a: |\n  - *emphasis* in a block\n  *x\nb: 1\n",
            "a: >-\n  *x\n",
            "a: x-*y\n",
            "a: *\n",
        ] {
            assert_eq!(at(ok), None, "{ok:?}");
        }
        // After the block ends, an alias is seen again.
        assert_eq!(at("a: |\n  *x\nb: *y\n"), Some((3, 4)));
    }

    #[test]
    fn a_billion_laughs_file_is_refused_in_linear_time() {
        let mut text = format!("big: &a \"{}\"\nlist:\n", "x".repeat(1 << 20));
        for _ in 0..100_000 {
            text.push_str("  - *a\n");
        }
        assert_eq!(at(&text), Some((3, 5)));
        // Through the reader every vault file goes through (vault::load).
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("visibility.yaml");
        std::fs::write(&p, &text).unwrap();
        let e = crate::limits::read_yaml(&p).unwrap_err().to_string();
        assert!(e.contains("visibility.yaml:3:5: a YAML alias"), "{e}");
    }

    #[test]
    fn only_front_matter_counts_in_markdown() {
        let md = "---\nname: a\n---\n本文 *x* と - *y\n";
        assert!(yaml_aliases(Path::new("e.md"), md, true).is_ok());
        let md = "---\nname: *x\n---\n";
        assert!(yaml_aliases(Path::new("e.md"), md, true).is_err());
    }
}
