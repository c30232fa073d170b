//! Issue 26 §3: files as real editors write them — a UTF-8 BOM (Windows Notepad), CRLF line
//! ends, full-width digits typed with the IME on, tabs — for every file kind kakeai reads:
//! YAML and Markdown (vault), TOML (rules, keymap), JSON Lines (check input, duo-talk import).

use std::path::Path;

use kakeai::director::RuleSet;
use kakeai::vault::load::load_work_dir;

const BOM: &str = "\u{feff}";

fn crlf(s: &str) -> String {
    s.replace('\n', "\r\n")
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

const VIS: &str = "version: \"1.0\"\ndefault_visibility: 0\nentities:\n  characters:\n    やな:\n      sections:\n        基本: 3\n        秘密: ０\n        予定: {level: ２, readers: {ayu: １}}\n      secrets:\n        - id: S1\n          content: 内緒\n          visibility: \"１\"\n          subtlety: ７\n";

const MD: &str = "---\ntype: character\nname: やな\nai_visibility:\n  default: ３\n---\n# やな\n\n## 基本\n姉。\n\n## 秘密\n内緒。\n\n## 予定\n来週。\n";

/// Levels of やな's sections as the reader `ayu` gets them.
fn levels(dir: &Path) -> Vec<(String, u8)> {
    let w = load_work_dir(dir).unwrap_or_else(|e| panic!("{e}"));
    let mut v: Vec<(String, u8)> = w
        .items(Some("ayu"))
        .into_iter()
        .map(|i| (i.key.clone(), i.level.get()))
        .collect();
    v.sort();
    v
}

#[test]
fn a_vault_written_with_bom_crlf_and_full_width_digits_loads_the_same() {
    let plain = tempfile::tempdir().unwrap();
    write(plain.path(), "_ai_control/visibility.yaml", VIS);
    write(plain.path(), "characters/やな.md", MD);
    let want = levels(plain.path());
    assert!(
        want.iter().any(|(k, l)| k.ends_with("秘密") && *l == 0),
        "{want:?}"
    );
    assert!(want.iter().any(|(k, l)| k.ends_with("予定") && *l == 1));
    for (name, vis, md) in [
        ("bom", format!("{BOM}{VIS}"), format!("{BOM}{MD}")),
        ("crlf", crlf(VIS), crlf(MD)),
        (
            "bom+crlf",
            format!("{BOM}{}", crlf(VIS)),
            format!("{BOM}{}", crlf(MD)),
        ),
    ] {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "_ai_control/visibility.yaml", &vis);
        write(d.path(), "characters/やな.md", &md);
        assert_eq!(levels(d.path()), want, "{name}");
    }
}

/// Every error points at the line that holds the bad value, also after a BOM and with CRLF.
#[test]
fn a_bad_level_is_reported_at_its_own_line() {
    for (bad, line) in [
        ("        秘密: ５\n", 8),
        ("        秘密: たかい\n", 8),
        ("        秘密：０\n", 8),
        ("\t秘密: 0\n", 8),
    ] {
        let vis = VIS.replace("        秘密: ０\n", bad);
        for (name, text) in [
            ("plain", vis.clone()),
            ("bom", format!("{BOM}{vis}")),
            ("crlf", crlf(&vis)),
        ] {
            let d = tempfile::tempdir().unwrap();
            write(d.path(), "_ai_control/visibility.yaml", &text);
            write(d.path(), "characters/やな.md", MD);
            let err = load_work_dir(d.path()).unwrap_err().to_string();
            assert!(
                err.contains(&format!("visibility.yaml:{line}:")),
                "{name} {bad:?}: {err}"
            );
        }
    }
}

#[test]
fn rules_toml_with_bom_crlf_and_tabs_loads() {
    let text = "[scatter]\n\tretry_sentences = 5\n[lines]\nwarn = 7\n";
    for t in [
        format!("{BOM}{text}"),
        crlf(text),
        format!("{BOM}{}", crlf(text)),
    ] {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("rules.toml");
        std::fs::write(&p, &t).unwrap();
        let r = RuleSet::load(Some(&p)).unwrap_or_else(|e| panic!("{t:?}: {e}"));
        assert_eq!(r.data.scatter.retry_sentences, 5);
        assert_eq!(r.data.lines.warn, 7);
    }
    // A bad value after a BOM is still reported at its own line.
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("rules.toml");
    std::fs::write(&p, format!("{BOM}[lines]\r\nwarn = \"６\"\r\n")).unwrap();
    let err = RuleSet::load(Some(&p)).unwrap_err().to_string();
    assert!(err.contains("rules.toml:2:"), "{err}");
}

#[test]
fn keymap_toml_with_bom_and_crlf_loads() {
    use kakeai::tui::keymap::Keymap;
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("keymap.toml");
    std::fs::write(&p, format!("{BOM}[keys]\r\n\"x\" = \"quit\"\r\n")).unwrap();
    let text = kakeai::limits::read_text(&p, kakeai::limits::MAX_FILE_BYTES).unwrap();
    Keymap::from_text(Some((&p, &text))).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn check_reads_jsonl_with_a_bom_and_crlf() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("in.jsonl");
    std::fs::write(
        &p,
        format!(
            "{BOM}{{\"speaker\": \"ayu\", \"text\": \"灯台は古いです。\"}}\r\n{{\"speaker\": \"yana\", \"text\": \"わ！\"}}\r\n"
        ),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kakeai"))
        .args(["check", "--analyzer", "fallback", "--fail-on", "never"])
        .arg(&p)
        .env("KAKEAI_CONFIG_DIR", d.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.lines().count(), 2, "{stdout}");
}

#[test]
fn jsonl_lines_lose_a_bom() {
    let mut r = std::io::Cursor::new(format!("{BOM}{{\"a\":1}}\r\n{BOM}{{\"b\":2}}").into_bytes());
    let mut buf = Vec::new();
    for want in ["{\"a\":1}", "{\"b\":2}"] {
        assert_eq!(
            kakeai::limits::read_line(&mut r, &mut buf).unwrap(),
            Ok(true)
        );
        assert_eq!(String::from_utf8_lossy(&buf), want);
    }
}
