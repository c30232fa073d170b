//! The vault part of real duo system messages (the bundled sample, every reader, scenes of
//! several shapes) is found and marked by level (`vault::marks`), and nothing of the message
//! is lost. Here because it needs the duo prompt builder, a layer above the vault.

use super::config::DuoConfig;
use super::prompt::{PromptInput, build};
use crate::director::RuleSet;
use crate::vault::marks::{Source, mark_system};

/// Scenes written for this test; one has a line that looks like a settings item.
const SCENES: [&str; 3] = [
    "夕方の商店街。ｶﾞﾗｶﾞﾗの福引きの音がする。",
    "雨上がりの帰り道。\n\n■ 傘は一本だけ（場面の説明であって設定資料ではない）",
    "",
];

fn system(reader: &str, scene: &str) -> (String, crate::vault::context::FilteredContext) {
    let rules = RuleSet::builtin().unwrap();
    let cfg = DuoConfig::builtin().unwrap();
    let work = crate::vault::load::sample();
    let ctx = work.context(Some(reader));
    let world = if ctx.prompt.is_empty() {
        scene.to_string()
    } else {
        format!("{scene}\n\n{}", ctx.prompt)
    };
    let me = rules.character(reader).unwrap();
    let partner = rules.character(&me.partner).unwrap();
    let p = build(&PromptInput {
        speaker: me,
        partner,
        topic: "駅前の新しいパン屋",
        cfg: &cfg,
        world: &world,
        history: &[],
        guidance: &[],
        owner: None,
    });
    (p.messages[0].content.clone(), ctx)
}

#[test]
fn every_section_of_the_sample_is_marked_with_its_level_and_nothing_is_lost() {
    let templates = crate::vault::load::sample().templates;
    let mut levels_seen = std::collections::BTreeSet::new();
    for reader in ["yana", "ayu"] {
        for scene in SCENES {
            let (sys, ctx) = system(reader, scene);
            let parts = mark_system(&sys, &templates);
            let joined: String = parts.iter().map(|p| p.text.as_str()).collect();
            assert_eq!(joined, sys, "{reader}: lossless");
            // The scene and the topic stay prompt text.
            for p in parts.iter().filter(|p| p.source != Source::Prompt) {
                assert!(!p.text.contains("【話題】"), "{p:?}");
                for l in scene.lines().filter(|l| !l.is_empty()) {
                    assert!(!p.text.contains(l), "scene line {l} marked as vault: {p:?}");
                }
            }
            assert!(
                parts.iter().all(|p| p.source != Source::Unknown),
                "{parts:?}"
            );
            // Each hint lies in a part of its own level; each level-3 text in a [L3] part.
            for (h, l) in ctx.hints.iter().zip(&ctx.hint_levels) {
                let first = h.trim().lines().next().unwrap();
                let p = parts.iter().find(|p| p.text.contains(first)).unwrap();
                assert_eq!(p.source, Source::Level(*l), "{first}");
                levels_seen.insert(*l);
            }
            for c in &ctx.context {
                let first = c.text.trim().lines().next().unwrap_or_default();
                if first.is_empty() {
                    continue;
                }
                let p = parts.iter().find(|p| p.text.contains(first)).unwrap();
                assert_eq!(p.source, Source::Level(3), "{first}");
                levels_seen.insert(3);
            }
        }
    }
    // The sample gives each level somewhere (else this test would prove little).
    assert!(
        levels_seen.contains(&3) && levels_seen.len() >= 2,
        "{levels_seen:?}"
    );
}
