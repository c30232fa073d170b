//! Tests of the lindera/IPADIC analyzer (built from the MeCab sources on this machine).
use super::*;
use std::sync::OnceLock;

/// The sources, or `None` (with a note) when they are missing outside CI.
fn sources() -> Option<PathBuf> {
    let found = find_ipadic_sources();
    if found.is_none() {
        let searched = display_paths(&candidate_source_dirs());
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!(
                "MeCab IPADIC sources are required in CI (apt-get install mecab-ipadic); searched {searched}"
            );
        }
        eprintln!("note: skipping lindera test, no MeCab IPADIC sources in {searched}");
    }
    found
}

/// One dictionary per test binary: under $KAKEAI_DATA_DIR when set, else a shared
/// directory in the system temp dir that later runs reuse when it is still valid.
fn analyzer() -> Option<&'static LinderaAnalyzer> {
    static ANALYZER: OnceLock<Option<LinderaAnalyzer>> = OnceLock::new();
    ANALYZER
        .get_or_init(|| {
            let src = sources()?;
            let dir = match std::env::var_os("KAKEAI_DATA_DIR") {
                Some(_) => default_dict_dir()?,
                None => std::env::temp_dir().join("kakeai-test-ipadic"),
            };
            if !is_installed(&dir) {
                build_dictionary(&src, &dir).unwrap();
            }
            Some(LinderaAnalyzer::load(&dir).unwrap())
        })
        .as_ref()
}

/// Every morpheme's char offsets must select exactly its surface, in order.
fn assert_offsets(text: &str, morphemes: &[Morpheme]) {
    let chars: Vec<char> = text.chars().collect();
    let mut last_end = 0;
    for m in morphemes {
        assert!(m.start >= last_end && m.start < m.end, "{m:?} in {text:?}");
        let picked: String = chars[m.start..m.end].iter().collect();
        assert_eq!(picked, m.surface, "{m:?} in {text:?}");
        last_end = m.end;
    }
}

fn summary(ms: &[Morpheme]) -> Vec<(&str, usize, usize, Pos)> {
    ms.iter()
        .map(|m| (m.surface.as_str(), m.start, m.end, m.pos))
        .collect()
}

/// A first build makes the data dir (and its missing parents) private, 0700, as the store
/// and the key file do: the first-use build is often what creates the data dir.
#[test]
fn a_first_build_makes_a_private_data_dir_and_loads() {
    let Some(src) = sources() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("share").join("kakeai");
    let out = data.join("ipadic");

    let report = build_dictionary(&src, &out).unwrap();
    #[cfg(unix)]
    for dir in [&data, &tmp.path().join("share")] {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", dir.display());
    }
    assert_eq!(report.out_dir, out);
    assert_eq!(report.source_dir, src);
    assert!(
        report.bytes_on_disk > 10_000_000,
        "{}",
        report.bytes_on_disk
    );
    assert!(is_installed(&out));
    // Only the finished dictionary is left next to it: no staging or temp dirs.
    assert_eq!(fs::read_dir(out.parent().unwrap()).unwrap().count(), 1);

    let analyzer = LinderaAnalyzer::load(&out).unwrap();
    assert_eq!(analyzer.kind(), AnalyzerKind::LinderaIpadic);
    assert!(!analyzer.tokenize("京都").is_empty());
}

#[test]
fn a_new_build_replaces_the_old_dir_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, new, old) = (
        tmp.path().join("ipadic"),
        tmp.path().join(".building"),
        tmp.path().join(".old"),
    );
    fs::create_dir_all(&out).unwrap();
    fs::write(out.join("stale.txt"), "old build").unwrap();
    fs::create_dir_all(&new).unwrap();
    fs::write(new.join("fresh.txt"), "new build").unwrap();
    swap_into_place(&new, &out, &old).unwrap();
    assert!(!out.join("stale.txt").exists());
    assert_eq!(
        fs::read_to_string(out.join("fresh.txt")).unwrap(),
        "new build"
    );
    assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 1);
}

#[test]
fn kyoto_sentence() {
    let Some(a) = analyzer() else { return };
    let ms = a.tokenize("京都は広いですね");
    let got = summary(&ms);
    assert_eq!(got.len(), 5, "{got:?}");
    assert_eq!(got[0].0, "京都");
    assert!(matches!(
        got[0].3,
        Pos::Noun(NounKind::Proper | NounKind::General)
    ));
    assert_eq!(got[1], ("は", 2, 3, Pos::Particle));
    assert_eq!(got[2], ("広い", 3, 5, Pos::Adjective));
    assert_eq!(got[3], ("です", 5, 7, Pos::AuxVerb));
    assert_eq!(got[4], ("ね", 7, 8, Pos::Particle));
}

#[test]
fn whitespace_and_emoji_keep_char_offsets() {
    let Some(a) = analyzer() else { return };
    let text = " 今日は　いい天気 😀 ですね\t本当に!\r\n \u{a0}と\u{2028}";
    let ms = a.tokenize(text);
    assert_offsets(text, &ms);
    // Neither ASCII nor ideographic spaces come out as morphemes.
    assert!(ms.iter().all(|m| !m.surface.trim().is_empty()), "{ms:?}");
    let emoji = ms.iter().find(|m| m.surface == "😀").unwrap();
    assert_eq!((emoji.start, emoji.end, emoji.pos), (10, 11, Pos::Symbol));
    let bang = ms.iter().find(|m| m.surface == "!").unwrap();
    assert_eq!(bang.pos, Pos::Symbol);

    let ms = a.tokenize("　「こんにちは」");
    assert_offsets("　「こんにちは」", &ms);
    assert_eq!(ms[0].surface, "「");
}

