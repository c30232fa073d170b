//! Generated stores: runs with Director retries, regenerated turns (branches) and marks by up
//! to three reviewers, some undone. The generator keeps its own record of what every reviewer
//! said about every version of every line; the exports are checked against that record and
//! against the stored requests, never against the exporter's own reading.

use std::collections::BTreeMap;
use std::time::SystemTime;

use serde_json::{Value, json};

use super::*;
use crate::director::Status;
use crate::duo::TurnFlags;
use crate::store::{ActionKind, AttemptOutcome, NewAction, NewAttempt, NewRun, Store, TurnCommit};

use crate::test_rng::Rng;

const WORLD: &str = "港町の工房。姉妹は灯台守の娘。";
const REVIEWERS: [&str; 3] = ["花子", "taro", "めい"];

/// (attempt id) → what the generator knows about it.
#[derive(Debug, Clone)]
struct Known {
    text: String,
    status: Status,
    messages: Value,
    leak: bool,
}

/// Reviewer → fine.
type Labels = BTreeMap<String, bool>;

#[derive(Default)]
struct Truth {
    attempts: BTreeMap<i64, Known>,
    /// (run, turn) → versions (attempt id of each committed line, oldest first) with each
    /// reviewer's label in force.
    versions: BTreeMap<(i64, u32), Vec<(i64, Labels)>>,
    speakers: BTreeMap<(i64, u32), String>,
}

fn request(speaker: &str, turn: u32, n: u32, guidance: bool) -> Value {
    let system =
        format!("あなたは「{speaker}」です。\n【世界設定】\n{WORLD}\n\n【話題】\n海辺の坂道");
    let mut user = format!("ターン{turn}の相手の発言（試行{n}）");
    if guidance {
        user.push_str("\n【ディレクターより】短く話してください");
    }
    json!({"messages": [
        {"role": "system", "content": system},
        {"role": "user", "content": user}
    ], "options": {"backend": "live"}})
}

#[allow(clippy::too_many_arguments)]
fn attempt(
    s: &mut Store,
    t: &mut Truth,
    run: i64,
    turn: u32,
    sp: &str,
    n: u32,
    st: Status,
    leak: bool,
) -> i64 {
    let text = format!("{sp}の{turn}番の{n}回目の台詞");
    let id = s
        .start_attempt(&NewAttempt {
            run_id: run,
            turn,
            speaker: sp.into(),
            attempt: n,
            text: text.clone(),
            tokens: 1,
            guidance: None,
            prompt_hash: None,
            started_at: SystemTime::now(),
            first_token_ms: Some(1),
        })
        .unwrap();
    let findings = if leak {
        json!([{"rule": "leak", "status": "WARN", "message": "m", "suggestion": "s", "span": null}])
    } else {
        json!([])
    };
    s.finish_attempt(
        id,
        &AttemptOutcome {
            status: Some(st),
            verdict: Some(json!({"status": st.as_str(), "findings": findings})),
            tokens: Some(3),
            ..AttemptOutcome::done(text.clone())
        },
    )
    .unwrap();
    let req = request(sp, turn, n, n > 1);
    s.save_request(id, &req).unwrap();
    t.attempts.insert(
        id,
        Known {
            text,
            status: st,
            // What an export must give: the stored request, PII-masked.
            messages: {
                let mut m = req["messages"].clone();
                super::mask::value(&mut m);
                m
            },
            leak,
        },
    );
    id
}

fn mark(s: &mut Store, run: i64, turn: u32, who: &str, kind: ActionKind, payload: Value) {
    s.add_action_by(
        &NewAction {
            run_id: run,
            turn: Some(turn),
            attempt_id: None,
            kind,
            payload,
        },
        Some(who),
    )
    .unwrap();
}

/// Marks on the version now committed; returns each reviewer's label in force.
fn review(s: &mut Store, r: &mut Rng, run: i64, turn: u32) -> BTreeMap<String, bool> {
    let mut labels = BTreeMap::new();
    for who in REVIEWERS {
        match r.next(5) {
            0 | 1 => {
                let up = r.next(2) == 0;
                mark(s, run, turn, who, ActionKind::Thumb, json!({"up": up}));
                labels.insert(who.to_string(), up);
            }
            2 => {
                let to = [Status::Pass, Status::Retry, Status::Warn][r.next(3) as usize];
                mark(
                    s,
                    run,
                    turn,
                    who,
                    ActionKind::Override,
                    json!({"to": to.as_str(), "reason": "r"}),
                );
                labels.insert(who.to_string(), to == Status::Pass);
                if r.next(3) == 0 {
                    // She takes it back.
                    mark(
                        s,
                        run,
                        turn,
                        who,
                        ActionKind::Undo,
                        json!({"undo": "override"}),
                    );
                    labels.remove(who);
                }
            }
            _ => {}
        }
    }
    labels
}

