//! End-to-end tests of the `kakeai check` contract through the real binary.

use std::process::Output;

mod cli_env;
use cli_env::Env;

fn json_lines(o: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("stdout line is JSON"))
        .collect()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn jsonl_output_has_the_contract_fields() {
    let env = Env::new();
    let input = r#"{"id": "t1", "speaker": "やな", "text": "ほんと？雨が降るかな？"}
{"speaker": "ayu", "text": "あなたの意見は完璧です。", "context": [{"speaker": "yana", "text": "どう思う？"}]}
"#;
    let o = env.run_in(&["check"], input);
    assert_eq!(
        o.status.code(),
        Some(1),
        "a RETRY fails by default; stderr: {}",
        stderr(&o)
    );
    let v = json_lines(&o);
    assert_eq!(v.len(), 2);
    assert_eq!(v[0]["id"], "t1");
    assert_eq!(v[0]["speaker"], "yana");
    assert_eq!(v[0]["verdict"], "PASS");
    assert_eq!(v[0]["sentences"], 2);
    assert_eq!(v[0]["lines"], 1);
    assert_eq!(v[0]["topics"], 0);
    assert_eq!(
        v[0]["tone"],
        serde_json::json!({"marker": 1, "vocab": 1, "style": 1, "score": 3})
    );
    assert_eq!(v[0]["findings"], serde_json::json!([]));
    assert_eq!(v[0]["analyzer"], "fallback");
    assert_eq!(v[0]["ruleset"].as_str().map(str::len), Some(12));
    assert_eq!(v[1]["id"], "2", "records without id get their line number");
    assert_eq!(v[1]["verdict"], "RETRY");
    let f = &v[1]["findings"][0];
    assert_eq!(f["rule"], "praise");
    assert_eq!(f["status"], "RETRY");
    assert!(f["message"].as_str().is_some_and(|m| m.contains("完璧")));
    assert!(f["suggestion"].as_str().is_some_and(|s| !s.is_empty()));
    assert_eq!(f["span"], serde_json::json!([0, 9]));
}

#[test]
fn exit_codes_follow_fail_on() {
    let env = Env::new();
    let warn_only = "うーん\n";
    assert_eq!(
        env.run_in(&["check", "--speaker", "yana"], warn_only)
            .status
            .code(),
        Some(0)
    );
    assert_eq!(
        env.run_in(
            &["check", "--speaker", "yana", "--fail-on", "warn"],
            warn_only
        )
        .status
        .code(),
        Some(1)
    );
    let retry = "この建物は古いと思います。\n";
    assert_eq!(
        env.run_in(&["check", "--speaker", "yana", "--fail-on", "never"], retry)
            .status
            .code(),
        Some(0)
    );
    assert_eq!(
        env.run_in(&["check", "--speaker", "yana"], retry)
            .status
            .code(),
        Some(1)
    );
}

#[test]
fn malformed_lines_are_reported_and_the_rest_judged() {
    let env = Env::new();
    let path = env.file(
        "in.jsonl",
        "{\"speaker\": \"yana\", \"text\": \"そっか！\"}\n{\"speaker\": \"yana\", \"text\": }\n{\"speaker\": \"ayu\"}\n{\"speaker\": \"ayu\", \"text\": \"目安です。推奨です。\"}\n",
    );
    let o = env.run_in(&["check", &path], "");
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains(&format!("{path}:2:")), "{err}");
    assert!(
        err.contains(&format!("{path}:3:")) && err.contains("text"),
        "{err}"
    );
    let v = json_lines(&o);
    assert_eq!(v.len(), 2, "the good lines are still judged");
    assert_eq!(v[1]["id"], "4");
}

#[test]
fn unknown_speaker_lists_the_characters() {
    let env = Env::new();
    let o = env.run_in(&["check"], "{\"speaker\": \"ミカ\", \"text\": \"やあ\"}\n");
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("ミカ") && err.contains("yana") && err.contains("ayu"),
        "{err}"
    );
    let o = env.run_in(&["check", "--speaker", "mika"], "やあ\n");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("known characters"));
}

#[test]
fn plain_text_needs_a_speaker() {
    let env = Env::new();
    let o = env.run_in(&["check"], "こんにちは\n");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("<stdin>:1:"), "{}", stderr(&o));
    let o = env.run_in(
        &["check", "-", "--speaker", "ayu"],
        "つまり、灯台です。夜に光ります。\n\n目安。\n",
    );
    let v = json_lines(&o);
    assert_eq!(v.len(), 2, "blank lines are skipped");
    assert_eq!(v[0]["verdict"], "PASS");
    assert_eq!(v[1]["verdict"], "WARN");
}

#[test]
fn empty_text_is_a_retry() {
    let env = Env::new();
    let o = env.run_in(&["check"], "{\"speaker\": \"ayu\", \"text\": \"\"}\n");
    let v = json_lines(&o);
    assert_eq!(v[0]["verdict"], "RETRY");
    assert_eq!(v[0]["findings"][0]["rule"], "empty");
}

