//! duo-talk import through the library: counts, mapping, attempts and guidance, feedback,
//! skipped lines, legacy events, idempotency; and export of the imported run.

use std::path::{Path, PathBuf};

use kakeai::director::Status;
use kakeai::store::duotalk::{self, ImportCounts};
use kakeai::store::{ActionKind, AttemptState, RunRecord, RunStatus, Store, export};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/duotalk")
        .join(name)
}

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(&dir.path().join("kakeai.db")).unwrap();
    (dir, s)
}

fn run_by_source(s: &Store, source: &str) -> RunRecord {
    let id = s
        .runs(100)
        .unwrap()
        .into_iter()
        .find(|r| r.source.as_deref() == Some(source))
        .unwrap_or_else(|| panic!("no run {source}"))
        .id;
    s.load_run(id).unwrap()
}

fn counts(
    runs: usize,
    turns: usize,
    attempts: usize,
    feedback: usize,
    skipped: usize,
) -> ImportCounts {
    ImportCounts {
        runs,
        turns,
        attempts,
        feedback,
        skipped_lines: skipped,
    }
}

#[test]
fn the_fixture_imports_with_the_expected_counts() {
    let (_d, mut s) = store();
    let r = duotalk::import_file(&mut s, &fixture("commentary_small.jsonl")).unwrap();
    // 2 runs; turns 3 + 2; attempts 2 + 1 (no thoughts) + 3, and 2 without thoughts.
    assert_eq!(r.new, counts(2, 5, 8, 1, 5));
    assert_eq!(r.runs_seen, 2);
    assert_eq!(r.lines, 43);
    assert_eq!(r.duplicates, 1, "the repeated speak line");
    let ignored: Vec<(&str, usize)> = r.ignored.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(
        ignored,
        [
            ("director_check", 1),
            ("narration", 1),
            ("prompt_update", 1),
            ("rag_select", 1),
            ("run_end", 1),
            ("run_start", 1),
            ("turn", 1),
            ("validation", 1)
        ]
    );
    assert_eq!(r.unknown.get("sparkle"), Some(&1));
}

#[test]
fn malformed_lines_are_reported_with_line_col_and_what_was_expected() {
    let (_d, mut s) = store();
    let path = fixture("commentary_small.jsonl");
    let r = duotalk::import_file(&mut s, &path).unwrap();
    let lines: Vec<usize> = r.problems.iter().map(|p| p.line).collect();
    assert_eq!(lines, [27, 28, 29, 34, 35]);
    assert!(
        r.problems.iter().all(|p| p.message.starts_with("expected")),
        "{:?}",
        r.problems
    );
    assert!(
        r.problems[0].message.contains("JSON"),
        "{:?}",
        r.problems[0]
    );
    assert!(r.problems[0].col > 1, "points into the broken line");
    assert!(r.problems[1].message.contains("an array"));
    assert!(r.problems[2].message.contains("\"event\""));
    assert!(r.problems[3].message.contains("\"text\""));
    // The column is the char column of the offending key on that line.
    let text = std::fs::read_to_string(&path).unwrap();
    let line35 = text.lines().nth(34).unwrap();
    let byte = line35.find("\"turn\"").unwrap();
    assert_eq!(r.problems[4].col, line35[..byte].chars().count() + 1);
    assert!(r.problems[4].message.contains("non-negative integer"));
}

#[test]
fn speakers_turns_and_run_fields_are_mapped() {
    let (_d, mut s) = store();
    duotalk::import_file(&mut s, &fixture("commentary_small.jsonl")).unwrap();
    let rec = run_by_source(&s, "duo-talk:run_fx_001");
    assert_eq!(rec.run.status, RunStatus::Imported);
    assert_eq!(rec.run.topic, "雨上がりの商店街を歩く");
    assert_eq!(rec.run.model.as_deref(), Some("gemma2:27b"));
    assert_eq!(rec.run.options["max_turns"], 4);
    assert_eq!(rec.run.options["max_attempts"], 3);
    assert_eq!(rec.run.started_at, "2026-02-01T10:00:00.000000");
    assert_eq!(
        rec.run.ended_at.as_deref(),
        Some("2026-02-01T10:00:20.000000")
    );
    let turns: Vec<(u32, &str)> = rec
        .turns
        .iter()
        .map(|t| (t.turn, t.speaker.as_str()))
        .collect();
    assert_eq!(turns, [(1, "yana"), (2, "ayu"), (3, "yana")]);
    assert_eq!(
        rec.turns[0].text,
        "見て、水たまりに空が映ってるじゃん！\nあゆ、ちょっと覗いてみなよ。"
    );
    assert_eq!(rec.turns[0].committed_at, "2026-02-01T10:00:04.600000");

    // No narration_start: the run still exists, speakers come from speaker_name.
    let other = run_by_source(&s, "duo-talk:run_fx_002");
    assert_eq!(other.run.topic, "");
    let turns: Vec<(u32, &str)> = other
        .turns
        .iter()
        .map(|t| (t.turn, t.speaker.as_str()))
        .collect();
    assert_eq!(turns, [(1, "yana"), (2, "ayu")]);
    // The first of two identical speak lines is kept, once.
    assert_eq!(other.turns[0].text, "ねえ、パン屋さんの匂いしない？");
    // A director event without a status leaves the line unscored, never a pass.
    assert_eq!(other.turns[0].status, Status::Unscored);
}

