//! Marker spellings, comments, headings and nesting in entity bodies.

use super::*;

fn levels(body: &str) -> Vec<(String, Option<u8>, Option<usize>)> {
    parse_body(body, 1)
        .unwrap()
        .blocks
        .into_iter()
        .map(|b| (b.name, b.marker.map(Level::get), b.parent))
        .collect()
}

#[test]
fn every_reasonable_spelling_of_a_marker_is_read() {
    for m in [
        "<!-- ai_visibility: 0 -->",
        "<!-- ai_visibility：0 -->",
        "<!-- AI_VISIBILITY: 0 -->",
        "<!--   ai_visibility   :   0   -->",
        "<!--ai_visibility:0-->",
        "<!-- ai_visibility: ０ -->",
        "<!-- ａｉ＿ｖｉｓｉｂｉｌｉｔｙ：０ -->",
        "<!-- ai-visibility = 0 -->",
        "<!-- ai visibility: \"0\" -->",
        "<!-- visibility: 0 -->",
        "<!--\nai_visibility: 0\n-->",
    ] {
        let body = format!("## 隠し設定\n{m}\n本当は王族。\n");
        let b = parse_body(&body, 1).unwrap_or_else(|e| panic!("{m}: {e:?}"));
        assert_eq!(b.blocks.len(), 1, "{m}");
        assert_eq!(b.blocks[0].marker, Some(Level::HIDDEN), "{m}");
        assert_eq!(b.blocks[0].text, "本当は王族。", "{m}");
        // On the heading line itself: the marker counts and is not part of the name.
        let body = format!("## 隠し設定 {m}\n本当は王族。\n");
        if !m.contains('\n') {
            let b = parse_body(&body, 1).unwrap();
            assert_eq!(b.blocks[0].name, "隠し設定", "{m}");
            assert_eq!(b.blocks[0].marker, Some(Level::HIDDEN), "{m}");
        }
    }
}

#[test]
fn an_unreadable_marker_is_an_error_with_line_and_column() {
    for (m, col) in [
        ("<!-- ai_visibility: 4 -->", 1),
        ("<!-- ai_visibility: hidden -->", 1),
        ("<!-- ai_visibility 0 -->", 1),
        ("<!-- ai_visiblity: 0 -->", 1),
        ("<!-- ai_visibility: 0 ネタバレ -->", 1),
        ("前置き <!-- AI_VISIBILITY: -1 -->", 5),
        ("ai_visibility: 0", 4),
        ("<!- ai_visibility: 0 -->", 8),
    ] {
        let body = format!("## 基本\n姉。\n{m}\n");
        let e = parse_body(&body, 10).unwrap_err();
        assert_eq!((e.line, e.col), (12, col), "{m}: {e:?}");
    }
    let e = parse_body("## 基本\n姉。<!-- メモ\n続き\n", 3).unwrap_err();
    assert_eq!((e.line, e.col), (4, 3), "{e:?}");
    assert!(e.message.contains("never closed"));
}

#[test]
fn comments_never_stay_in_text_or_names() {
    let b = parse_body(
        "前文<!-- 作者メモ -->です。\n## 基本 <!-- 仮 -->\n姉。<!-- 隠し\n複数行 -->見える。\n",
        1,
    )
    .unwrap();
    assert_eq!(b.blocks[0].text, "前文です。");
    assert_eq!(b.blocks[1].name, "基本");
    assert_eq!(b.blocks[1].text, "姉。\n見える。");
    assert_eq!(b.blocks[1].marker, None);
}

#[test]
fn subsections_nest_and_every_marker_of_a_section_counts() {
    let body = "# 題\n## 上 <!-- ai_visibility: 3 -->\na\n### 中\n<!-- ai_visibility: 2 -->\nb\n<!-- ai_visibility: 0 -->\nb2\n#### 下\nc\n## 隣\nd\n";
    assert_eq!(
        levels(body),
        [
            ("上".into(), Some(3), None),
            ("中".into(), Some(0), Some(0)),
            ("下".into(), None, Some(1)),
            ("隣".into(), None, None),
        ]
    );
    let b = parse_body("# 題 <!-- ai_visibility: 1 -->\n## 上\na\n", 1).unwrap();
    assert_eq!(b.title_marker, Some(Level::AWARE));
    // A `#` line after content is body text, not a title.
    let b = parse_body("## 上\n# 見出しではない\n", 1).unwrap();
    assert!(b.blocks[0].text.contains("見出しではない"));
}

#[test]
fn heading_spellings_and_name_normalisation() {
    let names: Vec<String> = parse_body("＃＃ 全角\na\n##詰め\nb\n### 閉じ ###\nc\n", 1)
        .unwrap()
        .blocks
        .into_iter()
        .map(|b| b.name)
        .collect();
    assert_eq!(names, ["全角", "詰め", "閉じ"]);
    assert_eq!(
        norm_name("隠し設定(ネタバレ)"),
        norm_name("隠し設定（ネタバレ）")
    );
    assert_eq!(norm_name(" 禁忌の　魔法 "), "禁忌の 魔法");
    assert_ne!(norm_name("隠し設定"), norm_name("隠し設定2"));
}

/// A marker after a section's text with nothing after it was meant for the heading below it:
/// refused at its line, naming both sections — whatever the depths, spellings and blank lines.
#[test]
fn a_marker_just_above_a_heading_is_refused_naming_both_sections() {
    for (first, next) in [("##", "##"), ("###", "##"), ("##", "###"), ("####", "####")] {
        for m in ["<!-- ai_visibility: 0 -->", "<!-- AI_VISIBILITY：０ -->"] {
            for gap in ["", "\n", "\n\n"] {
                let body = format!(
                    "{first} 町の話\n商店街がある。\n{gap}{m}\n{gap}{next} 隠し設定\n本当は王族。\n"
                );
                let e = parse_body(&body, 10).expect_err(&body);
                let marker_line = 10 + 2 + gap.matches('\n').count();
                assert_eq!((e.line, e.col), (marker_line, 1), "{body}");
                assert!(
                    e.message.contains("町の話") && e.message.contains("隠し設定"),
                    "{}",
                    e.message
                );
            }
        }
    }
    // At the end of the body too.
    let e = parse_body("## 町の話\n商店街。\n<!-- ai_visibility: 0 -->\n", 1).unwrap_err();
    assert_eq!(e.line, 3);
    // Markers before or beside the text, or under their own heading, stay fine.
    for ok in [
        "## 隠し設定\n<!-- ai_visibility: 0 -->\n本当は王族。\n## 次\nx\n",
        "## 隠し設定\n本当は王族。 <!-- ai_visibility: 0 -->\n## 次\nx\n",
        "## 隠し設定 <!-- ai_visibility: 0 -->\n本当は王族。\n",
        "## 親\n<!-- ai_visibility: 0 -->\n### 子\nx\n",
    ] {
        assert!(parse_body(ok, 1).is_ok(), "{ok}");
    }
}
