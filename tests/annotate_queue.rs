//! Shared review queues on generated stores: the filter picks exactly the matching turns, k
//! reviewers working at once in separate connections (as separate processes would) never judge
//! an item more than k times and leave none short, leases expire, overlap hands everyone every
//! item, an undone 👍 frees the place again; and the `kakeai queue` command end to end.

mod common;

use std::collections::BTreeMap;

use kakeai::annotate::db::{self, Item};
use kakeai::annotate::{Filter, QueueSpec};
use kakeai::director::Status;
use kakeai::store::{ActionKind, NewAction, NewRun, Store};
use serde_json::json;

mod cli_env;
use cli_env::Env;

const STATUSES: [Status; 5] = [
    Status::Pass,
    Status::Warn,
    Status::Retry,
    Status::Modify,
    Status::Unscored,
];

use common::seeded::Gen as Rng;

/// `runs` runs of `turns` committed turns with random verdicts (the shared generator).
fn seed(store: &mut Store, seed: u64, runs: usize, turns: u32) -> Vec<(Item, String, Status)> {
    common::stores::committed_runs(store, seed, runs, turns, &STATUSES)
}

fn spec(name: &str, filter: Filter, k: u32, overlap: bool) -> QueueSpec {
    QueueSpec {
        name: name.into(),
        filter,
        k,
        lease_ms: 60_000,
        overlap,
        comparison: None,
    }
}

fn thumb(store: &mut Store, item: Item, who: &str, up: bool) {
    store
        .add_action_by(
            &NewAction {
                run_id: item.0,
                turn: Some(item.1),
                attempt_id: None,
                kind: ActionKind::Thumb,
                payload: json!({"up": up}),
            },
            Some(who),
        )
        .unwrap();
}

fn judged_by(store: &mut Store, name: &str) -> BTreeMap<Item, Vec<String>> {
    let q = db::get(store.db(), name).unwrap();
    db::states(store.db(), &q)
        .unwrap()
        .into_iter()
        .map(|(i, s)| (i, s.judged_by.into_iter().collect()))
        .collect()
}

#[test]
fn the_filter_holds_exactly_the_matching_turns() {
    for s in 1..=5u64 {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("k.db")).unwrap();
        let all = seed(&mut store, s * 7919, 4, 8);
        let mut r = Rng::new(s);
        let statuses: Vec<Status> = STATUSES
            .iter()
            .copied()
            .filter(|_| r.next(2) == 0)
            .collect();
        let sister = ["yana", "ayu"][r.next(2) as usize].to_string();
        let filter = Filter {
            statuses: statuses.clone(),
            sister: Some(sister.clone()),
            ..Filter::default()
        };
        db::create(&mut store, &spec("q", filter, 1, false), Some("lead")).unwrap();
        let want: Vec<Item> = all
            .iter()
            .filter(|(_, sp, st)| *sp == sister && (statuses.is_empty() || statuses.contains(st)))
            .map(|(i, _, _)| *i)
            .collect();
        let p = db::progress(&mut store, "q", 0).unwrap();
        assert_eq!(p.items, want.len(), "seed {s}");
        let got: Vec<Item> = judged_by(&mut store, "q").into_keys().collect();
        assert_eq!(got, want, "seed {s}");
    }
}