#[test]
fn table_format_counts_verdicts() {
    let env = Env::new();
    let o = env.run_in(
        &["check", "--speaker", "yana", "--format", "table"],
        "ほんと？雨が降るかな？\nうーん\nこの建物は古いと思います。\n",
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("3 lines: PASS 1 · WARN 1 · RETRY 1"), "{out}");
    assert!(out.contains("analyzer fallback"), "{out}");
}

#[test]
fn tone_mode_flag_switches_scoring() {
    let env = Env::new();
    let line = "こんにちは、あゆ！ねえねえ、今日の雲、なんか低くない？山も近く見える。\n";
    let markers = json_lines(&env.run_in(&["check", "--speaker", "yana"], line));
    let violations = json_lines(&env.run_in(
        &["check", "--speaker", "yana", "--tone-mode", "violations"],
        line,
    ));
    assert_eq!(markers[0]["verdict"], "RETRY");
    assert_ne!(violations[0]["verdict"], "RETRY");
    assert_ne!(markers[0]["ruleset"], violations[0]["ruleset"]);
}

#[test]
fn rules_file_overrides_and_bad_toml_is_located() {
    let env = Env::new();
    let good = env.file("rules.toml", "[lines]\nwarn = 2\nretry = 3\n");
    let o = env.run_in(
        &["check", "--speaker", "yana", "--rules", &good],
        "{\"text\": \"一行目かな？\\n二行目だね\"}\n",
    );
    let v = json_lines(&o);
    assert_eq!(v[0]["findings"][0]["rule"], "lines", "{v:?}");
    assert_eq!(v[0]["findings"][0]["status"], "WARN");
    let bad = env.file("bad.toml", "[lines]\nwarn = 2\nretry = \n");
    let o = env.run_in(&["check", "--speaker", "yana", "--rules", &bad], "うん\n");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains(&format!("{bad}:3:")), "{}", stderr(&o));
    let typed = env.file("typed.toml", "[lines]\nwarn = \"six\"\n");
    let o = env.run_in(&["check", "--speaker", "yana", "--rules", &typed], "うん\n");
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("{typed}:2:")) && err.contains("lines.warn"),
        "{err}"
    );
}

#[test]
fn user_config_rules_file_is_merged() {
    let env = Env::new();
    let cfg = env.dir.path().join("config");
    std::fs::create_dir_all(&cfg).expect("mkdir");
    std::fs::write(cfg.join("rules.toml"), "tone_mode = \"violations\"\n").expect("write");
    let o = env.run_in(&["rules"], "");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("tone_mode = \"violations\""), "{out}");
    assert!(out.contains("(merged)"), "{out}");
}

#[test]
fn no_arguments_prints_help_naming_check() {
    let env = Env::new();
    let o = env.run_in(&[], "");
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("kakeai check"));
}

#[test]
fn bench_runs_on_the_bundled_sample() {
    let env = Env::new();
    let o = env.run_in(&["bench", "--seconds", "0.05"], "");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("cold") && out.contains("warm") && out.contains("30 lines"),
        "{out}"
    );
}

#[test]
fn user_character_file_overrides_markers() {
    let env = Env::new();
    let chars = env.dir.path().join("config").join("characters");
    std::fs::create_dir_all(&chars).expect("mkdir");
    // Teach やな a new vocabulary marker: the same line gains a point.
    std::fs::write(chars.join("yana.toml"), "[tone]\nvocab = [\"やっほー\"]\n").expect("write");
    let v = json_lines(&env.run_in(&["check", "--speaker", "yana"], "やっほー\n"));
    assert_eq!(v[0]["tone"]["vocab"], 1, "{v:?}");
    std::fs::write(chars.join("yana.toml"), "[tone]\nvocab = [\n").expect("write");
    let o = env.run_in(&["check", "--speaker", "yana"], "やっほー\n");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("yana.toml:2:"), "{}", stderr(&o));
}

#[test]
fn a_line_that_is_not_utf8_is_located_and_every_other_line_judged() {
    let env = Env::new();
    let path = env.file("in.jsonl", "");
    let mut bytes = Vec::new();
    bytes.extend_from_slice("{\"speaker\": \"yana\", \"text\": \"そっか！\"}\n".as_bytes());
    // Shift_JIS bytes in the middle of a line.
    bytes.extend_from_slice(b"{\"speaker\": \"ayu\", \"text\": \"\x82\xa0\x82\xa2\"}\r\n");
    bytes.extend_from_slice(
        "{\"speaker\": \"ayu\", \"text\": \"目安です。推奨です。\"}\r\n".as_bytes(),
    );
    bytes.extend_from_slice(b"\xff\n");
    bytes.extend_from_slice("{\"speaker\": \"yana\", \"text\": \"かもね！\"}".as_bytes());
    std::fs::write(&path, bytes).unwrap();
    let o = env.run_in(&["check", &path], "");
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains(&format!("{path}:2:")), "{err}");
    assert!(err.contains(&format!("{path}:4:")), "{err}");
    assert!(err.contains("UTF-8"), "{err}");
    let v = json_lines(&o);
    let ids: Vec<&str> = v.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["1", "3", "5"], "every other line is judged");
}
