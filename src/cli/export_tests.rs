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
        // The rules alone, whatever llm.toml the machine has.
        second: crate::cli::second::SecondArgs {
            pii_llm: Some(crate::cli::second::Mode::Off),
        },
        progress: Default::default(),
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

/// A run of `turns` turns whose every attempt's request is a real run's shape: the system
/// message, the conversation so far (alternating user/assistant, oldest first, lines of
/// generated length) and her cue. Turn 1's line is 👍 by `reviewer`. `options`: the run's.
fn generate_dialogue(
    s: &mut Store,
    r: &mut Rng,
    turns: u32,
    options: serde_json::Value,
    reviewer: &str,
) -> i64 {
    let run = s
        .create_run(&NewRun {
            topic: "坂道".into(),
            model: Some("m".into()),
            endpoint: None,
            api: None,
            options,
            persona_version: None,
            ruleset_version: Some("r".into()),
        })
        .unwrap();
    let mut said: Vec<String> = Vec::new();
    for turn in 1..=turns {
        let sp = if turn % 2 == 1 { "yana" } else { "ayu" };
        let mut msgs = vec![
            json!({"role": "system", "content": "あなたは姉妹の一人です。".repeat(1 + r.below(4))}),
        ];
        for (i, line) in said.iter().enumerate() {
            let role = if (said.len() - i) % 2 == 1 {
                "user"
            } else {
                "assistant"
            };
            msgs.push(json!({"role": role, "content": line}));
        }
        msgs.push(json!({"role": "user", "content": "【あなたの番】続けてください"}));
        let bad = format!("{}の{turn}番、短すぎ。", sp);
        let good = format!(
            "{}の{turn}番の台詞、{}",
            sp,
            "海が見える坂だね".repeat(1 + r.below(6))
        );
        for (n, (st, text)) in [(Status::Retry, &bad), (Status::Pass, &good)]
            .into_iter()
            .enumerate()
        {
            let id = attempt(s, run, turn, sp, n as u32 + 1, st, text);
            s.save_request(id, &json!({"messages": msgs})).unwrap();
            if st == Status::Pass {
                commit(s, run, turn, sp, id, text);
            }
        }
        if turn == 1 {
            let action = NewAction {
                run_id: run,
                turn: Some(turn),
                attempt_id: None,
                kind: ActionKind::Thumb,
                payload: json!({"up": true, "speaker": sp}),
            };
            s.add_action_by(&action, Some(reviewer)).unwrap();
        }
        said.push(good);
    }
    run
}

fn records(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn chars_of(prompt: &serde_json::Value) -> usize {
    prompt
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap().chars().count())
        .sum()
}

/// dpo, kto and sft into one folder: each keeps its own card, naming its file, with the licence,
/// the reviewers and what its labels mean; a second dpo file there gets a card of its own.
#[test]
fn every_format_keeps_its_card_with_licence_reviewers_and_labels() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    {
        let mut s = Store::open(&db).unwrap();
        let mut r = Rng::new(11);
        generate_dialogue(&mut s, &mut r, 4, json!({}), "花子");
    }
    for f in [ExportFormat::Dpo, ExportFormat::Kto, ExportFormat::Sft] {
        let name = format!("{f:?}.jsonl").to_lowercase();
        let mut a = args(&db, &dir.path().join(&name), f, vec![]);
        a.dataset.license = Some("cc-by-4.0".into());
        assert_eq!(run(a), 0, "{f:?}");
    }
    for (f, label) in [
        ("dpo", "`rejected`"),
        ("kto", "`label`: `true`"),
        ("sft", "`messages`"),
    ] {
        let card = std::fs::read_to_string(dir.path().join(format!("README.{f}.md"))).unwrap();
        assert!(
            card.contains(&format!("`{f}.jsonl` ({})", f.to_uppercase())),
            "{card}"
        );
        assert!(card.contains("licence: cc-by-4.0"), "{card}");
        assert!(card.contains(label), "{f}: {card}");
        assert!(card.contains("`reviewers` — people's marks"), "{card}");
        if f != "dpo" {
            assert!(card.contains("## Reviewers\n\n花子"), "{f}: {card}");
        }
    }
    assert!(!dir.path().join("README.md").exists());
    let other = dir.path().join("dpo-2.jsonl");
    assert_eq!(run(args(&db, &other, ExportFormat::Dpo, vec![])), 0);
    let first = std::fs::read_to_string(dir.path().join("README.dpo.md")).unwrap();
    assert!(first.contains("`dpo.jsonl`"), "{first}");
    let second = std::fs::read_to_string(dir.path().join("dpo-2.jsonl.README.md")).unwrap();
    assert!(
        second.contains("`dpo-2.jsonl`") && second.contains("licence: not stated"),
        "{second}"
    );
}

