//! Generated runs whose lines (both sisters), prompts, guidance and notes carry names, phone
//! numbers and e-mail addresses: no raw value may appear in any byte of any export format,
//! and bad input is refused with nothing written.

use std::time::SystemTime;

use serde_json::json;

use super::*;
use crate::director::Status;
use crate::duo::TurnFlags;
use crate::store::{ActionKind, AttemptOutcome, NewAction, NewAttempt, NewRun, TurnCommit};
use crate::test_rng::Rng;

const SURNAMES: [&str; 4] = ["山田", "佐藤", "鈴木", "高橋"];
const GIVEN: [&str; 4] = ["花子", "太郎", "美咲", "健一"];

/// (a line with the values, the raw values).
fn personal(r: &mut Rng) -> (String, Vec<String>) {
    let name = format!(
        "{}{}",
        SURNAMES[r.next(4) as usize],
        GIVEN[r.next(4) as usize]
    );
    let phone = format!("090-{:04}-{:04}", 1000 + r.next(8999), 1000 + r.next(8999));
    let mail = format!("user{}@example.com", r.next(100_000));
    let line = format!("{name}さんの電話は{phone}、メールは{mail}だよ。");
    (line, vec![phone, mail])
}

fn attempt(s: &mut Store, run: i64, turn: u32, sp: &str, n: u32, st: Status, text: &str) -> i64 {
    attempt_with(s, (run, turn, sp, n), st, text, false, text)
}

/// One finished attempt; `leak`: its verdict holds a leak RETRY finding; `history`: what its
/// request's user message quotes.
fn attempt_with(
    s: &mut Store,
    (run, turn, sp, n): (i64, u32, &str, u32),
    st: Status,
    text: &str,
    leak: bool,
    history: &str,
) -> i64 {
    let id = s
        .start_attempt(&NewAttempt {
            run_id: run,
            turn,
            speaker: sp.into(),
            attempt: n,
            text: text.into(),
            tokens: 1,
            guidance: Some(format!("前の台詞「{text}」を短く")),
            prompt_hash: None,
            started_at: SystemTime::now(),
            first_token_ms: Some(1),
        })
        .unwrap();
    let findings = if leak {
        json!([{"rule": "leak", "status": "RETRY", "message": "m", "suggestion": "s", "span": null}])
    } else {
        json!([])
    };
    let verdict = json!({"status": st.as_str(), "findings": findings});
    let outcome = AttemptOutcome {
        status: Some(st),
        verdict: Some(verdict),
        tokens: Some(3),
        ..AttemptOutcome::done(text.to_string())
    };
    s.finish_attempt(id, &outcome).unwrap();
    let sys = "あなたは姉妹です。\n【世界設定】\n港町\n\n【話題】\n坂道";
    let req = json!({"messages": [
        {"role": "system", "content": sys},
        {"role": "user", "content": format!("相手: {history}")}
    ]});
    s.save_request(id, &req).unwrap();
    id
}

/// A store of `runs` runs; returns the raw values put in it.
fn generate(path: &std::path::Path, seed: u64, runs: usize) -> Vec<String> {
    let mut s = Store::open(path).unwrap();
    let mut r = Rng::new(seed);
    let mut raw = Vec::new();
    for _ in 0..runs {
        let run = s
            .create_run(&NewRun {
                topic: "近所の話".into(),
                model: Some("m".into()),
                endpoint: None,
                api: None,
                options: json!({}),
                persona_version: None,
                ruleset_version: Some("r".into()),
            })
            .unwrap();
        for turn in 1..=4u32 {
            let sp = if turn % 2 == 1 { "yana" } else { "ayu" };
            let (bad, v1) = personal(&mut r);
            let (good, v2) = personal(&mut r);
            raw.extend(v1.into_iter().chain(v2));
            attempt(&mut s, run, turn, sp, 1, Status::Retry, &bad);
            let id = attempt(&mut s, run, turn, sp, 2, Status::Pass, &good);
            s.commit_turn(&TurnCommit {
                run_id: run,
                turn,
                speaker: sp.into(),
                attempt_id: Some(id),
                text: good.clone(),
                status: Status::Pass,
                flags: TurnFlags::default(),
                hook: None,
                hook_depth: None,
            })
            .unwrap();
            let (note, v3) = personal(&mut r);
            raw.extend(v3);
            let action = NewAction {
                run_id: run,
                turn: Some(turn),
                attempt_id: None,
                kind: ActionKind::Note,
                payload: json!({"text": note}),
            };
            s.add_action_by(&action, Some("rev")).unwrap();
        }
    }
    raw
}

fn args(
    db: &std::path::Path,
    out: &std::path::Path,
    format: ExportFormat,
    run: Vec<i64>,
) -> ExportArgs {
    ExportArgs {
        run,
        format,
        dataset: DatasetArgs::default(),
        db: Some(db.to_path_buf()),
        out: Some(out.to_path_buf()),
        unmasked: false,
    }
}

#[test]
fn no_raw_personal_value_in_any_format() {
    for seed in 1..=3u64 {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("k.db");
        let raw = generate(&db, seed, 2);
        // The values are ones the masker finds: the test checks the export, not the masker.
        for v in &raw {
            assert!(crate::safety::pii::shared().mask(v).pii_detected, "{v}");
        }
        let formats = [
            (ExportFormat::Jsonl, vec![1]),
            (ExportFormat::Md, vec![2]),
            (ExportFormat::Dpo, vec![]),
            (ExportFormat::Kto, vec![]),
            (ExportFormat::Sft, vec![]),
        ];
        for (i, (f, runs)) in formats.into_iter().enumerate() {
            let out = dir.path().join(format!("out{i}.txt"));
            assert_eq!(run(args(&db, &out, f, runs)), 0, "{f:?}");
            let bytes = std::fs::read_to_string(&out).unwrap();
            assert!(!bytes.is_empty(), "{f:?}");
            for v in &raw {
                assert!(!bytes.contains(v.as_str()), "{f:?} seed {seed}: {v} raw");
            }
        }
    }
}

