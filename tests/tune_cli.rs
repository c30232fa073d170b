//! `kakeai tune` end to end on generated stores: runs of generated lines, three simulated
//! reviewers per turn with a hidden policy ("N sentences is too long") and slips, a queue with
//! a lead's gold labels. Tune reads the labels in force from the store, recovers the policy on
//! held-out folds, and `--write` gives an overlay that the Director honours exactly; coin
//! flips get no proposal; bad input gets one clear line and exit 2.

mod common;

use common::seeded::Gen as Rng;
use kakeai::annotate::{Filter, QueueSpec, adjudicate, db};
use kakeai::director::{self, RuleSet, Status};
use kakeai::duo::TurnFlags;
use kakeai::store::{ActionKind, NewAction, NewRun, Store, TurnCommit};
use kakeai::text::Analysis;
use kakeai::text::analyzer::fallback::FallbackAnalyzer;
use serde_json::json;

mod cli_env;
use cli_env::Env;

const YANA: [&str; 8] = [
    "今日は晴れてるね",
    "商店街で肉まん買ってきた",
    "坂の上まで歩いたよ",
    "なんか眠くなってきた",
    "夕飯はカレーにしよう",
    "窓を開けたら風が気持ちいい",
    "あの本まだ読み終わってない",
    "明日は早起きしなきゃ",
];
const AYU: [&str; 8] = [
    "今日は晴れていますね",
    "商店街で肉まんを買ってきました",
    "坂の上まで歩きました",
    "少し眠くなってきました",
    "夕飯はカレーにしましょう",
    "窓を開けると風が気持ちいいです",
    "あの本はまだ読み終わっていません",
    "明日は早起きしなければなりません",
];

/// A line of `n` sentences for the speaker.
fn line(rng: &mut Rng, speaker: &str, n: usize) -> String {
    let bank = if speaker == "yana" { &YANA } else { &AYU };
    (0..n).map(|_| format!("{}。", rng.pick(bank))).collect()
}

struct Seeded {
    /// (run, turn, text, speaker, policy says usable)
    turns: Vec<(i64, u32, String, String, bool)>,
}

/// `runs` runs of `per_run` turns with 1–7 sentences; three reviewers mark each turn by
/// `policy` (true = usable) with `slip_pct`% of their marks flipped.
fn seed(
    store: &mut Store,
    rng: &mut Rng,
    runs: usize,
    per_run: u32,
    policy: &dyn Fn(usize, &mut Rng) -> bool,
    slip_pct: usize,
) -> Seeded {
    let mut out = Seeded { turns: Vec::new() };
    for r in 0..runs {
        let run_id = new_run(store, r);
        for t in 1..=per_run {
            let speaker = if t % 2 == 1 { "yana" } else { "ayu" };
            let n = 1 + rng.next(7) as usize;
            let text = line(rng, speaker, n);
            commit(store, run_id, t, speaker, text.clone());
            let usable = policy(n, rng);
            for who in ["aoi", "ren", "mio"] {
                let slip = (rng.next(100) as usize) < slip_pct;
                thumb(store, run_id, t, who, usable != slip);
            }
            out.turns.push((run_id, t, text, speaker.into(), usable));
        }
    }
    out
}

fn new_run(store: &mut Store, r: usize) -> i64 {
    store
        .create_run(&NewRun {
            topic: format!("話題{r}"),
            model: Some("tiny".into()),
            endpoint: None,
            api: None,
            options: json!({}),
            persona_version: None,
            ruleset_version: None,
        })
        .unwrap()
}

fn commit(store: &mut Store, run_id: i64, turn: u32, speaker: &str, text: String) {
    store
        .commit_turn(&TurnCommit {
            run_id,
            turn,
            speaker: speaker.into(),
            attempt_id: None,
            text,
            status: Status::Pass,
            flags: TurnFlags::default(),
            hook: None,
            hook_depth: None,
        })
        .unwrap();
}