#[test]
fn k_reviewers_at_once_judge_every_item_exactly_k_times() {
    for (k, reviewers) in [(1, 3), (2, 3), (3, 4)] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.db");
        let mut store = Store::open(&path).unwrap();
        seed(&mut store, 99 + k as u64, 3, 10);
        db::create(&mut store, &spec("all", Filter::default(), k, false), None).unwrap();
        drop(store);
        let workers: Vec<_> = (0..reviewers)
            .map(|n| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let who = format!("reviewer{n}");
                    let mut store = Store::open(&path).unwrap();
                    let mut judged = 0;
                    let now = kakeai::patterns::stamp::now_ms();
                    while let Some(c) = db::claim(&mut store, "all", &who, now).unwrap() {
                        thumb(&mut store, (c.subject, c.turn), &who, judged % 3 != 0);
                        judged += 1;
                    }
                    judged
                })
            })
            .collect();
        let total: usize = workers.into_iter().map(|w| w.join().unwrap()).sum();
        let mut store = Store::open(&path).unwrap();
        let by = judged_by(&mut store, "all");
        assert_eq!(by.len(), 30);
        for (item, who) in &by {
            assert_eq!(who.len(), k as usize, "k={k}: {item:?} judged by {who:?}");
        }
        assert_eq!(total, 30 * k as usize);
        let p = db::progress(&mut store, "all", 0).unwrap();
        assert_eq!((p.done, p.items), (30, 30));
        assert_eq!(p.per_reviewer.values().sum::<usize>(), 30 * k as usize);
    }
}

#[test]
fn a_lease_holds_the_item_until_it_expires_and_release_frees_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("k.db")).unwrap();
    seed(&mut store, 5, 1, 2);
    db::create(&mut store, &spec("one", Filter::default(), 1, false), None).unwrap();
    let t0 = 1_000_000;
    let a = db::claim(&mut store, "one", "taro", t0).unwrap().unwrap();
    // taro asks again: the same item (his lease), not the next one.
    let again = db::claim(&mut store, "one", "taro", t0 + 5)
        .unwrap()
        .unwrap();
    assert_eq!((again.subject, again.turn), (a.subject, a.turn));
    let b = db::claim(&mut store, "one", "花子", t0 + 10)
        .unwrap()
        .unwrap();
    assert_ne!((b.subject, b.turn), (a.subject, a.turn), "held by taro");
    assert!(
        db::claim(&mut store, "one", "jiro", t0 + 20)
            .unwrap()
            .is_none(),
        "both held"
    );
    // Asking again renewed taro's lease; once it ran out, jiro gets his item.
    assert!(again.until_ms > a.until_ms);
    assert!(
        db::claim(&mut store, "one", "jiro", a.until_ms + 1)
            .unwrap()
            .is_none()
    );
    let c = db::claim(&mut store, "one", "jiro", again.until_ms + 1)
        .unwrap()
        .unwrap();
    assert_eq!((c.subject, c.turn), (a.subject, a.turn));
    // 花子 gives hers back: taro may take it at once.
    assert!(db::release(&mut store, "one", "花子", (b.subject, b.turn)).unwrap());
    assert!(!db::release(&mut store, "one", "花子", (b.subject, b.turn)).unwrap());
    let d = db::claim(&mut store, "one", "taro", again.until_ms + 2)
        .unwrap()
        .unwrap();
    assert_eq!((d.subject, d.turn), (b.subject, b.turn));
}

#[test]
fn overlap_gives_everyone_every_item_and_an_undo_reopens_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("k.db")).unwrap();
    seed(&mut store, 11, 2, 3);
    db::create(&mut store, &spec("all", Filter::default(), 2, true), None).unwrap();
    for who in ["taro", "花子", "jiro"] {
        let mut n = 0;
        while let Some(c) = db::claim(&mut store, "all", who, 0).unwrap() {
            thumb(&mut store, (c.subject, c.turn), who, true);
            n += 1;
        }
        assert_eq!(n, 6, "{who} judges every item");
    }
    let p = db::progress(&mut store, "all", 0).unwrap();
    assert_eq!(p.done, 6);
    assert_eq!(p.per_reviewer["花子"], 6);
    // 花子 undoes her 👍 on one turn: that item is hers to judge again.
    let first = *judged_by(&mut store, "all").keys().next().unwrap();
    store
        .add_action_by(
            &NewAction {
                run_id: first.0,
                turn: Some(first.1),
                attempt_id: None,
                kind: ActionKind::Undo,
                payload: json!({"undo": "thumb"}),
            },
            Some("花子"),
        )
        .unwrap();
    let c = db::claim(&mut store, "all", "花子", 0).unwrap().unwrap();
    assert_eq!((c.subject, c.turn), first);
    assert!(db::claim(&mut store, "all", "taro", 0).unwrap().is_none());
}

