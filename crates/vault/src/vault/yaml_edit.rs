//! Format-preserving saves of visibility.yaml: the writer's file is edited line by line where
//! its values changed, so comments, key order, quoting and blank lines stay. The change set is
//! the difference between the file as it now reads and the work to save (both in canonical
//! form); each change is located in the text by an indentation-based index of block mappings,
//! block sequences and one-line flow collections (`{yana: 2}`, `[a, b]`). A value whose shape
//! changed, or one inside a flow collection, is rewritten in flow style in place; a new key is
//! inserted at the end of its parent block. The result is parsed again and must equal the work
//! to save — otherwise (a layout this index does not follow) the caller writes the file whole
//! and says that comments were not kept.

use std::collections::BTreeMap;

use serde_norway::Value;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Seg {
    Key(String),
    Index(usize),
}

type Path = Vec<Seg>;

#[derive(Debug, Clone, Copy)]
enum Loc {
    /// An inline value: a scalar, or a one-line flow collection, at bytes `span` of `line`.
    Inline {
        line: usize,
        span: (usize, usize),
        flow: bool,
    },
    /// A block container opened by `key:` (or a sequence item's mapping) at `indent`.
    Block { line: usize, indent: usize },
}

/// Byte offset where a trailing ` # comment` starts (outside quotes), else the line's length.
fn comment_start(line: &str) -> usize {
    let (mut sq, mut dq) = (false, false);
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !dq => sq = !sq,
            '"' if !sq => dq = !dq,
            '#' if !sq && !dq && (prev == ' ' || i == 0) => return i,
            _ => {}
        }
        prev = c;
    }
    line.len()
}

/// Splits `key: rest` (outside quotes and brackets); None when the text is not a mapping entry.
fn split_key(s: &str) -> Option<(String, usize)> {
    let (mut sq, mut dq, mut depth) = (false, false, 0i32);
    let b = s.as_bytes();
    for (i, c) in s.char_indices() {
        match c {
            '\'' if !dq => sq = !sq,
            '"' if !sq => dq = !dq,
            '{' | '[' if !sq && !dq => depth += 1,
            '}' | ']' if !sq && !dq => depth -= 1,
            ':' if !sq && !dq && depth == 0 && (i + 1 == b.len() || b[i + 1] == b' ') => {
                let key = s[..i]
                    .trim()
                    .trim_matches('"')
                    .trim_matches('\'')
                    .to_string();
                return Some((key, i + 1));
            }
            _ => {}
        }
    }
    None
}

/// Path → location for every value the index follows.
fn index(lines: &[&str]) -> BTreeMap<Path, Loc> {
    let mut out = BTreeMap::new();
    // (indent, path) of open containers; sequence counters per path.
    let mut stack: Vec<(usize, Path)> = Vec::new();
    let mut counters: BTreeMap<Path, usize> = BTreeMap::new();
    for (n, raw) in lines.iter().enumerate() {
        let body = &raw[..comment_start(raw)];
        if body.trim().is_empty() || body.trim_start().starts_with("---") {
            continue;
        }
        let indent = body.len() - body.trim_start().len();
        while stack.last().is_some_and(|(i, _)| *i >= indent) {
            stack.pop();
        }
        let parent = stack.last().map(|(_, p)| p.clone()).unwrap_or_default();
        let (mut at, mut path, mut key_indent) = (indent, parent, indent);
        if body[indent..].starts_with("- ") || body[indent..].trim_end() == "-" {
            let c = counters.entry(path.clone()).or_insert(0);
            path.push(Seg::Index(*c));
            *c += 1;
            at = indent + 2;
            key_indent = indent + 2;
            stack.push((indent, path.clone()));
            if split_key(&body[at.min(body.len())..]).is_some() {
                out.insert(path.clone(), Loc::Block { line: n, indent });
            }
        }
        let text = &body[at.min(body.len())..];
        match split_key(text) {
            Some((key, colon)) => {
                path.push(Seg::Key(key));
                let rest = &text[colon..];
                let value = rest.trim();
                if value.is_empty() {
                    out.insert(
                        path.clone(),
                        Loc::Block {
                            line: n,
                            indent: key_indent,
                        },
                    );
                    stack.push((key_indent, path));
                } else if !value.starts_with('|') && !value.starts_with('>') {
                    let start = at + colon + (rest.len() - rest.trim_start().len());
                    let flow = value.starts_with('{') || value.starts_with('[');
                    let span = (start, start + value.len());
                    out.insert(
                        path,
                        Loc::Inline {
                            line: n,
                            span,
                            flow,
                        },
                    );
                }
            }
            None if at > indent => {
                let value = text.trim();
                let span = (at, at + value.len());
                let flow = value.starts_with('{') || value.starts_with('[');
                out.insert(
                    path,
                    Loc::Inline {
                        line: n,
                        span,
                        flow,
                    },
                );
            }
            None => {}
        }
    }
    out
}