#[test]
fn tricky_sentences_do_not_panic() {
    let Some(a) = analyzer() else { return };
    for text in [
        "まだ未成年じゃない",
        "",
        "ｗｗｗ〜〜〜!!!",
        "ＡＢＣ１２３ｱｲｳ",
        "\u{200b}\u{feff}e\u{301}",
    ] {
        assert_offsets(text, &a.tokenize(text));
    }
    assert!(a.tokenize("").is_empty());
    assert!(a.tokenize("まだ未成年じゃない").len() >= 3);
}

#[test]
fn shared_across_threads() {
    let Some(a) = analyzer() else { return };
    let expected = a.tokenize("昨日は友達と渋谷で映画を見ました");
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| assert_eq!(a.tokenize("昨日は友達と渋谷で映画を見ました"), expected));
        }
    });
}

#[test]
fn load_fails_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nope");
    assert!(matches!(
        LinderaAnalyzer::load(&missing),
        Err(DictError::NotInstalled(_))
    ));
    assert!(!is_installed(tmp.path()));
    assert!(LinderaAnalyzer::load(tmp.path()).is_err());

    // A marker over damaged files must give Err, not a panic.
    let marker = Marker {
        recipe: BUILD_RECIPE,
        format_version: ipadic_metadata("UTF-8").format_version,
        lindera_version: String::new(),
        source_dir: PathBuf::new(),
        encoding: "UTF-8".into(),
    };
    fs::write(
        tmp.path().join(MARKER_FILE),
        serde_json::to_vec(&marker).unwrap(),
    )
    .unwrap();
    fs::write(tmp.path().join("metadata.json"), "{ not json").unwrap();
    let err = LinderaAnalyzer::load(tmp.path()).err().unwrap();
    assert!(matches!(err, DictError::Load { .. }), "{err}");
}

#[test]
fn build_without_sources_fails() {
    let tmp = tempfile::tempdir().unwrap();
    assert!(!is_valid_source_dir(tmp.path()));
    let out = tmp.path().join("out");
    let err = build_dictionary(tmp.path(), &out).err().unwrap();
    assert!(matches!(err, DictError::SourcesNotFound { .. }));
    assert!(
        err.to_string().contains("apt-get install mecab-ipadic"),
        "{err}"
    );
    assert!(!out.exists());
}

#[test]
fn maps_ipadic_pos() {
    assert_eq!(map_pos("名詞", "固有名詞"), Pos::Noun(NounKind::Proper));
    assert_eq!(map_pos("名詞", "接尾"), Pos::Noun(NounKind::Dependent));
    assert_eq!(
        map_pos("名詞", "形容動詞語幹"),
        Pos::Noun(NounKind::AdjectivalStem)
    );
    assert_eq!(
        map_pos("名詞", "ナイ形容詞語幹"),
        Pos::Noun(NounKind::Other)
    );
    assert_eq!(map_pos("助動詞", "*"), Pos::AuxVerb);
    assert_eq!(map_pos("フィラー", "*"), Pos::Other);
}

#[test]
fn char_def_patch() {
    let def = b"0x3000..0x303F  SYMBOL\n0x00D0 SPACE\n";
    let patched = String::from_utf8(patch_char_def(def)).unwrap();
    assert_eq!(
        patched,
        "0x3001..0x303F  SYMBOL\n0x00A0 SPACE\n\n0x3000 SPACE\n"
    );
}

#[test]
fn readings_come_from_the_dictionary() {
    let Some(a) = analyzer() else { return };
    assert_eq!(a.reading("殺す").as_deref(), Some("コロス"));
    assert_eq!(a.reading("工房").as_deref(), Some("コウボウ"));
    for w in ["引っ越し", "引越し", "引越"] {
        assert_eq!(a.reading(w).as_deref(), Some("ヒッコシ"), "{w}");
    }
    assert_eq!(a.reading("こうぼう").as_deref(), Some("コウボウ"));
    assert_eq!(
        crate::text::analyzer::fallback::FallbackAnalyzer.reading("工房"),
        None
    );
}

/// Every kind survives the one-byte cache, and 0 (not yet read) is no kind.
#[test]
fn proper_kinds_round_trip_through_their_cache_codes() {
    use crate::text::analyzer::ProperKind::*;
    let all = [
        Surname,
        GivenName,
        Person,
        Organization,
        Place,
        Other,
        Unknown,
        Common,
        NotNoun,
    ];
    let mut codes: Vec<u8> = all.iter().map(|&k| kind_code(k)).collect();
    for (&k, &c) in all.iter().zip(&codes) {
        assert_eq!(kind_of_code(c), Some(k));
    }
    codes.sort_unstable();
    codes.dedup();
    assert_eq!(codes.len(), all.len());
    assert!(!codes.contains(&0));
    assert_eq!(kind_of_code(0), None);
}