fn commit(s: &mut Store, run: i64, turn: u32, sp: &str, id: i64, st: Status, text: &str) {
    s.commit_turn(&TurnCommit {
        run_id: run,
        turn,
        speaker: sp.into(),
        attempt_id: Some(id),
        text: text.into(),
        status: st,
        flags: TurnFlags::default(),
        hook: None,
        hook_depth: None,
    })
    .unwrap();
}

/// One turn: RETRY attempts, then a committed line; returns the attempt number reached.
fn one_version(
    s: &mut Store,
    t: &mut Truth,
    r: &mut Rng,
    run: i64,
    turn: u32,
    sp: &str,
    from: u32,
) -> (i64, u32) {
    let mut n = from;
    for _ in 0..r.next(3) {
        n += 1;
        attempt(s, t, run, turn, sp, n, Status::Retry, r.next(4) == 0);
    }
    n += 1;
    let st = [Status::Pass, Status::Pass, Status::Warn][r.next(3) as usize];
    let id = attempt(s, t, run, turn, sp, n, st, r.next(5) == 0);
    let text = t.attempts[&id].text.clone();
    commit(s, run, turn, sp, id, st, &text);
    (id, n)
}

fn generate(seed: u64, runs: usize) -> (tempfile::TempDir, Store, Truth) {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(&dir.path().join("k.db")).unwrap();
    let mut t = Truth::default();
    let mut r = Rng::new(seed);
    for k in 0..runs {
        let run = s
            .create_run(&NewRun {
                topic: format!("話題{k}"),
                model: Some("gemma2:27b".into()),
                endpoint: None,
                api: None,
                options: json!({}),
                persona_version: None,
                ruleset_version: Some("r-9".into()),
            })
            .unwrap();
        let turns = 2 + r.next(4) as u32;
        for turn in 1..=turns {
            let sp = if turn % 2 == 1 { "yana" } else { "ayu" };
            t.speakers.insert((run, turn), sp.into());
            let (id, mut n) = one_version(&mut s, &mut t, &mut r, run, turn, sp, 0);
            let labels = review(&mut s, &mut r, run, turn);
            t.versions.insert((run, turn), vec![(id, labels)]);
            // Sometimes the last turn is regenerated: a second version, marked again.
            if turn == turns && r.next(2) == 0 {
                s.add_action(&NewAction {
                    run_id: run,
                    turn: Some(turn),
                    attempt_id: None,
                    kind: ActionKind::Regenerate,
                    payload: json!({}),
                })
                .unwrap();
                assert!(s.branch_off(run, turn).unwrap().is_some());
                let (id2, n2) = one_version(&mut s, &mut t, &mut r, run, turn, sp, n);
                n = n2;
                let _ = n;
                let labels2 = review(&mut s, &mut r, run, turn);
                t.versions
                    .get_mut(&(run, turn))
                    .unwrap()
                    .push((id2, labels2));
            }
        }
    }
    (dir, s, t)
}

fn lines_of(s: &Store, f: Format, o: &Options) -> (Vec<Value>, Tally) {
    let mut buf = Vec::new();
    let tally = export(s, f, o, &mut buf).unwrap();
    let v = String::from_utf8(buf)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (v, tally)
}

fn majority(labels: &BTreeMap<String, bool>) -> Option<bool> {
    let fine = labels.values().filter(|f| **f).count();
    let not = labels.len() - fine;
    (fine != not && !labels.is_empty()).then_some(fine > not)
}

fn version_of(t: &Truth, run: i64, turn: u32, attempt: i64) -> Option<&BTreeMap<String, bool>> {
    t.versions[&(run, turn)]
        .iter()
        .find(|(id, _)| *id == attempt)
        .map(|(_, l)| l)
}