/// One value in flow style (strings quoted when flow syntax would misread them).
fn flow(v: &Value) -> String {
    match v {
        Value::Mapping(m) => {
            let parts: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}: {}", flow(k), flow(v)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        Value::Sequence(s) => format!("[{}]", s.iter().map(flow).collect::<Vec<_>>().join(", ")),
        Value::String(s) => {
            let plain = serde_norway::to_string(s).unwrap_or_default();
            let plain = plain.trim_end();
            if plain.contains([',', '[', ']', '{', '}', '\n']) || plain.is_empty() {
                serde_json::to_string(s).unwrap_or_default()
            } else {
                plain.to_string()
            }
        }
        other => serde_norway::to_string(other)
            .unwrap_or_default()
            .trim_end()
            .to_string(),
    }
}

fn get<'a>(root: &'a Value, path: &[Seg]) -> Option<&'a Value> {
    path.iter().try_fold(root, |v, s| match (s, v) {
        (Seg::Key(k), Value::Mapping(m)) => m.get(Value::String(k.clone())),
        (Seg::Index(i), Value::Sequence(q)) => q.get(*i),
        _ => None,
    })
}

fn key_of(k: &Value) -> Option<String> {
    match k {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// (path, present in new) of every value that differs, at the shallowest level that differs.
fn diff(old: &Value, new: &Value, path: &mut Path, out: &mut Vec<(Path, bool)>) {
    match (old, new) {
        (Value::Mapping(a), Value::Mapping(b)) => {
            for (k, v) in b {
                let Some(key) = key_of(k) else {
                    out.push((path.clone(), true));
                    continue;
                };
                path.push(Seg::Key(key));
                match a.get(k) {
                    Some(o) => diff(o, v, path, out),
                    None => out.push((path.clone(), true)),
                }
                path.pop();
            }
            for k in a.keys().filter(|k| !b.contains_key(*k)) {
                let mut p = path.clone();
                p.push(Seg::Key(key_of(k).unwrap_or_default()));
                out.push((p, false));
            }
        }
        (Value::Sequence(a), Value::Sequence(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                path.push(Seg::Index(i));
                diff(x, y, path, out);
                path.pop();
            }
        }
        _ if old != new => out.push((path.clone(), true)),
        _ => {}
    }
}

/// The last line of the block opened at `line` with `indent` (its deepest following content).
fn block_end(lines: &[&str], line: usize, indent: usize) -> usize {
    let mut end = line;
    for (n, raw) in lines.iter().enumerate().skip(line + 1) {
        let body = &raw[..comment_start(raw)];
        if body.trim().is_empty() {
            continue;
        }
        if body.len() - body.trim_start().len() <= indent {
            break;
        }
        end = n;
    }
    end
}

/// The indentation of the block's keys: its first child's, else two more than its own.
fn child_indent(lines: &[&str], line: usize, indent: usize) -> usize {
    let own = lines[line];
    let body = &own[..comment_start(own)];
    let t = body.trim_start();
    if t.starts_with("- ") {
        // A sequence item's mapping: its keys line up with the one after the dash.
        return body.len() - t.len() + 2;
    }
    lines
        .iter()
        .skip(line + 1)
        .map(|l| &l[..comment_start(l)])
        .find(|b| !b.trim().is_empty())
        .map(|b| b.len() - b.trim_start().len())
        .filter(|i| *i > indent)
        .unwrap_or(indent + 2)
}

enum Edit {
    Replace {
        line: usize,
        span: (usize, usize),
        text: String,
    },
    Insert {
        after: usize,
        text: Vec<String>,
    },
    Delete {
        from: usize,
        to: usize,
    },
}

/// `original` edited to say `new` (both YAML texts of the same schema, `new` canonical); None
/// when the change set cannot be placed in the text.
pub fn edit(original: &str, old: &Value, new: &Value) -> Option<String> {
    let lines: Vec<&str> = original.lines().collect();
    let idx = index(&lines);
    let mut changes = Vec::new();
    diff(old, new, &mut Vec::new(), &mut changes);
    let mut edits: Vec<Edit> = Vec::new();
    let mut flows_done: Vec<Path> = Vec::new();
    for (path, present) in changes {
        // The change's own location, or the flow collection around it.
        let flow_anc = (0..path.len()).find_map(|n| match idx.get(&path[..n]) {
            Some(Loc::Inline {
                line,
                span,
                flow: true,
            }) => Some((path[..n].to_vec(), *line, *span)),
            _ => None,
        });
        if let Some((p, line, span)) = flow_anc {
            if !flows_done.contains(&p) {
                flows_done.push(p.clone());
                edits.push(Edit::Replace {
                    line,
                    span,
                    text: flow(get(new, &p)?),
                });
            }
            continue;
        }
        match (idx.get(&path), present) {
            (Some(Loc::Inline { line, span, .. }), true) => {
                edits.push(Edit::Replace {
                    line: *line,
                    span: *span,
                    text: flow(get(new, &path)?),
                });
            }
            (Some(Loc::Inline { line, .. }), false) => {
                let l = lines[*line];
                if l.trim_start().starts_with("- ") {
                    return None;
                }
                edits.push(Edit::Delete {
                    from: *line,
                    to: *line,
                });
            }
            (Some(Loc::Block { line, indent }), false) => {
                edits.push(Edit::Delete {
                    from: *line,
                    to: block_end(&lines, *line, *indent),
                });
            }
            (Some(Loc::Block { .. }), true) => return None,
            (None, false) => return None,
            (None, true) => {
                let (Seg::Key(key), parent) = path.split_last()? else {
                    return None;
                };
                let value = get(new, &path)?;
                let mut m = serde_norway::Mapping::new();
                m.insert(Value::String(key.clone()), value.clone());
                let block = serde_norway::to_string(&Value::Mapping(m)).ok()?;
                let (after, pad) = match idx.get(parent) {
                    _ if parent.is_empty() => (lines.len().saturating_sub(1), 0),
                    Some(Loc::Block { line, indent }) => (
                        block_end(&lines, *line, *indent),
                        child_indent(&lines, *line, *indent),
                    ),
                    _ => return None,
                };
                let text = block
                    .lines()
                    .map(|l| format!("{}{l}", " ".repeat(pad)))
                    .collect();
                edits.push(Edit::Insert { after, text });
            }
        }
    }
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    // Bottom up, so earlier line numbers stay valid; on one line, right to left.
    edits.sort_by_key(|e| {
        std::cmp::Reverse(match e {
            Edit::Replace { line, span, .. } => (*line, 1, span.0),
            Edit::Insert { after, .. } => (*after, 2, 0),
            Edit::Delete { from, .. } => (*from, 0, 0),
        })
    });
    for e in edits {
        match e {
            Edit::Replace { line, span, text } => out[line].replace_range(span.0..span.1, &text),
            Edit::Insert { after, text } => {
                let at = (after + 1).min(out.len());
                out.splice(at..at, text);
            }
            Edit::Delete { from, to } => {
                out.drain(from..=to);
            }
        }
    }
    let mut text = out.join("\n");
    if original.ends_with('\n') || original.is_empty() {
        text.push('\n');
    }
    Some(text)
}

#[cfg(test)]
#[path = "yaml_edit_tests.rs"]
mod tests;
