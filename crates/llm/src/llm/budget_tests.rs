//! The priority order of `budget::fit_prioritised` (assets/llm/budget.toml), property-style,
//! and the vault's lighter world rungs built from the bundled sample.

use super::*;
use crate::llm::types::{Message, Role};

fn rng(seed: u64) -> impl FnMut(usize) -> usize {
    crate::test_rng::below(seed)
}

#[test]
fn the_embedded_priorities_parse_and_drop_level_3_before_level_2() {
    let p = Priorities::builtin();
    assert_eq!(p.vault_drop_levels, vec![3, 2]);
    assert!(
        !p.vault_drop_levels.contains(&0),
        "level 0 is never in a prompt to drop"
    );
}

/// Older history goes first (down to `keep`), then the lighter systems one rung at a time,
/// then the rest of the history; nothing is added, the newest history survives longest.
#[test]
fn fitting_gives_up_history_then_vault_levels_then_the_rest_in_that_order() {
    for seed in 0..2000u64 {
        let mut pick = rng(seed);
        let keep = pick(4);
        let sys_len = 20 + pick(80);
        let mut m = vec![Message::system("設".repeat(sys_len))];
        let n = pick(10);
        for i in 0..n {
            let t = format!("{i}{}", "話".repeat(1 + pick(20)));
            m.push(if i % 2 == 0 {
                Message::user(t)
            } else {
                Message::assistant(t)
            });
        }
        m.push(Message::user("次の発言"));
        // Lighter rungs: ever shorter systems.
        let mut lighter = Vec::new();
        let mut len = sys_len;
        for _ in 0..pick(3) {
            len = len.saturating_sub(1 + pick(len.max(1)));
            lighter.push("軽".repeat(len));
        }
        let budget = pick(250);
        let before = m.clone();
        let history_before = before.len() - 2;
        match fit_prioritised(&mut m, budget, &lighter, keep) {
            Ok(f) => {
                assert!(chars_of(&m) <= budget, "seed {seed}");
                let history_after = m.len() - 2;
                assert_eq!(history_before - history_after, f.dropped, "seed {seed}");
                // The system is the rung taken, and a rung is taken only when needed.
                let expect = if f.rung == 0 {
                    &before[0].content
                } else {
                    &lighter[f.rung - 1]
                };
                assert_eq!(&m[0].content, expect, "seed {seed}");
                if f.rung > 0 {
                    assert!(
                        history_after <= keep,
                        "seed {seed}: a rung before the old history went"
                    );
                    // Without the last rung taken it did not fit (with the history kept then).
                    let prev = if f.rung == 1 {
                        &before[0].content
                    } else {
                        &lighter[f.rung - 2]
                    };
                    let kept_then = history_before.min(keep.max(history_after));
                    let tail: usize = before[before.len() - 1 - kept_then..]
                        .iter()
                        .map(|x| x.content.chars().count())
                        .sum();
                    assert!(
                        prev.chars().count() + tail > budget,
                        "seed {seed}: rung not needed"
                    );
                }
                // (One below `keep` is the alternation rule: a kept tail may not open with an
                // assistant turn.)
                if history_after + 1 < keep.min(history_before) {
                    assert_eq!(
                        f.rung,
                        lighter.len(),
                        "seed {seed}: kept history went before a rung"
                    );
                }
                // What is left is the newest tail, unchanged.
                assert_eq!(
                    m[1..],
                    before[before.len() - (m.len() - 1)..],
                    "seed {seed}"
                );
                assert_ne!(
                    m.get(1).map(|x| x.role),
                    Some(Role::Assistant).filter(|_| m.len() > 2)
                );
            }
            Err(o) => {
                assert_eq!(m.len(), 2, "seed {seed}");
                assert_eq!(
                    m[0].content,
                    lighter.last().unwrap_or(&before[0].content).clone()
                );
                assert!(o.needed_chars > budget);
            }
        }
    }
}