/// An export with no record fails (exit 1), says why, and writes nothing: no file, no card,
/// no partial file — for a reviewer with no marks and for a period with no run.
#[test]
fn an_empty_export_writes_nothing_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    generate(&db, 5, 1);
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
    for f in [ExportFormat::Dpo, ExportFormat::Kto, ExportFormat::Sft] {
        let out = dir.path().join("empty.jsonl");
        let mut a = args(&db, &out, f, vec![]);
        a.dataset.reviewer = Some("nobody".into());
        assert_eq!(run(a), 1, "{f:?}");
        let mut a = args(&db, &out, f, vec![]);
        a.dataset.since = Some("2999-01-01".into());
        assert_eq!(run(a), 1, "{f:?}");
        assert_eq!(listing(), before, "{f:?}");
    }
    let t = crate::dataset::Tally {
        runs: 2,
        ..Default::default()
    };
    let why = empty_reason(crate::dataset::Format::Kto, &t);
    assert!(
        why.contains("no kto records") && why.contains("2 runs"),
        "{why}"
    );
}

/// Comparison and probe samples are left out unless --include-samples (or named with --run).
#[test]
fn sample_runs_are_left_out_unless_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    let (plain, probe, compare) = {
        let mut s = Store::open(&db).unwrap();
        let mut r = Rng::new(12);
        (
            generate_dialogue(&mut s, &mut r, 2, json!({}), "rev"),
            generate_dialogue(&mut s, &mut r, 2, json!({"probe": "秘密1"}), "rev"),
            generate_dialogue(&mut s, &mut r, 2, json!({"compare": 3}), "rev"),
        )
    };
    let runs_in = |a: ExportArgs| {
        let out = a.out.clone().unwrap();
        assert_eq!(run(a), 0);
        let mut runs: Vec<i64> = records(&out)
            .iter()
            .map(|r| r["metadata"]["run"].as_i64().unwrap())
            .collect();
        runs.dedup();
        runs
    };
    let out = dir.path().join("d.jsonl");
    for f in [ExportFormat::Dpo, ExportFormat::Kto, ExportFormat::Sft] {
        assert_eq!(runs_in(args(&db, &out, f, vec![])), vec![plain], "{f:?}");
        let card = std::fs::read_to_string(crate::dataset::card::path_for(&out, dataset_format(f)))
            .unwrap();
        assert!(
            card.contains("2 × run made by a comparison or a vault probe"),
            "{card}"
        );
        let mut a = args(&db, &out, f, vec![]);
        a.dataset.include_samples = true;
        assert_eq!(runs_in(a), vec![plain, probe, compare], "{f:?}");
        assert_eq!(
            runs_in(args(&db, &out, f, vec![probe])),
            vec![probe],
            "{f:?}"
        );
    }
}

fn dataset_format(f: ExportFormat) -> crate::dataset::Format {
    match f {
        ExportFormat::Dpo => crate::dataset::Format::Dpo,
        ExportFormat::Kto => crate::dataset::Format::Kto,
        _ => crate::dataset::Format::Sft,
    }
}