#[test]
fn dpo_pairs_share_the_rejected_attempts_prompt_and_differ() {
    for seed in 1..=12u64 {
        let (_d, s, t) = generate(seed * 31, 6);
        let (recs, tally) = lines_of(&s, Format::Dpo, &Options::default());
        assert_eq!(recs.len(), tally.total());
        for r in &recs {
            let m = &r["metadata"];
            let rejected = m["rejected_attempt"].as_i64().unwrap();
            let known = &t.attempts[&rejected];
            // The prompt is exactly the stored request of the rejected attempt.
            assert_eq!(r["prompt"], known.messages, "seed {seed}: {r}");
            assert_eq!(r["rejected"][0]["content"], known.text.as_str());
            assert_eq!(r["rejected"][0]["role"], "assistant");
            assert_eq!(r["chosen"][0]["role"], "assistant");
            assert_ne!(r["chosen"], r["rejected"]);
            let chosen = m["chosen_attempt"].as_i64().unwrap();
            assert_eq!(r["chosen"][0]["content"], t.attempts[&chosen].text.as_str());
            let (run, turn) = (
                m["run"].as_i64().unwrap(),
                m["turn"].as_u64().unwrap() as u32,
            );
            match m["source"].as_str().unwrap() {
                "director" => {
                    assert_eq!(known.status, Status::Retry);
                    assert!(matches!(
                        t.attempts[&chosen].status,
                        Status::Pass | Status::Warn
                    ));
                    // Reviewers never rejected the chosen line.
                    let l = version_of(&t, run, turn, chosen).unwrap();
                    assert_ne!(majority(l), Some(false), "seed {seed}: {r}");
                }
                "reviewers" => {
                    let bad = version_of(&t, run, turn, rejected).expect("a committed version");
                    let good = version_of(&t, run, turn, chosen).unwrap();
                    assert_eq!(majority(bad), Some(false), "seed {seed}: {r}");
                    assert_eq!(majority(good), Some(true), "seed {seed}: {r}");
                }
                other => panic!("{other}"),
            }
        }
    }
}

#[test]
fn every_reviewer_decided_pair_is_found() {
    let mut found = 0;
    for seed in 1..=12u64 {
        let (_d, s, t) = generate(seed * 31, 6);
        let (recs, _) = lines_of(
            &s,
            Format::Dpo,
            &Options {
                reviewers_only: true,
                ..Options::default()
            },
        );
        let mut want = 0;
        for vs in t.versions.values() {
            let bad = vs.iter().filter(|v| majority(&v.1) == Some(false)).count();
            let good = vs.iter().filter(|v| majority(&v.1) == Some(true)).count();
            want += bad * good;
        }
        assert_eq!(recs.len(), want, "seed {seed}");
        assert!(recs.iter().all(|r| r["metadata"]["source"] == "reviewers"));
        found += want;
    }
    assert!(
        found > 0,
        "the generator made no reviewer pairs: the test proves nothing"
    );
}

#[test]
fn kto_labels_follow_reviewers_then_the_director_and_drop_ties() {
    for seed in 1..=12u64 {
        let (_d, s, t) = generate(seed * 17, 6);
        let (recs, _) = lines_of(&s, Format::Kto, &Options::default());
        for r in &recs {
            let m = &r["metadata"];
            let id = m["attempt"].as_i64().unwrap();
            let (run, turn) = (
                m["run"].as_i64().unwrap(),
                m["turn"].as_u64().unwrap() as u32,
            );
            let label = r["label"].as_bool().unwrap();
            assert_eq!(r["prompt"], t.attempts[&id].messages);
            match version_of(&t, run, turn, id) {
                Some(l) if !l.is_empty() => {
                    assert_eq!(m["source"], "reviewers");
                    assert_eq!(Some(label), majority(l), "seed {seed}: {r}");
                }
                Some(_) => {
                    assert_eq!(m["source"], "director");
                    assert_eq!(label, t.attempts[&id].status == Status::Pass);
                    assert!(matches!(
                        t.attempts[&id].status,
                        Status::Pass | Status::Retry
                    ));
                }
                None => {
                    assert_eq!(t.attempts[&id].status, Status::Retry);
                    assert!(!label);
                }
            }
        }
        // A tie among reviewers gives no record for that line.
        for ((run, turn), vs) in &t.versions {
            for (id, l) in vs {
                if !l.is_empty() && majority(l).is_none() {
                    assert!(
                        !recs.iter().any(|r| r["metadata"]["attempt"] == *id),
                        "seed {seed}: tie on run {run} turn {turn} exported"
                    );
                }
            }
        }
    }
}

#[test]
fn sft_holds_only_passed_lines_no_reviewer_rejected() {
    for seed in 1..=8u64 {
        let (_d, s, t) = generate(seed * 7, 6);
        let (recs, _) = lines_of(&s, Format::Sft, &Options::default());
        for r in &recs {
            let id = r["metadata"]["attempt"].as_i64().unwrap();
            let msgs = r["messages"].as_array().unwrap();
            assert_eq!(msgs.last().unwrap()["role"], "assistant");
            assert_eq!(
                msgs.last().unwrap()["content"],
                t.attempts[&id].text.as_str()
            );
            assert_eq!(t.attempts[&id].status, Status::Pass);
            let (run, turn) = (
                r["metadata"]["run"].as_i64().unwrap(),
                r["metadata"]["turn"].as_u64().unwrap() as u32,
            );
            let vs = &t.versions[&(run, turn)];
            assert_eq!(vs.last().unwrap().0, id, "only the committed version");
            assert!(vs.last().unwrap().1.values().all(|f| *f));
        }
    }
}