#[test]
fn thoughts_become_attempts_and_a_retry_suggestion_guides_the_next_attempt() {
    let (_d, mut s) = store();
    duotalk::import_file(&mut s, &fixture("commentary_small.jsonl")).unwrap();
    let rec = run_by_source(&s, "duo-talk:run_fx_001");
    let t1: Vec<_> = rec.attempts_of(1).collect();
    assert_eq!(t1.len(), 2);
    assert_eq!(
        (t1[0].status, t1[0].guidance.as_deref()),
        (Some(Status::Retry), None)
    );
    assert_eq!(
        t1[0].text.as_deref(),
        Some("見て見て！水たまりに空が映ってる。きれい。写真撮ろう。あゆも来て。")
    );
    assert_eq!(t1[0].latency_ms, Some(2500), "generating → reviewing");
    assert_eq!(
        t1[0].origin.as_ref().unwrap()["reason"],
        "文が多すぎる(4文)"
    );
    assert_eq!(
        t1[0].origin.as_ref().unwrap()["suggestion"],
        "2文以内で話してください。"
    );
    assert_eq!(t1[1].guidance.as_deref(), Some("2文以内で話してください。"));
    assert_eq!(t1[1].status, Some(Status::Pass));
    assert_eq!(
        rec.turns[0].attempt_id,
        Some(t1[1].id),
        "the last attempt is committed"
    );
    assert!(
        t1.iter()
            .all(|a| a.state == AttemptState::Done && a.speaker == "yana")
    );
    // The committed attempt text comes from speak when the thoughts did not log it.
    assert_eq!(t1[1].text.as_deref(), Some(rec.turns[0].text.as_str()));

    // The director's verdict of the committed line: status, hook/depth on the turn, the rest
    // kept as origin.
    assert_eq!(rec.turns[0].status, Status::Pass);
    assert_eq!(rec.turns[0].hook.as_deref(), Some("水たまり"));
    assert_eq!(rec.turns[0].hook_depth, Some(1));
    let director = &t1[1].origin.as_ref().unwrap()["director"];
    assert_eq!(
        director["forbidden_topics"],
        serde_json::json!(["天気予報"])
    );
    assert_eq!(director["depth_step"], "DEEPEN");

    // Turn 2 had no thoughts: one attempt stands for the spoken line, judged by the director.
    let t2: Vec<_> = rec.attempts_of(2).collect();
    assert_eq!(t2.len(), 1);
    assert_eq!((t2[0].attempt, t2[0].status), (1, Some(Status::Warn)));
    assert_eq!(t2[0].origin.as_ref().unwrap()["synthesized"], true);
    assert_eq!(rec.turns[1].status, Status::Warn);

    // Turn 3: every attempt asked for a retry; the last was committed anyway.
    let t3: Vec<_> = rec.attempts_of(3).collect();
    let guidance: Vec<Option<&str>> = t3.iter().map(|a| a.guidance.as_deref()).collect();
    assert_eq!(
        guidance,
        [
            None,
            Some("別の店に目を向けてください（案1）。"),
            Some("別の店に目を向けてください（案2）。")
        ]
    );
    assert!(t3.iter().all(|a| a.status == Some(Status::Retry)));
    assert!(rec.turns[2].flags.exhausted);
    assert!(!rec.turns[0].flags.exhausted);
    assert_eq!(rec.turns[2].status, Status::Retry);
}

#[test]
fn feedback_becomes_actions_and_is_not_duplicated_across_files() {
    let (_d, mut s) = store();
    duotalk::import_file(&mut s, &fixture("commentary_small.jsonl")).unwrap();
    let r = duotalk::import_file(&mut s, &fixture("feedback_small.jsonl")).unwrap();
    // One event repeats the commentary file's; the other names a run seen nowhere else.
    assert_eq!(r.new, counts(1, 0, 0, 1, 0));
    let rec = run_by_source(&s, "duo-talk:run_fx_001");
    assert_eq!(rec.actions.len(), 1);
    let a = &rec.actions[0];
    assert_eq!((a.kind, a.turn), (ActionKind::Feedback, Some(2)));
    assert_eq!(a.payload["issue_type"], "tone_drift");
    assert_eq!(a.payload["description"], "あゆの反応が少し淡白だった");
    assert_eq!(a.payload["suggested_fix"], "驚きを一言添える");
    assert_eq!(a.payload["speaker"], "ayu");
    assert_eq!(a.created_at, "2026-02-01T10:05:00.000000");
    let lone = run_by_source(&s, "duo-talk:run_fx_003");
    assert!(lone.turns.is_empty());
    assert_eq!(
        lone.actions[0].payload["suggested_fix"],
        serde_json::Value::Null
    );
    assert_eq!(lone.actions[0].payload["issue_type"], "character_break");
}