/// --max-prompt-tokens N over generated conversations: every prompt is within N (estimated),
/// keeps its system message and her cue, and lost only its oldest history (what is left is the
/// newest part, in order, starting with a user line as a run's does); the card's token range
/// is the records'. Without it nothing is trimmed.
#[test]
fn max_prompt_tokens_trims_the_oldest_history_as_a_run_does() {
    let tpc = crate::llm::LlmConfig::load().unwrap().tokens_per_char;
    for seed in 20..24u64 {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("k.db");
        {
            let mut s = Store::open(&db).unwrap();
            let mut r = Rng::new(seed);
            generate_dialogue(&mut s, &mut r, 8, json!({}), "rev");
        }
        let full = dir.path().join("full.jsonl");
        assert_eq!(run(args(&db, &full, ExportFormat::Kto, vec![])), 0);
        let full = records(&full);
        let longest = full.iter().map(|r| chars_of(&r["prompt"])).max().unwrap();
        let shortest = full.iter().map(|r| chars_of(&r["prompt"])).min().unwrap();
        // A limit between the shortest and the longest prompt: some are trimmed.
        let mut r = Rng::new(seed);
        let chars = shortest + r.below(longest - shortest);
        let max = ((chars as f64) * tpc).floor() as u32;
        let out = dir.path().join("kto.jsonl");
        let mut a = args(&db, &out, ExportFormat::Kto, vec![]);
        a.dataset.max_prompt_tokens = Some(max);
        assert_eq!(run(a), 0, "seed {seed}");
        let cut = records(&out);
        let mut trimmed = 0;
        let mut tokens = Vec::new();
        for rec in &cut {
            let p = rec["prompt"].as_array().unwrap();
            let orig = full
                .iter()
                .find(|f| f["metadata"] == rec["metadata"])
                .unwrap()["prompt"]
                .as_array()
                .unwrap()
                .clone();
            let t = (chars_of(&rec["prompt"]) as f64 * tpc).ceil() as usize;
            assert!(t <= max as usize + 1, "seed {seed}: {t} > {max}");
            tokens.push(t);
            assert_eq!(p[0], orig[0], "the system message stays");
            assert_eq!(p.last(), orig.last(), "her cue stays");
            let kept = &p[1..p.len() - 1];
            let all = &orig[1..orig.len() - 1];
            assert!(all.ends_with(kept), "seed {seed}: not the newest history");
            if kept.len() < all.len() {
                trimmed += 1;
                if let Some(first) = kept.first() {
                    assert_eq!(first["role"], "user", "seed {seed}");
                }
            }
        }
        assert!(trimmed > 0, "seed {seed}: the limit trimmed nothing");
        // Each record of the full export is there, or counted as left out.
        let card = std::fs::read_to_string(dir.path().join("kto.jsonl.README.md")).unwrap();
        tokens.sort_unstable();
        assert!(
            card.contains(&format!("min {}, ", tokens[0]))
                && card.contains(&format!("max {} tokens", tokens[tokens.len() - 1]))
                && card.contains(&format!("`--max-prompt-tokens {max}`: {trimmed} prompts")),
            "seed {seed}: {card}"
        );
        if cut.len() < full.len() {
            assert!(card.contains("even without its history"), "{card}");
        }
    }
}

/// --sft-form prompt-completion: her accepted line is the completion and nowhere else; the
/// prompt is the conversation she was sent (her earlier lines there are context, not trained).
#[test]
fn sft_prompt_completion_trains_only_the_accepted_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    {
        let mut s = Store::open(&db).unwrap();
        let mut r = Rng::new(30);
        generate_dialogue(&mut s, &mut r, 5, json!({}), "rev");
    }
    let plain = dir.path().join("m.jsonl");
    assert_eq!(run(args(&db, &plain, ExportFormat::Sft, vec![])), 0);
    let out = dir.path().join("pc.jsonl");
    let mut a = args(&db, &out, ExportFormat::Sft, vec![]);
    a.dataset.sft_form = SftForm::PromptCompletion;
    assert_eq!(run(a), 0);
    let (msgs, pc) = (records(&plain), records(&out));
    assert_eq!(msgs.len(), pc.len());
    for (m, p) in msgs.iter().zip(&pc) {
        assert!(p.get("messages").is_none());
        let m = m["messages"].as_array().unwrap();
        let completion = p["completion"].as_array().unwrap();
        assert_eq!(completion.len(), 1);
        assert_eq!(&completion[0], m.last().unwrap());
        assert_eq!(p["prompt"].as_array().unwrap()[..], m[..m.len() - 1]);
    }
    // The first export's card is README.sft.md; this file's has its own name.
    let card = std::fs::read_to_string(dir.path().join("pc.jsonl.README.md")).unwrap();
    assert!(card.contains("the only text trained on"), "{card}");
    // Only for sft.
    let mut a = args(&db, &dir.path().join("x.jsonl"), ExportFormat::Kto, vec![]);
    a.dataset.sft_form = SftForm::PromptCompletion;
    assert_eq!(run(a), 2);
}