#[test]
fn filters_do_what_they_say() {
    let (_d, s, t) = generate(99, 10);
    let (all, _) = lines_of(&s, Format::Kto, &Options::default());
    let (ayu, _) = lines_of(
        &s,
        Format::Kto,
        &Options {
            sister: Some("ayu".into()),
            ..Options::default()
        },
    );
    assert!(!ayu.is_empty() && ayu.len() < all.len());
    assert!(ayu.iter().all(|r| r["metadata"]["speaker"] == "ayu"));
    let (red, tally) = lines_of(
        &s,
        Format::Dpo,
        &Options {
            redact_vault: true,
            ..Options::default()
        },
    );
    assert!(!red.is_empty());
    for r in &red {
        let text = r["prompt"].to_string();
        assert!(!text.contains("灯台守"), "{text}");
        assert!(text.contains(REDACTED));
        assert!(text.contains("【話題】"));
    }
    assert!(tally.skipped.is_empty(), "{:?}", tally.skipped);
    let (no_leak, tally) = lines_of(
        &s,
        Format::Kto,
        &Options {
            exclude_rules: vec!["leak".into()],
            ..Options::default()
        },
    );
    assert!(tally.skipped.get("--exclude-rules").copied().unwrap_or(0) > 0);
    for r in &no_leak {
        assert!(!t.attempts[&r["metadata"]["attempt"].as_i64().unwrap()].leak);
    }
    let (taro, _) = lines_of(
        &s,
        Format::Kto,
        &Options {
            reviewer: Some("taro".into()),
            ..Options::default()
        },
    );
    assert!(!taro.is_empty());
    assert!(
        taro.iter()
            .all(|r| r["metadata"]["judged_by"]["reviewers"] == json!(["taro"]))
    );
    let (two, _) = lines_of(
        &s,
        Format::Kto,
        &Options {
            min_reviewers: 2,
            ..Options::default()
        },
    );
    assert!(two.iter().all(|r| {
        r["metadata"]["judged_by"]["reviewers"]
            .as_array()
            .unwrap()
            .len()
            >= 2
    }));
    let (agree, _) = lines_of(
        &s,
        Format::Kto,
        &Options {
            agreement_min: Some(1.0),
            ..Options::default()
        },
    );
    for r in agree
        .iter()
        .filter(|r| r["metadata"]["source"] == "reviewers")
    {
        let id = r["metadata"]["attempt"].as_i64().unwrap();
        let (run, turn) = (
            r["metadata"]["run"].as_i64().unwrap(),
            r["metadata"]["turn"].as_u64().unwrap() as u32,
        );
        let l = version_of(&t, run, turn, id).unwrap();
        assert!(l.values().all(|f| *f) || l.values().all(|f| !*f), "{l:?}");
    }
    let (dir, _) = lines_of(
        &s,
        Format::Kto,
        &Options {
            director_only: true,
            ..Options::default()
        },
    );
    assert!(dir.iter().all(|r| r["metadata"]["source"] == "director"));
    let mut buf = Vec::new();
    assert!(
        export(
            &s,
            Format::Dpo,
            &Options {
                director_only: true,
                reviewers_only: true,
                ..Options::default()
            },
            &mut buf
        )
        .is_err()
    );
}

#[test]
fn a_prompt_whose_world_cannot_be_found_is_dropped_when_redacting() {
    let mut msgs =
        vec![json!({"role": "system", "content": "【世界設定】\nA\n\n【話題】\nB【世界設定】"})];
    assert!(!redact_world(&mut msgs));
    let mut msgs = vec![json!({"role": "user", "content": "世界設定なし"})];
    assert!(!redact_world(&mut msgs));
    let mut msgs =
        vec![json!({"role": "system", "content": "p\n【世界設定】\n秘密\n\n【話題】\n海"})];
    assert!(redact_world(&mut msgs));
    assert_eq!(
        msgs[0]["content"],
        format!("p\n【世界設定】\n{REDACTED}\n\n【話題】\n海")
    );
}

