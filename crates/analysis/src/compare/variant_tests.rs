use super::*;

fn parse(text: &str) -> Result<Variant, String> {
    Variant::parse(Path::new("b.toml"), text).map_err(|e| e.to_string())
}

#[test]
fn a_persona_change_reaches_the_ruleset() {
    let v = parse(
        "name = \"terse\"\nmust_not_regress = [\"leak\", \"lines\"]\nsignificance = 0.01\n\
         [characters.yana]\nspeech_style = \"ぶっきらぼうに短く話す\"\n",
    )
    .unwrap();
    assert_eq!(v.name, "terse");
    assert_eq!(v.must_not_regress, vec![RuleId::Leak, RuleId::Lines]);
    assert!((v.significance - 0.01).abs() < 1e-12);
    let base = RuleSet::builtin().unwrap();
    let a = v
        .apply(&base, &DuoConfig::builtin().unwrap(), &LlmConfig::default())
        .unwrap();
    assert!(a.changes_rules);
    assert_eq!(
        a.rules.character("yana").unwrap().speech_style,
        "ぶっきらぼうに短く話す"
    );
    assert_ne!(a.rules.version, base.version);
    // Untouched parts stay the baseline's.
    assert_eq!(
        a.rules.character("ayu").unwrap().speech_style,
        base.character("ayu").unwrap().speech_style
    );
}

#[test]
fn duo_llm_and_rules_sections_merge() {
    let v = parse(
        "[duo]\nmax_attempts = 2\n[llm]\nmodel = \"tiny\"\ntemperature = 0.2\n[rules.lines]\nwarn = 9\n",
    )
    .unwrap();
    let a = v
        .apply(
            &RuleSet::builtin().unwrap(),
            &DuoConfig::builtin().unwrap(),
            &LlmConfig::default(),
        )
        .unwrap();
    assert_eq!(a.duo.max_attempts, 2);
    assert_eq!(a.llm.model, "tiny");
    assert!((a.llm.temperature - 0.2).abs() < 1e-6);
    assert!(a.changes_rules);
}

#[test]
fn unknown_keys_are_errors_with_line_and_col() {
    let cases = [
        ("name = \"x\"\ncolour = 1\n", "b.toml:2:1"),
        ("[duo]\nmax_atempts = 2\n", "b.toml:2:1"),
        ("[llm]\n\nmodle = \"x\"\n", "b.toml:3:1"),
        ("[characters.yana]\nspeach_style = \"x\"\n", "b.toml:2:1"),
        ("[vault]\nfolder = \"x\"\n", "b.toml:2:1"),
        ("must_not_regress = [\"nope\"]\n", "b.toml:1:1"),
        ("significance = 2.0\n", "b.toml:1:1"),
        ("name = \n", "b.toml:1:"),
    ];
    for (text, at) in cases {
        let e = parse(text).unwrap_err();
        assert!(e.starts_with(at), "{text:?} → {e}");
    }
}
