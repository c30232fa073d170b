//! The workbench's shape, checked (issue 23): panes are rooms — no file under src/tui outside
//! `app/` and `runtime/` imports `app` or sees the `App`; only `runtime/` (where the `Runtime`
//! carries out every command) spawns tasks; no function in src/tui is longer than 80 lines; the panes are
//! dispatched in one place (panes.rs), so no other file names a pane but its own.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("src/tui") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// The code of a file without its comments and its test module.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("source");
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => &text[..],
    };
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn tui() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/tui/src/tui")
}

/// (path under src/tui, code) of every file whose top-level folder or name is not in `skip`.
fn code_outside(skip: &[&str]) -> Vec<(String, String)> {
    let root = tui();
    rust_files(&root)
        .into_iter()
        .filter_map(|f| {
            let rel = f.strip_prefix(&root).expect("under src/tui");
            let top = rel.components().next()?.as_os_str().to_str()?;
            (!skip.contains(&top)).then(|| (rel.display().to_string(), code(&f)))
        })
        .collect()
}

#[test]
fn no_pane_imports_the_app_or_sees_it() {
    let bad: Vec<String> = code_outside(&["app", "runtime"])
        .into_iter()
        .filter(|(_, c)| {
            let imports = ["super::app", "crate::tui::app", "tui::app::"]
                .iter()
                .any(|w| c.contains(w));
            let sees = c
                .split(|ch: char| !ch.is_alphanumeric() && ch != '_')
                .any(|w| w == "App");
            imports || sees
        })
        .map(|(rel, _)| rel)
        .collect();
    assert!(
        bad.is_empty(),
        "files outside app/ and runtime/ reaching into the app: {bad:?}"
    );
}

#[test]
fn only_the_runtime_spawns_tasks() {
    let bad: Vec<String> = code_outside(&["runtime"])
        .into_iter()
        .filter(|(_, c)| c.contains("tokio::spawn") || c.contains("spawn_blocking"))
        .map(|(rel, _)| rel)
        .collect();
    assert!(bad.is_empty(), "I/O tasks outside runtime/: {bad:?}");
}

/// Files and the store are opened at the edge only: outside runtime/, no code in src/tui
/// (tests aside) reads or writes a file or opens a store.
#[test]
fn only_the_runtime_touches_files_or_the_store() {
    let bad: Vec<String> = code_outside(&["runtime"])
        .into_iter()
        .filter(|(rel, _)| !rel.ends_with("_tests.rs"))
        .filter(|(_, c)| {
            ["std::fs::", "limits::read", "Store::open", "read_dir("]
                .iter()
                .any(|w| c.contains(w))
        })
        .map(|(rel, _)| rel)
        .collect();
    assert!(
        bad.is_empty(),
        "file or store I/O outside runtime/: {bad:?}"
    );
}

#[test]
fn no_function_in_the_workbench_is_longer_than_80_lines() {
    let mut long = Vec::new();
    for f in rust_files(&tui()) {
        let text = std::fs::read_to_string(&f).expect("source");
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        while i < lines.len() {
            let l = lines[i].trim_start();
            let indent = lines[i].len() - l.len();
            let is_fn = (l.starts_with("fn ")
                || l.starts_with("pub fn ")
                || l.starts_with("pub(crate) fn ")
                || l.starts_with("pub(super) fn ")
                || l.starts_with("async fn ")
                || l.starts_with("pub async fn ")
                || l.starts_with("pub(crate) async fn ")
                || l.starts_with("pub(super) async fn "))
                && !l.ends_with(';');
            if is_fn {
                let close = format!("{}}}", " ".repeat(indent));
                let end = (i + 1..lines.len()).find(|&j| lines[j] == close);
                if let Some(end) = end
                    && end - i + 1 > 80
                {
                    long.push(format!("{}:{} ({} lines)", f.display(), i + 1, end - i + 1));
                }
            }
            i += 1;
        }
    }
    assert!(long.is_empty(), "functions over 80 lines: {long:#?}");
}

/// One dispatch: outside panes.rs (the list and the dispatch) and focus.rs, no file names a
/// pane — except `Pane::Detail`, the pane the conversation and chat belong to, and a room's
/// own files naming their own pane (conversations.rs reloads `Pane::Conversations`). A new
/// pane is wired in panes.rs alone.
#[test]
fn panes_are_named_only_where_they_are_dispatched() {
    let root = tui();
    let mut bad = Vec::new();
    for f in rust_files(&root) {
        let rel = f
            .strip_prefix(&root)
            .expect("under src/tui")
            .display()
            .to_string();
        if rel == "panes.rs" || rel == "focus.rs" {
            continue;
        }
        let stem = f
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("")
            .to_string();
        let c = code(&f);
        for (i, _) in c.match_indices("Pane::") {
            let name: String = c[i + 6..]
                .chars()
                .take_while(|ch| ch.is_alphanumeric())
                .collect();
            let own = name.to_lowercase() == stem;
            let allowed = ["Detail", "ALL", "from_name"].contains(&name.as_str()) || own;
            if !allowed && name.starts_with(|ch: char| ch.is_uppercase()) {
                bad.push(format!("{rel}: Pane::{name}"));
            }
        }
    }
    assert!(bad.is_empty(), "panes named outside panes.rs: {bad:?}");
}

/// Typed errors up to the UI edge: no `Result<_, String>` in src/tui — a failure carries its
/// kind (`UiError`), and the level it is shown at follows from the kind.
#[test]
fn no_stringly_typed_results_in_the_workbench() {
    let bad: Vec<String> = code_outside(&[])
        .into_iter()
        .flat_map(|(rel, c)| {
            stringly_results(&c)
                .into_iter()
                .map(move |r| format!("{rel}: {r}"))
        })
        .collect();
    assert!(bad.is_empty(), "Result<_, String> in src/tui: {bad:#?}");
}

/// Every `Result<…>` in `code` (whitespace and line breaks ignored, so a type written over
/// several lines counts) whose error type — its last argument at the top level — is `String`.
fn stringly_results(code: &str) -> Vec<String> {
    let flat: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    let mut out = Vec::new();
    for (i, _) in flat.match_indices("Result<") {
        let body = &flat[i + "Result<".len()..];
        let (mut depth, mut commas, mut end) = (0usize, Vec::new(), None);
        for (j, ch) in body.char_indices() {
            match ch {
                '<' | '(' | '[' => depth += 1,
                '>' | ')' | ']' if depth == 0 => {
                    end = Some(j);
                    break;
                }
                '>' | ')' | ']' => depth -= 1,
                ',' if depth == 0 => commas.push(j),
                _ => {}
            }
        }
        let Some(e) = end else { continue };
        // A trailing comma closes the list without another argument.
        let args = body[..e].strip_suffix(',').unwrap_or(&body[..e]);
        let last_comma = commas.into_iter().rfind(|c| *c < args.len());
        if let Some(c) = last_comma
            && &args[c + 1..] == "String"
        {
            out.push(format!("Result<{args}>"));
        }
    }
    out
}

/// The check sees a `Result<_, String>` however it is written, and nothing else.
#[test]
fn the_stringly_check_reads_types_over_several_lines() {
    let found = stringly_results("fn a() -> Result<\n    (u8, Vec<String>),\n    String,\n> {}");
    assert_eq!(found, ["Result<(u8,Vec<String>),String>"], "{found:?}");
    assert!(stringly_results("fn b() -> Result<Vec<String>, UiError> {}").is_empty());
    assert_eq!(stringly_results("Result<(), String>").len(), 1);
}