/// A lead's gold label (adjudication) decides a record before reviewers and the Director, is
/// named in `metadata.judged_by.gold` and counted; `gold_only` keeps only adjudicated items;
/// two queues deciding one turn differently leave it undecided.
#[test]
fn gold_labels_decide_and_are_named() {
    use crate::annotate::adjudicate::decide;
    use crate::annotate::{Filter, QueueSpec, db as qdb};
    let (_d, mut s, _t) = generate(41, 6);
    let spec = |name: &str| QueueSpec {
        name: name.into(),
        filter: Filter::default(),
        k: 2,
        lease_ms: 60_000,
        overlap: true,
        comparison: None,
    };
    qdb::create(&mut s, &spec("g1"), None).unwrap();
    qdb::create(&mut s, &spec("g2"), None).unwrap();
    // Listing refreshes a queue's items from the runs.
    crate::annotate::adjudicate::disagreements(&mut s, "g1").unwrap();
    crate::annotate::adjudicate::disagreements(&mut s, "g2").unwrap();
    let (base, _) = lines_of(&s, Format::Kto, &Options::default());
    assert!(base.len() >= 4, "{}", base.len());
    let item = |r: &Value| {
        (
            r["metadata"]["run"].as_i64().unwrap(),
            r["metadata"]["turn"].as_u64().unwrap() as u32,
        )
    };
    let mut rng = Rng::new(7);
    let mut want = BTreeMap::new();
    for r in base
        .iter()
        .filter(|r| r["metadata"]["version"] != "earlier")
    {
        if rng.next(2) == 0 {
            continue;
        }
        let it = item(r);
        // Often against the label the record had.
        let fine = if rng.next(3) == 0 {
            r["label"] == true
        } else {
            r["label"] != true
        };
        let label = if fine { "fine" } else { "not" };
        if decide(&mut s, "g1", it, label, "読み直した", "lead").is_ok() {
            want.insert(it, fine);
        }
    }
    assert!(!want.is_empty());
    let gold_only = Options {
        gold_only: true,
        ..Options::default()
    };
    let (recs, tally) = lines_of(&s, Format::Kto, &gold_only);
    assert_eq!(tally.gold, recs.len());
    let got: BTreeMap<(i64, u32), bool> =
        recs.iter().map(|r| (item(r), r["label"] == true)).collect();
    assert_eq!(got, want);
    for r in &recs {
        assert_eq!(r["metadata"]["judged_by"]["gold"]["decided_by"], "lead");
        assert_eq!(r["metadata"]["judged_by"]["gold"]["queue"], "g1");
    }
    // A second queue deciding one of them the other way: that turn is out, and why is said.
    let (&first, &fine) = want.iter().next().unwrap();
    decide(
        &mut s,
        "g2",
        first,
        if fine { "not" } else { "fine" },
        "別の見方",
        "boss",
    )
    .unwrap();
    let (recs, tally) = lines_of(&s, Format::Kto, &gold_only);
    assert!(recs.iter().all(|r| item(r) != first));
    assert!(
        tally
            .skipped
            .keys()
            .any(|k| k.contains("gold labels of two queues disagree"))
    );
}

/// A run whose stored regenerate actions and branches disagree (a regenerate that was never
/// carried out) cannot tell which version a mark was for: its reviewers' marks are not used —
/// its records fall back to the Director, none says `reviewers` — and the tally (the card's
/// source) names the run and why. Other runs keep their reviewers.
#[test]
fn a_run_whose_regenerates_and_branches_disagree_is_named_and_its_marks_unused() {
    for seed in 1..=6u64 {
        let (_d, mut s, _t) = generate(seed * 31, 4);
        let runs = s.runs(10).unwrap();
        let odd = runs.iter().map(|r| r.id).min().unwrap();
        s.add_action(&NewAction {
            run_id: odd,
            turn: Some(1),
            attempt_id: None,
            kind: ActionKind::Regenerate,
            payload: json!({}),
        })
        .unwrap();
        let (recs, tally) = lines_of(&s, Format::Kto, &Options::default());
        let why = format!(
            "run {odd}: its stored regenerate actions and branches disagree, so its reviewer \
             marks were not used"
        );
        assert_eq!(
            tally.skipped.get(&why),
            Some(&1),
            "seed {seed}: {:?}",
            tally.skipped
        );
        for r in recs.iter().filter(|r| r["metadata"]["run"] == odd) {
            assert_ne!(r["metadata"]["source"], "reviewers", "seed {seed}: {r}");
        }
        assert!(
            recs.iter()
                .any(|r| r["metadata"]["run"] != odd && r["metadata"]["source"] == "reviewers"),
            "seed {seed}: the other runs keep their reviewers"
        );
    }
}
