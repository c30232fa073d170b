//! The world text's rungs: what fitting a prompt may drop from the vault, never add.

/// The sample vault's rungs for each sister: each one shorter, made only of lines the fuller
/// one had (nothing added), the scene always kept.
#[test]
fn the_vault_rungs_only_ever_leave_things_out() {
    let work = crate::vault::load::sample();
    let scene = "港の見える坂道。";
    let full = crate::vault::shared::worlds(&work, scene, &["yana", "ayu"]);
    let ladders = crate::vault::shared::world_ladders(&work, scene, &["yana", "ayu"], &[3, 2, 1]);
    for who in ["yana", "ayu"] {
        let mut prev = full[who].clone();
        assert!(
            !ladders[who].is_empty(),
            "{who}: the sample has vault context to drop"
        );
        for rung in &ladders[who] {
            assert!(rung.starts_with(scene));
            assert!(rung.chars().count() < prev.chars().count(), "{who}: {rung}");
            for line in rung.lines().filter(|l| !l.trim().is_empty()) {
                assert!(prev.contains(line), "{who}: added {line:?}");
            }
            prev = rung.clone();
        }
        assert_eq!(
            ladders[who].last().unwrap().trim(),
            scene,
            "{who}: finally the scene alone"
        );
    }
}