fn thumb(store: &mut Store, run: i64, turn: u32, who: &str, up: bool) {
    store
        .add_action_by(
            &NewAction {
                run_id: run,
                turn: Some(turn),
                attempt_id: None,
                kind: ActionKind::Thumb,
                payload: json!({"up": up}),
            },
            Some(who),
        )
        .unwrap();
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json_of(o: &std::process::Output) -> serde_json::Value {
    assert!(o.status.success(), "tune failed: {}", stderr(o));
    serde_json::from_slice(&o.stdout).expect("tune --format json prints JSON")
}

/// The share of labelled turns whose Director verdict (under `rules`) agrees with the policy.
fn agreement(rules: &RuleSet, s: &Seeded) -> f64 {
    let hits = s
        .turns
        .iter()
        .filter(|(_, _, text, speaker, usable)| {
            let c = rules.character(speaker).unwrap();
            let v = director::judge(rules, &FallbackAnalyzer, c, &Analysis::new(text), &[]);
            (v.status <= Status::Warn) == *usable
        })
        .count();
    hits as f64 / s.turns.len() as f64
}

#[test]
fn a_hidden_length_policy_is_recovered_and_the_overlay_is_what_the_director_does() {
    for (seed_no, limit) in [(11u64, 4usize), (12, 5)] {
        let env = Env::new();
        let mut store = Store::open(&env.data_db()).unwrap();
        let mut rng = Rng::new(seed_no);
        let policy = move |n: usize, _: &mut Rng| n < limit;
        let s = seed(&mut store, &mut rng, 20, 24, &policy, 5);
        drop(store);
        let overlay = env.dir.path().join("tuned.toml");
        let o = env.run(&[
            "tune",
            "--runs",
            "all",
            "--format",
            "json",
            "--write",
            overlay.to_str().unwrap(),
        ]);
        let r = json_of(&o);
        assert_eq!(r["labels"], 480, "every turn has a majority label");
        assert_eq!(r["folds"], 5);
        let (before, after) = (
            r["agreement_before"].as_f64().unwrap(),
            r["agreement_after"].as_f64().unwrap(),
        );
        assert!(
            after >= 0.80 && after > before + 0.2,
            "limit {limit}: κ {before} → {after}"
        );
        let props = r["proposals"].as_array().unwrap();
        assert!(
            props.iter().any(|p| p["rule"] == "scatter"
                && p["after"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("{limit}/"))),
            "limit {limit}: {props:?}"
        );
        for p in props {
            assert!(
                p["support"].as_array().unwrap().len() > p["against"].as_array().unwrap().len()
            );
        }
        // The overlay: provenance in its header, and the Director under it agrees with the policy.
        let text = std::fs::read_to_string(&overlay).unwrap();
        assert!(
            text.starts_with("# kakeai tune")
                && text.contains("runs ")
                && text.contains("held-out κ"),
            "{text}"
        );
        let tuned = RuleSet::load(Some(&overlay)).unwrap();
        let base = RuleSet::load(None).unwrap();
        let (a0, a1) = (agreement(&base, &s), agreement(&tuned, &s));
        assert!(
            a1 >= 0.9 && a1 > a0,
            "limit {limit}: Director agreement {a0:.3} → {a1:.3}\n{text}"
        );
        // The variant beside it is one `kakeai compare --variant` reads.
        let variant = std::fs::read_to_string(overlay.with_extension("variant.toml")).unwrap();
        let v: toml::Table = toml::from_str(&variant).unwrap();
        assert!(
            v["rules"].as_table().unwrap().contains_key("scatter"),
            "{variant}"
        );
    }
}

#[test]
fn coin_flip_labels_get_no_proposal_and_nothing_is_written() {
    for seed_no in [21u64, 22, 23] {
        let env = Env::new();
        let mut store = Store::open(&env.data_db()).unwrap();
        let mut rng = Rng::new(seed_no);
        let policy = |_: usize, r: &mut Rng| r.next(2) == 0;
        seed(&mut store, &mut rng, 12, 24, &policy, 0);
        drop(store);
        let r = json_of(&env.run(&["tune", "--runs", "all", "--format", "json"]));
        assert_eq!(
            r["proposals"].as_array().unwrap().len(),
            0,
            "seed {seed_no}: {r}"
        );
        let overlay = env.dir.path().join("x.toml");
        let o = env.run(&[
            "tune",
            "--runs",
            "all",
            "--write",
            overlay.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(!overlay.exists());
        assert!(String::from_utf8_lossy(&o.stdout).contains("no proposal holds up"));
    }
}

#[test]
fn a_queue_reads_its_items_and_a_leads_gold_label_decides() {
    let env = Env::new();
    let mut store = Store::open(&env.data_db()).unwrap();
    let mut rng = Rng::new(31);
    // Reviewers say the opposite of the policy on every turn; gold labels (the policy) decide.
    let policy = |n: usize, _: &mut Rng| n < 4;
    let s = seed(&mut store, &mut rng, 10, 12, &policy, 100);
    let spec = QueueSpec {
        name: "main".into(),
        filter: Filter::default(),
        k: 3,
        lease_ms: 60_000,
        overlap: true,
        comparison: None,
    };
    db::create(&mut store, &spec, Some("lead")).unwrap();
    let q = db::get(store.db(), "main").unwrap();
    db::refresh(store.db(), &q).unwrap();
    for (run, turn, _, _, usable) in &s.turns {
        let label = if *usable { "fine" } else { "not" };
        adjudicate::decide(
            &mut store,
            "main",
            (*run, *turn),
            label,
            "house style",
            "lead",
        )
        .unwrap();
    }
    drop(store);
    let r = json_of(&env.run(&["tune", "--queue", "main", "--format", "json"]));
    assert_eq!(r["labels"], 120);
    assert!(r["agreement_after"].as_f64().unwrap() >= 0.8, "{r}");
    let table = env.run(&["tune", "--queue", "main"]);
    let out = String::from_utf8_lossy(&table.stdout);
    eprintln!("{out}");
    assert!(
        out.contains("queue main") && out.contains("scatter"),
        "{out}"
    );
}

#[test]
fn bad_input_gets_one_clear_line_and_no_proposal() {
    let env = Env::new();
    let mut store = Store::open(&env.data_db()).unwrap();
    let mut rng = Rng::new(41);
    let policy = |n: usize, _: &mut Rng| n < 4;
    seed(&mut store, &mut rng, 2, 10, &policy, 0);
    drop(store);
    let check = |args: &[&str], want: &str| {
        let o = env.run(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?} printed a result");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    };
    check(
        &["tune", "--runs", "all"],
        "only 20 labelled turns; tune needs at least 30",
    );
    check(&["tune", "--queue", "nope"], "no review queue named `nope`");
    check(&["tune", "--runs", "1,x"], "`x` is not a run id");
    check(&["tune", "--runs", "99"], "run 99 is not in the store");
    let bad = env.file("bad.toml", "[scatter]\nretry_sentences = = 3\n");
    check(&["tune", "--runs", "all", "--rules", &bad], "bad.toml:2:");
    let off = env.file("off.toml", "[severity]\nleak = \"off\"\n");
    check(&["tune", "--runs", "all", "--rules", &off], "severity.leak");
    // Labels from a newer kakeai's schema: one line, no proposal (whatever the exit says).
    let conn = rusqlite::Connection::open(env.data_db()).unwrap();
    conn.pragma_update(None, "user_version", 9999).unwrap();
    drop(conn);
    let o = env.run(&["tune", "--runs", "all"]);
    let err = stderr(&o);
    assert!(!o.status.success() && o.stdout.is_empty(), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("schema version 9999"), "{err}");
}

/// A house that lets やな end with よ (the markers rule calls those lines RETRY) but never lets
/// her speak politely (RETRY too): switching tone off would pass the polite lines as well, so
/// tune proposes adding her ending to her word list — and the overlay writes her whole list.
#[test]
fn a_sisters_ending_is_learned_as_a_word_not_tone_off() {
    const CASUAL: [&str; 6] = [
        "坂の上まで歩いたよ。",
        "商店街で肉まん買ったよ。",
        "窓を開けたら風が入ったよ。",
        "あの本まだ読んでないよ。",
        "夕飯はカレーにするよ。",
        "明日は早起きするよ。",
    ];
    const POLITE: [&str; 3] = [
        "この建物は古いと思います。",
        "明日は雨が降るそうです。",
        "商店街は駅の近くにあります。",
    ];
    const MARKED: [&str; 3] = [
        "雨が降るかな？",
        "ほんと？楽しそうだよね！",
        "えー、それいいかも！",
    ];
    let env = Env::new();
    let mut store = Store::open(&env.data_db()).unwrap();
    let mut rng = Rng::new(51);
    for r in 0..12 {
        let run_id = new_run(&mut store, r);
        for t in 1..=10u32 {
            let (speaker, text, usable) = if t % 2 == 0 {
                (
                    "ayu",
                    "つまり、あれは灯台ですね。夜に光ります。".to_string(),
                    true,
                )
            } else {
                match rng.next(3) {
                    0 => ("yana", rng.pick(&CASUAL).to_string(), true),
                    1 => ("yana", rng.pick(&POLITE).to_string(), false),
                    _ => ("yana", rng.pick(&MARKED).to_string(), true),
                }
            };
            commit(&mut store, run_id, t, speaker, text);
            for who in ["aoi", "ren", "mio"] {
                thumb(&mut store, run_id, t, who, usable);
            }
        }
    }
    drop(store);
    let overlay = env.dir.path().join("tuned.toml");
    let o = env.run(&[
        "tune",
        "--runs",
        "all",
        "--format",
        "json",
        "--write",
        overlay.to_str().unwrap(),
    ]);
    let r = json_of(&o);
    let props = r["proposals"].as_array().unwrap();
    let tone = props
        .iter()
        .find(|p| p["rule"] == "tone")
        .unwrap_or_else(|| panic!("{r}"));
    assert_eq!(tone["change"], "characters.yana.tone.endings", "{tone}");
    assert!(tone["after"].as_str().unwrap().ends_with('よ'), "{tone}");
    assert!(r["agreement_after"].as_f64().unwrap() >= 0.8, "{r}");
    // Her whole list is written (lists replace when rules files merge), the new ending last.
    let text = std::fs::read_to_string(&overlay).unwrap();
    let tuned = RuleSet::load(Some(&overlay)).unwrap();
    let base = RuleSet::load(None).unwrap();
    let (before, after) = (
        &base.character("yana").unwrap().tone.endings,
        &tuned.character("yana").unwrap().tone.endings,
    );
    assert_eq!(&after[..before.len()], &before[..], "{text}");
    assert_eq!(after.len(), before.len() + 1, "{text}");
    // The Director under it keeps rejecting her polite lines.
    let c = tuned.character("yana").unwrap();
    for line in POLITE {
        let v = director::judge(&tuned, &FallbackAnalyzer, c, &Analysis::new(line), &[]);
        assert_eq!(v.status, Status::Retry, "{line}");
    }
}