#[test]
fn a_second_import_stores_nothing_new() {
    let (_d, mut s) = store();
    let path = fixture("commentary_small.jsonl");
    duotalk::import_file(&mut s, &path).unwrap();
    let before = s.load_run(s.runs(1).unwrap()[0].id).unwrap();
    let again = duotalk::import_file(&mut s, &path).unwrap();
    assert_eq!(again.new, counts(0, 0, 0, 0, 5));
    assert!(again.new.is_empty());
    assert_eq!(again.runs_seen, 2);
    assert_eq!(s.runs(100).unwrap().len(), 2);
    assert_eq!(s.load_run(before.run.id).unwrap(), before);
}

#[test]
fn a_log_that_grew_adds_only_its_new_turns() {
    let (_d, mut s) = store();
    let text = std::fs::read_to_string(fixture("commentary_small.jsonl")).unwrap();
    // The first 11 lines: run_fx_001 up to its first committed turn.
    let head: String = text.lines().take(11).map(|l| format!("{l}\n")).collect();
    let first = duotalk::import_bytes(&mut s, Path::new("head.jsonl"), head.as_bytes()).unwrap();
    assert_eq!(first.new, counts(1, 1, 2, 0, 0));
    let rest = duotalk::import_bytes(&mut s, Path::new("all.jsonl"), text.as_bytes()).unwrap();
    assert_eq!(rest.new, counts(1, 4, 6, 1, 5));
}

#[test]
fn unreadable_files_are_an_error_not_an_empty_import() {
    let (d, mut s) = store();
    let e = duotalk::import_file(&mut s, &d.path().join("missing.jsonl")).unwrap_err();
    assert!(e.to_string().contains("missing.jsonl"), "{e}");
}

#[test]
fn export_jsonl_has_the_run_its_attempts_turns_and_actions() {
    let (_d, mut s) = store();
    duotalk::import_file(&mut s, &fixture("commentary_small.jsonl")).unwrap();
    let rec = run_by_source(&s, "duo-talk:run_fx_001");
    let mut buf = Vec::new();
    export::jsonl(&rec, &mut buf).unwrap();
    let text = String::from_utf8(buf).unwrap();
    assert!(text.lines().all(|l| l.starts_with("{\"record\":")));
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    let kinds: Vec<String> = records
        .iter()
        .map(|r| r["record"].as_str().unwrap().to_string())
        .collect();
    let expected = [
        "run", "attempt", "attempt", "turn", "attempt", "turn", "attempt", "attempt", "attempt",
        "turn", "action",
    ];
    assert_eq!(kinds, expected);
    assert_eq!(records[0]["topic"], "雨上がりの商店街を歩く");
    assert_eq!(records[1]["status"], "RETRY");
    assert_eq!(records[1]["committed"], false);
    assert_eq!(records[1]["timings"]["latency_ms"], 2500);
    assert_eq!(records[2]["guidance"], "2文以内で話してください。");
    assert_eq!(records[2]["committed"], true);
    assert!(records[2]["findings"].is_array());
    assert_eq!(records[3]["speaker"], "yana");
    assert_eq!(records[9]["flags"]["exhausted"], true);
    assert_eq!(records[10]["kind"], "feedback");
    assert_eq!(records[10]["payload"]["issue_type"], "tone_drift");
}

#[test]
fn export_markdown_is_a_readable_transcript() {
    let (_d, mut s) = store();
    duotalk::import_file(&mut s, &fixture("commentary_small.jsonl")).unwrap();
    let rec = run_by_source(&s, "duo-talk:run_fx_001");
    let mut buf = Vec::new();
    export::markdown(&rec, &mut buf).unwrap();
    let md = String::from_utf8(buf).unwrap();
    assert!(md.starts_with("# 雨上がりの商店街を歩く\n"), "{md}");
    assert!(md.contains("- model: gemma2:27b"));
    assert!(md.contains("## 1. **やな** `PASS`"), "{md}");
    assert!(md.contains("## 2. **あゆ** `WARN`"), "{md}");
    assert!(md.contains("## 3. **やな** `RETRY` _exhausted_"), "{md}");
    // Multi-line text stays quoted line by line.
    assert!(md.contains("> 見て、水たまりに空が映ってるじゃん！\n> あゆ、ちょっと覗いてみなよ。"));
    assert!(
        md.contains("- attempt 1 `RETRY` (done): 文が多すぎる(4文)"),
        "{md}"
    );
    assert!(md.contains("同じ話題の繰り返し(2回目)"));
    assert!(md.contains("Director: 語尾が単調"), "{md}");
    assert!(md.contains("Director: 自然な導入"), "{md}");
    assert!(md.contains("- feedback ("), "{md}");
    assert!(md.contains("あゆの反応が少し淡白だった"));
}