#[test]
fn unmasked_is_stated_and_only_for_jsonl_and_md() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    let raw = generate(&db, 9, 1);
    let out = dir.path().join("u.jsonl");
    let mut a = args(&db, &out, ExportFormat::Jsonl, vec![1]);
    a.unmasked = true;
    assert_eq!(run(a), 0);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.lines()
            .next()
            .unwrap()
            .contains("\"pii\":\"unmasked\"")
    );
    assert!(raw.iter().any(|v| text.contains(v.as_str())));
    for f in [ExportFormat::Dpo, ExportFormat::Kto, ExportFormat::Sft] {
        let out = dir.path().join("d.jsonl");
        let mut a = args(&db, &out, f, vec![]);
        a.unmasked = true;
        assert_eq!(run(a), 2);
        assert!(!out.exists());
    }
}

#[test]
fn bad_input_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    generate(&db, 4, 1);
    let listing = || {
        let mut v: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        v.sort();
        v
    };
    let before = listing();
    let missing = dir.path().join("no-such-dir").join("x.jsonl");
    for f in [ExportFormat::Jsonl, ExportFormat::Dpo] {
        let runs = if f == ExportFormat::Jsonl {
            vec![1]
        } else {
            vec![]
        };
        assert_eq!(run(args(&db, &missing, f, runs)), 2);
    }
    assert!(!missing.parent().unwrap().exists());
    let out = dir.path().join("e.jsonl");
    let mut a = args(&db, &out, ExportFormat::Kto, vec![]);
    a.dataset.exclude_rules = vec!["leak".into(), "no_such_rule".into()];
    assert_eq!(run(a), 2);
    assert_eq!(listing(), before);
}

fn commit(s: &mut Store, run: i64, turn: u32, sp: &str, id: i64, text: &str) {
    s.commit_turn(&TurnCommit {
        run_id: run,
        turn,
        speaker: sp.into(),
        attempt_id: Some(id),
        text: text.into(),
        status: Status::Pass,
        flags: TurnFlags::default(),
        hook: None,
        hook_depth: None,
    })
    .unwrap();
}

/// Runs where a turn's every attempt leaked and one was committed anyway (as `run` did), a
/// reviewer liked it, and later prompts quote it; returns the leaked lines.
fn generate_leaks(path: &std::path::Path, seed: u64) -> Vec<String> {
    let mut s = Store::open(path).unwrap();
    let mut r = Rng::new(seed);
    let mut leaked = Vec::new();
    for k in 0..3 {
        let run = s
            .create_run(&NewRun {
                topic: "灯台".into(),
                model: Some("m".into()),
                endpoint: None,
                api: None,
                options: json!({}),
                persona_version: None,
                ruleset_version: Some("r".into()),
            })
            .unwrap();
        let mut history = String::new();
        for turn in 1..=4u32 {
            let sp = if (turn + k) % 2 == 1 { "yana" } else { "ayu" };
            let leaks = r.next(2) == 0;
            let l1 = format!("灯台の地下に封印{}番がある", r.next(1000));
            let l2 = format!("封印{}番は祖母が作った", r.next(1000));
            let ok = format!("{sp}の{turn}番の穏やかな台詞");
            let a1 = attempt_with(
                &mut s,
                (run, turn, sp, 1),
                Status::Retry,
                &l1,
                leaks,
                &history,
            );
            let (text, leak2) = if leaks { (&l2, true) } else { (&ok, false) };
            let a2 = attempt_with(
                &mut s,
                (run, turn, sp, 2),
                Status::Pass,
                text,
                leak2,
                &history,
            );
            commit(&mut s, run, turn, sp, a2, text);
            if leaks {
                leaked.extend([l1.clone(), l2.clone()]);
            }
            let up = json!({"up": true, "speaker": sp});
            let action = NewAction {
                run_id: run,
                turn: Some(turn),
                attempt_id: None,
                kind: ActionKind::Thumb,
                payload: up,
            };
            s.add_action_by(&action, Some("rev")).unwrap();
            let _ = a1;
            history.push_str(text);
            history.push('\n');
        }
    }
    leaked
}

#[test]
fn a_leak_rejected_line_is_only_ever_a_rejected_example() {
    for seed in 1..=4u64 {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("k.db");
        let leaked = generate_leaks(&db, seed);
        if leaked.is_empty() {
            continue;
        }
        let has = |v: &serde_json::Value| {
            let t = v.to_string();
            leaked.iter().any(|l| t.contains(l.as_str()))
        };
        for f in [ExportFormat::Dpo, ExportFormat::Kto, ExportFormat::Sft] {
            let out = dir.path().join("o.jsonl");
            assert_eq!(run(args(&db, &out, f, vec![])), 0, "{f:?}");
            for line in std::fs::read_to_string(&out).unwrap().lines() {
                let v: serde_json::Value = serde_json::from_str(line).unwrap();
                assert!(
                    !has(&v["prompt"]),
                    "{f:?} seed {seed}: leak in a prompt: {line}"
                );
                assert!(!has(&v["chosen"]), "{f:?} seed {seed}: leak chosen: {line}");
                assert!(
                    !has(&v["messages"]),
                    "{f:?} seed {seed}: leak in sft: {line}"
                );
                if v["label"] == true {
                    assert!(
                        !has(&v["completion"]),
                        "seed {seed}: leak as KTO true: {line}"
                    );
                }
            }
        }
    }
}
