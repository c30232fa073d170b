//! Marking a system message's vault parts by level: a message without a world section, text in
//! no known shape. (Real duo messages are marked in `duo::marks_tests`.)

use super::*;

#[test]
fn a_message_without_a_world_section_is_all_prompt_and_strange_text_is_unknown() {
    let templates = Templates::new(Vec::new()).unwrap();
    let plain = "あなたはやなです。";
    assert_eq!(
        mark_system(plain, &templates),
        vec![Part {
            source: Source::Prompt,
            text: plain.into()
        }]
    );
    let sys = "人物\n【世界設定】\n場面\n\n【設定資料】\n■ 町\n坂が多い。\n\n誰も知らない書式の段落。\n\n【話題】\nパン";
    let parts = mark_system(sys, &templates);
    let sources: Vec<Source> = parts.iter().map(|p| p.source).collect();
    assert_eq!(
        sources,
        [
            Source::Prompt,
            Source::Prompt,
            Source::Level(3),
            Source::Level(3),
            Source::Unknown,
            Source::Prompt
        ]
    );
    assert_eq!(Source::Level(2).marker().as_deref(), Some("[L2]"));
    assert_eq!(Source::Unknown.marker().as_deref(), Some("[L?]"));
}
