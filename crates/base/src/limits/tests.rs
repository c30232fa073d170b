use std::path::Path;

use super::*;

fn p() -> &'static Path {
    Path::new("visibility.yaml")
}

fn nested_block(levels: usize) -> String {
    (0..levels)
        .map(|i| format!("{}k{i}:\n", " ".repeat(i * 2)))
        .collect()
}

#[test]
fn yaml_nesting_is_refused_past_the_limit_and_accepted_up_to_it() {
    for levels in [1, 10, MAX_DEPTH - 1, MAX_DEPTH] {
        assert_eq!(
            yaml_check(p(), &nested_block(levels), false),
            Ok(()),
            "{levels}"
        );
    }
    for levels in [MAX_DEPTH + 1, 1000, 3000] {
        let e = yaml_check(p(), &nested_block(levels), false).unwrap_err();
        assert!(
            matches!(e, LimitError::TooDeep { line, .. } if line == MAX_DEPTH + 1),
            "{e}"
        );
        assert!(e.to_string().contains("visibility.yaml:65:"), "{e}");
        assert!(e.to_string().contains("64 levels"), "{e}");
    }
}

#[test]
fn flow_and_dash_nesting_count_too_but_quoted_brackets_do_not() {
    let deep_flow = format!(
        "a: {}1{}\n",
        "[".repeat(MAX_DEPTH + 5),
        "]".repeat(MAX_DEPTH + 5)
    );
    assert!(matches!(
        yaml_check(p(), &deep_flow, false),
        Err(LimitError::TooDeep { .. })
    ));
    let dashes = format!("{}x\n", "- ".repeat(MAX_DEPTH + 1));
    assert!(matches!(
        yaml_check(p(), &dashes, false),
        Err(LimitError::TooDeep { .. })
    ));
    let quoted = format!("a: \"{}\"\nb: '{}'\n", "[".repeat(500), "{".repeat(500));
    assert_eq!(yaml_check(p(), &quoted, false), Ok(()));
    let list = "hidden:\n  - 秘密の部屋\n  - name: 鍵\n    owner: やな\n";
    assert_eq!(yaml_check(p(), list, false), Ok(()));
}

#[test]
fn a_hundred_thousand_flow_levels_are_refused_at_the_first_line() {
    let text = format!("a: {}\n", "[".repeat(100_000));
    let e = yaml_check(p(), &text, false).unwrap_err();
    assert!(matches!(e, LimitError::TooDeep { line: 1, .. }), "{e}");
}

#[test]
fn a_second_document_is_refused_at_its_line() {
    let e = yaml_check(p(), "a: 1\n---\nb: 2\n", false).unwrap_err();
    assert_eq!(
        e.to_string(),
        "visibility.yaml:2:1: more than one YAML document (a second `---`); one document per file"
    );
    assert_eq!(yaml_check(p(), "---\na: 1\n", false), Ok(()));
    // Markdown: the front matter ends at its second `---`; the body is not YAML.
    let md = "---\ntitle: 港\n---\n本文\n---\n[[[[ 括弧\n";
    assert_eq!(yaml_check(Path::new("a.md"), md, true), Ok(()));
}

#[test]
fn toml_arrays_nested_too_deep_are_refused() {
    let ok = "[table]\nx = [[1, 2], [3]]\n[[arr]]\ny = { a = { b = 1 } }\n";
    assert_eq!(toml_depth(Path::new("rules.toml"), ok), Ok(()));
    let deep = format!(
        "x = {}{}\n",
        "[".repeat(MAX_DEPTH + 1),
        "]".repeat(MAX_DEPTH + 1)
    );
    let e = toml_depth(Path::new("rules.toml"), &deep).unwrap_err();
    assert!(
        e.to_string().starts_with("rules.toml:1:1: nested deeper"),
        "{e}"
    );
}

#[test]
fn invalid_utf8_is_reported_at_line_and_char_column() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("rules.toml");
    let mut bytes = "a = 1\nname = \"やな".as_bytes().to_vec();
    bytes.extend_from_slice(&[0xff, b'"', b'\n']);
    std::fs::write(&f, &bytes).unwrap();
    let e = read_text(&f, MAX_FILE_BYTES).unwrap_err();
    assert!(
        matches!(
            e,
            LimitError::NotUtf8 {
                line: 2,
                col: 11,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string().ends_with("rules.toml:2:11: not valid UTF-8"),
        "{e}"
    );
}

#[test]
fn files_over_the_size_limit_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("big.yaml");
    std::fs::write(&f, "a: 1\n".repeat(300)).unwrap();
    let e = read_text(&f, 1000).unwrap_err();
    assert!(
        e.to_string()
            .ends_with("big.yaml: the file is larger than the limit of 1000 bytes"),
        "{e}"
    );
    assert!(read_text(&f, 1500).is_ok());
}

#[test]
fn a_long_line_is_reported_once_past_the_limit_without_reading_the_rest() {
    let long = "x".repeat(MAX_LINE_BYTES + 10);
    let text = format!("{{\"a\":1}}\r\n{long}\nlast");
    let mut r = std::io::BufReader::with_capacity(4096, text.as_bytes());
    let mut buf = Vec::new();
    assert_eq!(read_line(&mut r, &mut buf).unwrap(), Ok(true));
    assert_eq!(buf, b"{\"a\":1}");
    assert_eq!(read_line(&mut r, &mut buf).unwrap(), Err(true));
    assert!(buf.capacity() <= 2 * MAX_LINE_BYTES + 8192);
    // An endless input (/dev/zero) ends the same way, at once.
    let mut zero = std::io::BufReader::new(std::io::repeat(0));
    assert_eq!(read_line(&mut zero, &mut buf).unwrap(), Err(true));
}

/// A Japanese file saved in another encoding says which, with the fix; bytes that are no known
/// encoding get no guess. Generated over texts and the encodings Japanese editors save in.
#[test]
fn a_file_in_another_japanese_encoding_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let texts = [
        "version: \"1.0\"\nentities:\n  characters:\n    やな:\n      sections:\n        隠し設定: 0\n",
        "## 隠し設定\n<!-- ai_visibility: 0 -->\nやなは春から工房で働く。\n",
        "name = \"あゆ\"\nrole = \"妹。丁寧に話す。\"\n",
    ];
    for (i, t) in texts.iter().enumerate() {
        for (enc, want) in [
            (encoding_rs::SHIFT_JIS, "Shift_JIS"),
            (encoding_rs::EUC_JP, "EUC-JP"),
            (encoding_rs::UTF_16LE, "UTF-16"),
        ] {
            let bytes: Vec<u8> = if enc == encoding_rs::UTF_16LE {
                let mut b = vec![0xFF, 0xFE];
                b.extend(t.encode_utf16().flat_map(|u| u.to_le_bytes()));
                b
            } else {
                enc.encode(t).0.into_owned()
            };
            let f = dir.path().join(format!("f{i}"));
            std::fs::write(&f, &bytes).unwrap();
            let e = read_text(&f, MAX_FILE_BYTES).unwrap_err().to_string();
            assert!(
                e.contains(want) && e.contains("save it as UTF-8"),
                "{want}: {e}"
            );
        }
    }
    let f = dir.path().join("noise");
    std::fs::write(&f, [b'a', 0xff, 0xfe, 0xfd, b'\n']).unwrap();
    let e = read_text(&f, MAX_FILE_BYTES).unwrap_err().to_string();
    assert!(e.ends_with("not valid UTF-8"), "{e}");
}