#[test]
fn the_queue_command_end_to_end() {
    let env = Env::new();
    let mut store = Store::open(&env.data_db()).unwrap();
    let all = seed(&mut store, 3, 2, 6);
    drop(store);
    let want = all
        .iter()
        .filter(|(_, sp, st)| sp == "ayu" && matches!(st, Status::Retry | Status::Unscored))
        .count();
    let out = env.run(&[
        "queue",
        "create",
        "retry-ayu",
        "--status",
        "retry,UNSCORED",
        "--sister",
        "あゆ",
        "--since",
        "2020-01-01",
        "--k",
        "2",
        "--lease",
        "5m",
        "--json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["items"], want);
    // The same name again, a bad verdict, a bad lease, no name: each exit 2 with the reason.
    for (args, why) in [
        (vec!["queue", "create", "retry-ayu"], "already exists"),
        (
            vec!["queue", "create", "x", "--status", "FINE"],
            "--status FINE",
        ),
        (vec!["queue", "create", "x", "--lease", "3d"], "--lease 3d"),
        (
            vec!["queue", "next", "nosuch", "--reviewer", "taro"],
            "no queue named `nosuch`",
        ),
    ] {
        let out = env.run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(why),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = env
        .cmd(&["queue", "next", "retry-ayu"])
        .env_remove("KAKEAI_REVIEWER")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--reviewer"));
    // taro works through the queue: every item once, then exit 1.
    let mut seen = Vec::new();
    loop {
        let out = env.run(&["queue", "next", "retry-ayu", "--reviewer", "taro", "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        if out.status.code() == Some(1) {
            assert!(v["item"].is_null());
            break;
        }
        assert_eq!(out.status.code(), Some(0));
        let item = (
            v["item"]["run_id"].as_i64().unwrap(),
            v["item"]["turn"].as_u64().unwrap() as u32,
        );
        assert_eq!(v["item"]["speaker"], "ayu");
        assert!(!seen.contains(&item), "{item:?} handed twice");
        seen.push(item);
        if seen.len() % 2 == 0 {
            let mut store = Store::open(&env.data_db()).unwrap();
            thumb(&mut store, item, "taro", false);
        } else {
            let (run, turn) = (item.0.to_string(), item.1.to_string());
            let out = env.run(&[
                "queue",
                "judge",
                "retry-ayu",
                "--run",
                &run,
                "--turn",
                &turn,
                "--thumb",
                "down",
                "--reviewer",
                "taro",
            ]);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    // A turn outside the queue cannot be judged through it.
    let out = env.run(&[
        "queue",
        "judge",
        "retry-ayu",
        "--run",
        "999",
        "--turn",
        "1",
        "--thumb",
        "up",
        "--reviewer",
        "taro",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not in queue retry-ayu"));
    assert_eq!(seen.len(), want);
    let out = env.run(&["queue", "show", "retry-ayu", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["items"], want);
    assert_eq!(v["done"], 0, "k = 2: one reviewer is not enough");
    assert_eq!(v["per_reviewer"]["taro"], want);
    // One reviewer: no item two reviewers judged, so no α (never a made-up 1.0).
    assert!(v["alpha"].is_null());
    assert_eq!(v["alpha_items"], 0);
    let out = env.run(&["queue", "list"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("retry-ayu  RETRY|UNSCORED · ayu · since 2020-01-01  k=2"),
        "{text}"
    );
}

/// A stored paired comparison of `turns` turns over a fresh baseline run.
fn comparison(store: &mut Store, turns: usize) -> i64 {
    use kakeai::compare::db as cdb;
    use kakeai::compare::outcome::{Change, Side, TurnRow};
    let run = store
        .create_run(&NewRun {
            topic: "比較".into(),
            model: None,
            endpoint: None,
            api: None,
            options: json!({}),
            persona_version: None,
            ruleset_version: None,
        })
        .unwrap();
    let id = cdb::create(
        store,
        &cdb::Header {
            kind: "paired".into(),
            baseline_run: Some(run),
            variant_name: "terse".into(),
            variant_path: None,
            variant_text: String::new(),
            variant_hash: "h".into(),
            model: None,
            endpoint: None,
            options: json!({}),
            sample_runs: vec![],
        },
    )
    .unwrap();
    let side = |t: &str| Side {
        text: t.into(),
        status: Status::Pass,
        exhausted: false,
        tone: 0,
        findings: vec![],
        judge: None,
        judge_mean: None,
        attempts: 1,
    };
    for t in 1..=turns {
        let row = TurnRow {
            turn: t,
            speaker: if t % 2 == 1 { "yana" } else { "ayu" }.into(),
            a: side(&format!("Aの{t}")),
            b: vec![side(&format!("Bの{t}"))],
            change: Change::Same,
            diff: vec![],
        };
        cdb::add_turn(store, id, &row).unwrap();
    }
    id
}

#[test]
fn a_pairwise_queue_collects_choices_with_reasons_and_the_summary_shows_them() {
    let env = Env::new();
    let mut store = Store::open(&env.data_db()).unwrap();
    let id = comparison(&mut store, 4);
    drop(store);
    let cid = id.to_string();
    let out = env.run(&[
        "queue",
        "create",
        "pair",
        "--compare",
        &cid,
        "--k",
        "2",
        "--json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["items"],
        4
    );
    // A filter other than --sister makes no sense on a comparison; a missing one is refused.
    let out = env.run(&[
        "queue",
        "create",
        "p2",
        "--compare",
        &cid,
        "--status",
        "RETRY",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let out = env.run(&["queue", "create", "p3", "--compare", "999"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no comparison with id 999"));
    let choices = [("taro", "A"), ("花子", "B")];
    for (who, choice) in choices {
        loop {
            let out = env.run(&["queue", "next", "pair", "--reviewer", who]);
            if out.status.code() == Some(1) {
                break;
            }
            let text = String::from_utf8_lossy(&out.stdout).to_string();
            assert!(
                text.contains("  A: Aの") && text.contains("  B: Bの"),
                "{text}"
            );
            let turn = text.split_whitespace().nth(3).unwrap().to_string();
            // No reason: refused, nothing stored.
            let out = env.run(&[
                "queue",
                "judge",
                "pair",
                "--turn",
                &turn,
                "--choice",
                choice,
                "--reviewer",
                who,
            ]);
            assert_eq!(out.status.code(), Some(2));
            let out = env.run(&[
                "queue",
                "judge",
                "pair",
                "--turn",
                &turn,
                "--choice",
                choice,
                "--reason",
                "語尾が自然",
                "--reviewer",
                who,
            ]);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    // A third reviewer finds nothing: k = 2 reached on every turn.
    let out = env.run(&["queue", "next", "pair", "--reviewer", "jiro"]);
    assert_eq!(out.status.code(), Some(1));
    let out = env.run(&["compare", "--show", &cid, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["reviewers"]["a"], 4);
    assert_eq!(v["reviewers"]["b"], 4);
    assert_eq!(v["reviewers"]["reviewers"], 2);
    // Always opposite choices: agreement below chance.
    let out = env.run(&["queue", "show", "pair", "--json"]);
    let q: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(q["alpha_items"], 4);
    assert!(q["alpha"].as_f64().unwrap() < 0.0, "{q}");
    let out = env.run(&["queue", "show", "pair"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("agreement across reviewers: α -"));
    // taro changes his mind on one turn: the latest mark counts.
    let out = env.run(&[
        "queue",
        "judge",
        "pair",
        "--turn",
        "1",
        "--choice",
        "tie",
        "--reason",
        "どちらも良い",
        "--reviewer",
        "taro",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let out = env.run(&["compare", "--show", &cid]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("reviewers: A better 3 · B better 4 · tie 1 (2 reviewers, 4 turns)"),
        "{text}"
    );
    // A turn the comparison does not have, a bad choice: refused.
    let out = env.run(&[
        "queue",
        "judge",
        "pair",
        "--turn",
        "9",
        "--choice",
        "A",
        "--reason",
        "x",
        "--reviewer",
        "taro",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("has no turn 9"));
    let out = env.run(&[
        "queue",
        "judge",
        "pair",
        "--turn",
        "1",
        "--choice",
        "C",
        "--reason",
        "x",
        "--reviewer",
        "taro",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--choice C"));
}

#[test]
fn a_lead_lists_disagreements_and_stores_gold_labels_from_the_command_line() {
    let env = Env::new();
    let mut store = Store::open(&env.data_db()).unwrap();
    let all = seed(&mut store, 23, 1, 4);
    db::create(&mut store, &spec("two", Filter::default(), 2, true), None).unwrap();
    let items: Vec<Item> = all.iter().map(|(i, _, _)| *i).collect();
    // Nothing judged yet: nothing to adjudicate (exit 1).
    let out = env.run(&["queue", "adjudicate", "two"]);
    assert_eq!(out.status.code(), Some(1));
    thumb(&mut store, items[1], "taro", true);
    thumb(&mut store, items[1], "hana", false);
    thumb(&mut store, items[2], "taro", false);
    thumb(&mut store, items[2], "hana", false);
    drop(store);
    let out = env.run(&["queue", "adjudicate", "two"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert_eq!(text.lines().count(), 1, "only the split item: {text}");
    assert!(text.contains("hana: not · taro: fine"), "{text}");
    assert!(text.contains("--label fine|not"), "{text}");
    let (run, turn) = (items[1].0.to_string(), items[1].1.to_string());
    let decide = |label: &str, reason: &str| {
        env.run(&[
            "queue",
            "adjudicate",
            "two",
            "--run",
            &run,
            "--turn",
            &turn,
            "--label",
            label,
            "--reason",
            reason,
            "--reviewer",
            "lead",
        ])
    };
    let out = decide("tie", "x");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("one of fine, not"));
    assert_eq!(decide("not", "").status.code(), Some(2));
    assert_eq!(decide("not", "語尾が崩れている").status.code(), Some(0));
    let out = env.run(&["queue", "adjudicate", "two", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["disagreements"][0]["gold"]["label"], "not");
    assert_eq!(v["disagreements"][0]["gold"]["reason"], "語尾が崩れている");
    let out = env.run(&["queue", "show", "two"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("1 item(s) the reviewers disagree on · 1 with a gold label"),
        "{text}"
    );
}

/// Each reviewer's pace (items/hour between her first and last judgement in force, and how
/// many in the last hour) and the queue's guidelines, in `queue show` (text and JSON) and the
/// report; a guidelines file with a control character is refused at its line and column.
#[test]
fn pace_and_guidelines_in_show_and_the_report() {
    let env = Env::new();
    let mut store = Store::open(&env.data_db()).unwrap();
    let all = seed(&mut store, 41, 1, 8);
    db::create(&mut store, &spec("team", Filter::default(), 2, true), None).unwrap();
    let items: Vec<Item> = all.iter().map(|(i, _, _)| *i).collect();
    let now = std::time::SystemTime::now();
    let ago =
        |min: u64| kakeai::store::time::iso_utc(now - std::time::Duration::from_secs(min * 60));
    // taro: 5 items 30 min apart, the last a minute ago (2.0 items/h, 2 in the last hour);
    // hana: one item (too few to say).
    let mut times = Vec::new();
    for (i, item) in items.iter().take(5).enumerate() {
        thumb(&mut store, *item, "taro", i % 2 == 0);
        times.push(ago(121 - 30 * i as u64));
    }
    thumb(&mut store, items[0], "hana", true);
    times.push(ago(10));
    drop(store);
    let conn = rusqlite::Connection::open(env.data_db()).unwrap();
    let ids: Vec<i64> = conn
        .prepare("SELECT id FROM actions ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(ids.len(), times.len());
    for (id, t) in ids.iter().zip(&times) {
        conn.execute("UPDATE actions SET created_at = ?1 WHERE id = ?2", (t, id))
            .unwrap();
    }
    drop(conn);
    let out = env.run(&["queue", "show", "team", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rate = v["pace"]["taro"]["per_hour"].as_f64().unwrap();
    assert!((rate - 2.0).abs() < 1e-6, "{v}");
    assert_eq!(v["pace"]["taro"]["last_hour"], 2, "{v}");
    assert!(v["pace"]["hana"]["per_hour"].is_null(), "{v}");
    assert!(v["guidelines"].is_null());
    let text = String::from_utf8_lossy(&env.run(&["queue", "show", "team"]).stdout).into_owned();
    assert!(
        text.contains("taro: 5 judged · 2.0 items/h · 2 in the last hour"),
        "{text}"
    );
    assert!(
        text.contains("hana: 1 judged · — items/h (too few to say)"),
        "{text}"
    );
    assert!(text.contains("no guidelines yet"), "{text}");

    let dir = env.dir.path();
    let good = dir.join("guide.md");
    std::fs::write(
        &good,
        "# あゆの口調\n\n- 敬語が崩れたら 👎\n- <迷ったら> uncertain\n",
    )
    .unwrap();
    let bad = dir.join("bad.md");
    std::fs::write(&bad, "# ok\n見出し\u{1b}]0;x\u{7}\n").unwrap();
    let out = env.run(&[
        "queue",
        "guidelines",
        "team",
        "--file",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.md:2:4: a control character (U+001B)"),
        "{err}"
    );
    let out = env.run(&[
        "queue",
        "guidelines",
        "nosuch",
        "--file",
        good.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let out = env.run(&[
        "queue",
        "guidelines",
        "team",
        "--file",
        good.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&env.run(&["queue", "show", "team"]).stdout).into_owned();
    assert!(
        text.contains("guidelines:\n  │ # あゆの口調\n  │ \n  │ - 敬語が崩れたら 👎"),
        "{text}"
    );
    let out = env.run(&[
        "report",
        "--since",
        "2000-01-01",
        "--out",
        dir.join("r.html").to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(dir.join("r.html")).unwrap();
    assert!(page.contains("レビューキュー"), "{page}");
    assert!(
        page.contains("<td class=\"who\">taro</td><td class=\"n\">5</td><td class=\"n\">2.0</td>")
    );
    assert!(page.contains("- &lt;迷ったら&gt; uncertain"));
    let out = env.run(&["queue", "guidelines", "team", "--clear"]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value =
        serde_json::from_slice(&env.run(&["queue", "show", "team", "--json"]).stdout).unwrap();
    assert!(v["guidelines"].is_null());
    assert_eq!(
        env.run(&["queue", "guidelines", "team"]).status.code(),
        Some(2)
    );
}

/// A reviewer's name stored before names were checked (controls, a window-title escape, a
/// newline that would forge a line) is printed without its controls by `queue show` and
/// `queue adjudicate`: no escape byte, no line that starts with the forged text.
#[test]
fn a_stored_name_with_controls_is_printed_without_them() {
    let env = Env::new();
    let mut store = Store::open(&env.data_db()).unwrap();
    let all = seed(&mut store, 5, 2, 6);
    db::create(
        &mut store,
        &spec("all", Filter::default(), 2, false),
        Some("lead"),
    )
    .unwrap();
    let forged = "ev\u{1b}]0;pwned\u{7}il\u{1b}[2J\nkakeai queue: all items done";
    for (item, _, _) in all.iter().take(3) {
        thumb(&mut store, *item, forged, true);
        thumb(&mut store, *item, "hana", false);
    }
    drop(store);
    for args in [
        vec!["queue", "show", "all"],
        vec!["queue", "adjudicate", "all"],
    ] {
        let out = env.run(&args);
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{args:?}: a control character was printed: {text:?}"
        );
        assert!(
            !text
                .lines()
                .any(|l| l.starts_with("kakeai queue: all items done")),
            "{args:?}: a forged line: {text}"
        );
        assert!(
            text.contains("ev") && text.contains("il"),
            "{args:?}: {text}"
        );
    }
}
