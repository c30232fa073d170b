//! Issue 16 §2: a level-0 secret's or foreshadowing's id never surfaces in a stored finding,
//! its evidence or the serialized review (what run events and exports carry), over generated
//! vaults; it goes by a neutral ordinal instead.

use std::path::Path;

use super::load::from_files;
use super::review;

/// Seeded, enough to vary the vaults.
use crate::test_rng::Rng;

const WORDS: [&str; 10] = [
    "灯台守",
    "古時計",
    "裏庭の井戸",
    "青い切符",
    "秘密基地",
    "合鍵",
    "屋根裏部屋",
    "砂時計",
    "手紙の束",
    "白い傘",
];

#[test]
fn level_zero_ids_never_reach_findings_evidence_or_exports() {
    let mut rng = Rng::new(0x5eed_1234_abcd);
    for round in 0..25 {
        let mut vis = String::from(
            "version: \"1.0\"\ndefault_visibility: 3\nentities:\n  characters:\n    あゆ:\n      secrets:\n",
        );
        let mut files = Vec::new();
        let mut hidden_ids = Vec::new();
        let mut text = String::new();
        for k in 0..1 + rng.below(4) {
            let id = format!("SEC-Q{round}X{k}-{}", rng.word() % 9000 + 1000);
            let level = rng.below(3);
            let word = WORDS[rng.below(WORDS.len())];
            vis.push_str(&format!(
                "        - id: {id}\n          content: あゆは{word}のことを誰にも話していない\n          visibility: {level}\n          importance: critical\n          forbidden_keywords: [{word}]\n"
            ));
            if level == 0 {
                hidden_ids.push(id);
            }
            text.push_str(&format!("昨日、{word}の話を少しだけした。"));
        }
        let fs_id = format!("FS-Z{round}-{}", rng.word() % 9000 + 1000);
        let fs_word = WORDS[rng.below(WORDS.len())];
        vis.push_str(&format!(
            "  foreshadowing:\n    {fs_id}:\n      visibility: 0\n"
        ));
        files.push((
            format!("_foreshadowing/{fs_id}.md"),
            format!("---\ntype: foreshadowing\nname: 伏線\nforbidden_keywords: [{fs_word}]\n---\n## 内容\n{fs_word}はずっと同じ場所にある。\n"),
        ));
        hidden_ids.push(fs_id);
        text.push_str(&format!("{fs_word}を見た。"));
        files.push(("_ai_control/visibility.yaml".to_string(), vis));
        let work = from_files("w", Path::new("vault/w"), true, files).unwrap();
        for reader in [None, Some("ayu"), Some("yana")] {
            let r = work.reviewer(reader);
            let rev = r.review(&text);
            assert!(!rev.issues.is_empty(), "round {round}: {text}");
            let findings = review::findings(&rev, r.input(), r.config());
            let stored = format!(
                "{}{}",
                serde_json::to_string(&rev).unwrap(),
                serde_json::to_string(&findings).unwrap()
            );
            for id in &hidden_ids {
                assert!(
                    !stored.contains(id.as_str()),
                    "round {round}: {id} in {stored}"
                );
            }
            assert!(stored.contains("非公開の設定"), "round {round}: {stored}");
        }
    }
}
