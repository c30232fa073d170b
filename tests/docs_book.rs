//! The book in docs/ stays true: its command reference is what the binary parses (a flag added
//! without regenerating it fails here), every chapter is in SUMMARY.md and every SUMMARY entry
//! exists, every relative link and `{{#include}}` resolves. CI also builds it with mdBook.

use std::path::{Path, PathBuf};

fn docs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src")
}

fn chapters(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            chapters(&p, out);
        } else if p.extension().is_some_and(|x| x == "md") {
            out.push(p);
        }
    }
}

#[test]
fn the_command_reference_is_what_the_binary_parses() {
    let want = kakeai::cli::docs::reference_markdown();
    let have = std::fs::read_to_string(docs().join("reference/commands.md")).unwrap_or_default();
    assert!(
        have == want,
        "docs/src/reference/commands.md is stale: run `cargo run -- reference > docs/src/reference/commands.md`"
    );
}

/// Every (long) flag of every command appears in the reference: generated variants of the check
/// above that name the missing flag.
#[test]
fn every_flag_is_in_the_reference() {
    use clap::CommandFactory;
    let have = std::fs::read_to_string(docs().join("reference/commands.md")).unwrap_or_default();
    fn walk(c: &clap::Command, have: &str, path: &str) {
        if c.is_hide_set() {
            return;
        }
        assert!(have.contains(&format!("`{path}`")), "{path} is missing");
        for a in c.get_arguments().filter(|a| !a.is_hide_set()) {
            if let Some(l) = a.get_long().filter(|l| !matches!(*l, "help" | "version")) {
                assert!(have.contains(&format!("--{l}")), "{path} --{l} is missing");
            }
        }
        for s in c.get_subcommands().filter(|s| s.get_name() != "help") {
            walk(s, have, &format!("{path} {}", s.get_name()));
        }
    }
    let mut cmd = kakeai::cli::Cli::command();
    cmd.build();
    walk(&cmd, &have, "kakeai");
}

#[test]
fn every_chapter_is_listed_and_every_link_resolves() {
    let root = docs();
    let summary = std::fs::read_to_string(root.join("SUMMARY.md")).unwrap();
    let mut all = Vec::new();
    chapters(&root, &mut all);
    let link = regex::Regex::new(r"\]\(([^)#\s]+)(#[^)]*)?\)").unwrap();
    let include = regex::Regex::new(r"\{\{#include ([^}\s]+)\}\}").unwrap();
    for ch in &all {
        let rel = ch
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if rel != "SUMMARY.md" {
            assert!(
                summary.contains(&format!("({rel})")),
                "{rel} is not in SUMMARY.md"
            );
        }
        let text = std::fs::read_to_string(ch).unwrap();
        for c in link.captures_iter(&text) {
            let target = &c[1];
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let p = ch.parent().unwrap().join(target);
            assert!(p.exists(), "{rel}: link to {target} does not resolve");
        }
        for c in include.captures_iter(&text) {
            let p = ch.parent().unwrap().join(&c[1]);
            assert!(p.is_file(), "{rel}: include {} does not resolve", &c[1]);
        }
    }
}

/// README is a front door (≤ 250 lines) and no user document is organised by or cites issue
/// numbers.
#[test]
fn readme_is_a_front_door_and_no_document_cites_an_issue() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(
        readme.lines().count() <= 250,
        "README has {} lines",
        readme.lines().count()
    );
    let cites = regex::Regex::new(r"(?i)\bissues?\s+#?\d+").unwrap();
    let mut all = vec![root.join("README.md")];
    chapters(&docs(), &mut all);
    for p in all {
        let text = std::fs::read_to_string(&p).unwrap();
        if let Some(m) = cites.find(&text) {
            panic!("{} cites {:?}", p.display(), m.as_str());
        }
    }
}

/// The operator's recipes agree with the code: the systemd unit runs the binary where the book
/// installs it, and every drain time stated (the unit, serve.toml, the operator guide) is the
/// `drain_seconds` the server reads, with `TimeoutStopSec` above it.
#[test]
fn the_unit_the_install_and_the_drain_agree() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
    let unit = read("assets/serve/kakeai-serve@.service");
    let guide = read("docs/src/guides/operator.md");
    let readme = read("README.md");
    let key = |k: &str| {
        unit.lines()
            .find_map(|l| l.strip_prefix(k))
            .unwrap_or_else(|| panic!("no {k} in the unit"))
            .to_string()
    };
    let bin = key("ExecStart=").split(' ').next().unwrap().to_string();
    let install_root = |text: &str| -> Vec<String> {
        text.split("cargo install --path . --root ")
            .skip(1)
            .map(|r| r.split([' ', '`', '\n']).next().unwrap().to_string())
            .collect()
    };
    for (name, text) in [
        ("the unit", &unit),
        ("the operator guide", &guide),
        ("README", &readme),
    ] {
        let roots = install_root(text);
        assert!(
            !roots.is_empty(),
            "{name} says how to install the service's binary"
        );
        for r in roots {
            assert_eq!(format!("{r}/bin/kakeai"), bin, "{name}");
        }
    }
    let defaults: toml::Table = read("assets/serve/serve.toml").parse().unwrap();
    let drain = defaults["drain_seconds"].as_integer().unwrap();
    let stop: i64 = key("TimeoutStopSec=").trim().parse().unwrap();
    assert!(stop >= drain + 10, "TimeoutStopSec {stop} vs drain {drain}");
    // Every line about the drain states only these two numbers of seconds.
    let texts = [("unit", unit.as_str()), ("guide", guide.as_str())];
    for (name, text) in texts {
        for para in text.split("\n\n").flat_map(|p| p.split("\n- ")) {
            let p = para.replace('\n', " ");
            // Tables are measurements with the setting they name (`drain_seconds = 2`).
            if p.trim_start().starts_with('|')
                || (!p.contains("drain_seconds") && !p.contains("SIGTERM drains"))
            {
                continue;
            }
            for w in p
                .split(|c: char| !c.is_ascii_digit() && c != '~')
                .filter(|w| !w.is_empty())
            {
                let after = &p[p.find(w).unwrap() + w.len()..];
                if !(after.starts_with(" s") || after.starts_with('s')) {
                    continue;
                }
                let n: i64 = w.trim_start_matches('~').parse().unwrap();
                assert!(
                    n == drain || n == stop,
                    "{name}: a drain of {n} s where the code drains {drain} s: {p}"
                );
            }
        }
    }
}
