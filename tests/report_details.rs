//! `kakeai report`, what it says about review and retries, on generated stores: overrides with
//! their target, reason, reviewer and the verdict in force; every attempt a turn did not commit
//! (findings, guidance, latency) and never the text of one a never-leak rule stopped; marks made
//! before a regeneration never landing on the new line (the report and the dataset export read
//! them alike); the scorecard limited to the report's runs; the compare diff taken between the
//! masked lines, per-turn outcomes and reviewers' choices; the period's trend by day; the lead's
//! gold labels counted.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::SystemTime;

use kakeai::director::Status;
use kakeai::duo::TurnFlags;
use kakeai::store::{ActionKind, AttemptOutcome, NewAction, NewAttempt, NewRun, Store, TurnCommit};
use serde_json::{Value, json};

mod cli_env;
use cli_env::Env;
use common::seeded::Gen;

const SECRET: &str = "地下の王家の墓";

fn new_run(store: &mut Store, options: Value) -> i64 {
    store
        .create_run(&NewRun {
            topic: "坂道".into(),
            model: Some("gemma2:27b".into()),
            options,
            ..NewRun::default()
        })
        .unwrap()
}

fn speaker(turn: u32) -> &'static str {
    if turn % 2 == 1 { "yana" } else { "ayu" }
}

/// One finished attempt: (attempt number, text, status, findings, guidance, latency).
#[allow(clippy::too_many_arguments)]
fn attempt(
    store: &mut Store,
    run: i64,
    turn: u32,
    n: u32,
    text: &str,
    status: Status,
    findings: Value,
    guidance: Option<&str>,
    latency: u64,
) -> i64 {
    let id = store
        .start_attempt(&NewAttempt {
            run_id: run,
            turn,
            speaker: speaker(turn).into(),
            attempt: n,
            text: text.into(),
            tokens: 1,
            guidance: guidance.map(String::from),
            prompt_hash: None,
            started_at: SystemTime::now(),
            first_token_ms: Some(latency / 4),
        })
        .unwrap();
    store
        .finish_attempt(
            id,
            &AttemptOutcome {
                status: Some(status),
                verdict: Some(json!({"status": status.as_str(), "findings": findings, "tone": {"score": 2}})),
                judge: Some(json!({"scores": {"frame": 4.0, "roleplay": 4.0, "connection": 3.0, "density": 3.0, "naturalness": 4.0}})),
                latency_ms: Some(latency),
                ..AttemptOutcome::done(text)
            },
        )
        .unwrap();
    id
}

fn commit(
    store: &mut Store,
    run: i64,
    turn: u32,
    id: i64,
    text: &str,
    status: Status,
    withheld: bool,
) {
    store
        .commit_turn(&TurnCommit {
            run_id: run,
            turn,
            speaker: speaker(turn).into(),
            attempt_id: Some(id),
            text: text.into(),
            status,
            flags: TurnFlags {
                withheld,
                ..TurnFlags::default()
            },
            hook: None,
            hook_depth: None,
        })
        .unwrap();
}

fn mark(
    store: &mut Store,
    run: i64,
    turn: u32,
    who: Option<&str>,
    kind: ActionKind,
    payload: Value,
) {
    store
        .add_action_by(
            &NewAction {
                run_id: run,
                turn: Some(turn),
                attempt_id: None,
                kind,
                payload,
            },
            who,
        )
        .unwrap();
}

/// An attempt without findings, guidance or much latency.
fn plain(store: &mut Store, run: i64, turn: u32, n: u32, text: &str, status: Status) -> i64 {
    attempt(store, run, turn, n, text, status, json!([]), None, 10)
}

/// A named reviewer's 👍 (`up`) or 👎.
fn thumb(store: &mut Store, run: i64, turn: u32, who: &str, up: bool) {
    mark(
        store,
        run,
        turn,
        Some(who),
        ActionKind::Thumb,
        json!({"up": up}),
    );
}

fn finding(rule: &str, status: &str, message: &str) -> Value {
    json!({"rule": rule, "status": status, "message": message, "suggestion": "", "span": null})
}

fn report(env: &Env, args: &[&str]) -> String {
    let out = env.dir.path().join("r.html");
    let mut all = vec!["report"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", out.to_str().unwrap()]);
    let o = env.run(&all);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("default-src 'none'") && !html.contains("<script"));
    html
}

/// The row of turn `turn` in the turn table.
fn row(html: &str, turn: u32) -> &str {
    let key = format!("<tr><td class=\"n\">{turn}</td>");
    let start = html
        .find(&key)
        .unwrap_or_else(|| panic!("no row for turn {turn}"));
    let end = html[start + key.len()..]
        .find("<tr><td class=\"n\">")
        .map_or_else(
            || html[start..].find("</table>").unwrap() + start,
            |e| e + start + key.len(),
        );
    &html[start..end]
}

const STATUSES: [Status; 4] = [Status::Pass, Status::Warn, Status::Retry, Status::Unscored];

/// Every (Director verdict, override target) pair, overridden by a named reviewer with a reason
/// holding markup and a name: the row shows the target's badge in force, ✎ when it changed the
/// verdict and = when it confirmed it, who, and the reason escaped and masked. A second
/// reviewer's different override puts both targets in force; a thumb beside it is named too.
#[test]
fn overrides_show_their_target_reason_reviewer_and_the_verdict_in_force() {
    let env = Env::new();
    let mut store = Store::open(&env.data_db()).unwrap();
    let run = new_run(&mut store, json!({}));
    let mut want = Vec::new();
    let mut turn = 0;
    for from in STATUSES {
        for to in STATUSES {
            turn += 1;
            let id = plain(&mut store, run, turn, 1, &format!("行{turn}"), from);
            commit(&mut store, run, turn, id, &format!("行{turn}"), from, false);
            let reason = format!("<b>理由{turn}</b> 山田太郎さんの件");
            mark(
                &mut store,
                run,
                turn,
                Some("taro"),
                ActionKind::Override,
                json!({"from": from.as_str(), "to": to.as_str(), "reason": reason}),
            );
            if turn % 3 == 0 {
                thumb(&mut store, run, turn, "花子", false);
            }
            want.push((turn, from, to));
        }
    }
    // A second reviewer disagrees on the last turn's target.
    let (last, _, last_to) = *want.last().unwrap();
    let other = if last_to == Status::Pass {
        Status::Retry
    } else {
        Status::Pass
    };
    mark(
        &mut store,
        run,
        last,
        Some("ken"),
        ActionKind::Override,
        json!({"from": null, "to": other.as_str(), "reason": ""}),
    );
    drop(store);
    let html = report(&env, &["--run", &run.to_string()]);
    assert!(
        !html.contains("山田太郎"),
        "a name in a reason reached the page"
    );
    for (turn, from, to) in want {
        let r = row(&html, turn);
        let sign = if from == to { "=" } else { "✎" };
        let forced = format!(
            "<div class=\"forced\">→ <span class=\"badge {0}\">{0}</span>{sign}</div>",
            to.as_str()
        );
        assert!(r.contains(&forced), "turn {turn} {from}→{to}: {r}");
        assert!(
            r.contains(&format!(
                "taro</span> {sign} {} → {}",
                from.as_str(),
                to.as_str()
            )),
            "turn {turn}: {r}"
        );
        assert!(
            r.contains(&format!("&lt;b&gt;理由{turn}&lt;/b&gt;")),
            "turn {turn}: {r}"
        );
        assert_eq!(r.contains("花子</span> 👎"), turn % 3 == 0, "turn {turn}");
    }
    let r = row(&html, last);
    assert_eq!(r.matches("<div class=\"forced\">").count(), 2, "{r}");
    assert!(
        r.contains("ken</span> ✎") && r.contains("(no reason given)"),
        "{r}"
    );
}

/// One turn of RETRY attempts (sometimes one stopped by the leak review, its secret quoted by
/// another rule's message) and its committed line (sometimes withheld): (attempts not committed,
/// the leaking one, withheld).
fn retried_turn(store: &mut Store, g: &mut Gen, run: i64, turn: u32) -> (u32, Option<u32>, bool) {
    let retries = g.next(4) as u32;
    let leak_at = (retries > 0 && g.chance(50)).then(|| 1 + g.next(u64::from(retries)) as u32);
    let withheld = g.chance(25);
    for n in 1..=retries {
        let leaks = leak_at == Some(n);
        let text = if leaks {
            format!("行{turn}-{n} {SECRET}")
        } else {
            format!("行{turn}-{n}")
        };
        let findings = if leaks {
            json!([
                finding("leak", "RETRY", &format!("「{SECRET}」")),
                finding("setting", "WARN", &format!("{SECRET}について"))
            ])
        } else {
            json!([finding("lines", "RETRY", &format!("msg{turn}-{n}"))])
        };
        let guidance = (n > 1).then(|| format!("guide{turn}-{n}"));
        attempt(
            store,
            run,
            turn,
            n,
            &text,
            Status::Retry,
            findings,
            guidance.as_deref(),
            100 * u64::from(n) + u64::from(turn),
        );
    }
    let n = retries + 1;
    let (text, findings) = if withheld {
        (
            format!("漏れ{turn} {SECRET}"),
            json!([finding("leak", "RETRY", "m")]),
        )
    } else {
        (format!("採用{turn}"), json!([]))
    };
    let status = if withheld {
        Status::Retry
    } else {
        Status::Pass
    };
    let id = attempt(
        store,
        run,
        turn,
        n,
        &text,
        status,
        findings,
        Some(&format!("guide{turn}-{n}")),
        999,
    );
    commit(
        store,
        run,
        turn,
        id,
        if withheld { "代わりの行" } else { &text },
        status,
        withheld,
    );
    (retries, leak_at, withheld)
}

/// Generated turns of RETRY attempts before the committed one, one of them (sometimes) stopped
/// by the leak review and quoted by another rule's message: every attempt not committed is a
/// `<details>` with its findings, guidance and latency; the stopped one (and a withheld turn's
/// committed one) says it was withheld and why, and neither its text, its findings' messages nor
/// guidance written after it reach the page.
#[test]
fn rejected_attempts_are_listed_and_a_never_leak_attempt_is_withheld() {
    for seed in 1..=5u64 {
        let mut g = Gen::new(seed);
        let env = Env::new();
        let mut store = Store::open(&env.data_db()).unwrap();
        let run = new_run(&mut store, json!({}));
        // turn → (attempts not committed, index of the leaking one)
        let mut plan = BTreeMap::new();
        for turn in 1..=6u32 {
            plan.insert(turn, retried_turn(&mut store, &mut g, run, turn));
        }
        drop(store);
        let html = report(&env, &["--run", &run.to_string()]);
        assert!(
            !html.contains(SECRET),
            "seed {seed}: the secret is on the page"
        );
        for (turn, (retries, leak_at, withheld)) in plan {
            let r = row(&html, turn);
            let listed = retries + u32::from(withheld);
            assert_eq!(
                r.matches("<details class=\"attempt\">").count() as u32,
                listed,
                "seed {seed} turn {turn}: {r}"
            );
            for n in 1..=retries {
                let leaked_before = leak_at.is_some_and(|l| l < n);
                if leak_at == Some(n) {
                    assert!(
                        !r.contains(&format!("行{turn}-{n}")),
                        "seed {seed} turn {turn}"
                    );
                    assert!(
                        r.contains("a never-leak rule spoke on it (leak RETRY)"),
                        "{r}"
                    );
                } else {
                    assert!(
                        r.contains(&format!("行{turn}-{n}")),
                        "seed {seed} turn {turn} attempt {n}"
                    );
                    assert!(
                        r.contains(&format!("msg{turn}-{n}")),
                        "seed {seed} turn {turn} attempt {n}"
                    );
                    assert!(r.contains(&format!("latency {} ms", 100 * n + turn)), "{r}");
                }
                if n > 1 {
                    assert_eq!(
                        r.contains(&format!("guide{turn}-{n}")),
                        !leaked_before && leak_at != Some(n),
                        "seed {seed} turn {turn} attempt {n}: {r}"
                    );
                }
            }
            if withheld {
                assert!(!r.contains(&format!("漏れ{turn}")), "{r}");
                assert!(
                    r.contains("代わりの行") && r.contains("class=\"withheld\""),
                    "{r}"
                );
            }
        }
    }
}

/// A regeneration at turn r (generated over r): marks made before it on turns ≥ r are void —
/// a 👎 given to the old line is not shown on the new one — while earlier turns keep theirs,
/// and a mark made after it is shown. The dataset export's reading of the current lines agrees
/// with the report turn for turn.
#[test]
fn a_mark_made_before_a_regeneration_does_not_land_on_the_new_line() {
    for r in 1..=3u32 {
        let env = Env::new();
        let mut store = Store::open(&env.data_db()).unwrap();
        let run = new_run(&mut store, json!({}));
        for turn in 1..=3 {
            let id = plain(
                &mut store,
                run,
                turn,
                1,
                &format!("古い{turn}"),
                Status::Pass,
            );
            commit(
                &mut store,
                run,
                turn,
                id,
                &format!("古い{turn}"),
                Status::Pass,
                false,
            );
            thumb(&mut store, run, turn, "taro", false);
        }
        mark(&mut store, run, r, None, ActionKind::Regenerate, json!({}));
        assert!(store.branch_off(run, r).unwrap().is_some());
        for turn in r..=3 {
            let id = plain(
                &mut store,
                run,
                turn,
                2,
                &format!("新しい{turn}"),
                Status::Pass,
            );
            commit(
                &mut store,
                run,
                turn,
                id,
                &format!("新しい{turn}"),
                Status::Pass,
                false,
            );
        }
        thumb(&mut store, run, r, "hana", true);
        let rec = store.load_run(run).unwrap();
        let branches = store.branches(run).unwrap();
        let (lines, ambiguous) = kakeai::dataset::lines::read(&rec, &branches);
        assert!(!ambiguous);
        drop(store);
        let html = report(&env, &["--run", &run.to_string()]);
        for turn in 1..=3u32 {
            let row = row(&html, turn);
            let mut want = BTreeMap::new();
            if turn < r {
                want.insert("taro".to_string(), false);
            }
            if turn == r {
                want.insert("hana".to_string(), true);
            }
            assert_eq!(
                row.contains("taro</span> 👎"),
                want.contains_key("taro"),
                "r={r} turn {turn}: {row}"
            );
            assert_eq!(
                row.contains("hana</span> 👍"),
                want.contains_key("hana"),
                "r={r} turn {turn}: {row}"
            );
            let current = lines
                .iter()
                .find(|t| t.turn == turn)
                .and_then(|t| t.versions.iter().find(|v| v.current))
                .unwrap();
            assert_eq!(
                current.labels, want,
                "r={r} turn {turn}: the export reads it differently"
            );
        }
    }
}

/// The cells of each `<tr>` of the table `id`, tags stripped.
fn table_rows(html: &str, id: &str) -> Vec<Vec<String>> {
    let start = html
        .find(&format!("<table id=\"{id}\""))
        .unwrap_or_else(|| panic!("no table {id}"));
    let end = html[start..].find("</table>").unwrap() + start;
    html[start..end]
        .split("<tr")
        .skip(2)
        .map(|r| {
            r.split("<td")
                .skip(1)
                .map(|c| {
                    let c = &c[c.find('>').unwrap() + 1..];
                    let c = c.split("</td>").next().unwrap();
                    let mut out = String::new();
                    let mut tag = false;
                    for ch in c.chars() {
                        match ch {
                            '<' => tag = true,
                            '>' => tag = false,
                            c if !tag => out.push(c),
                            _ => {}
                        }
                    }
                    out
                })
                .collect()
        })
        .collect()
}

/// `lines` lines of run `run` reviewed against the vault `version`, some leaking `secret`:
/// how many leaked.
fn reviewed_lines(
    store: &mut Store,
    g: &mut Gen,
    run: i64,
    lines: usize,
    version: &str,
    secret: &str,
) -> usize {
    let mut leaked = 0;
    for i in 1..=lines as u32 {
        let turn = 2 * i;
        let mut findings = vec![
            json!({"rule": "leak", "status": "INFO", "message": "", "suggestion": "", "span": null, "evidence": format!("coverage {version} unchecked:")}),
        ];
        if g.chance(40) {
            leaked += 1;
            findings.push(json!({"rule": "leak", "status": "WARN", "message": "m", "suggestion": "", "span": [0, 1], "evidence": format!("keyword {secret}")}));
        }
        let id = attempt(
            store,
            run,
            turn,
            1,
            "あ",
            Status::Pass,
            json!(findings),
            None,
            10,
        );
        commit(store, run, turn, id, "あ", Status::Pass, false);
    }
    leaked
}

/// Two runs under the bundled vault, on different days, with generated numbers of lines (some
/// leaking a secret): the run report's and the period report's scorecards count their own runs'
/// lines only, never the other run's.
#[test]
fn the_scorecard_counts_the_reports_runs_only() {
    let dir = format!("{}/assets/vault/sisters", env!("CARGO_MANIFEST_DIR"));
    let work = kakeai::vault::load::open(Some(std::path::Path::new(&dir)), None).unwrap();
    let cur = kakeai::vault::scorecard::Current::of(&work);
    let (reader, secret, _) = cur.secrets.iter().find(|s| s.0 == "ayu").unwrap().clone();
    let version = cur.versions[&reader].clone();
    for seed in 1..=3u64 {
        let mut g = Gen::new(seed);
        let env = Env::new();
        let mut store = Store::open(&env.data_db()).unwrap();
        let mut counts = Vec::new();
        for (k, day) in ["2021-03-01T10:00:00Z", "2021-04-01T10:00:00Z"]
            .iter()
            .enumerate()
        {
            let run = new_run(
                &mut store,
                json!({"vault": {"dir": dir, "work": work.name}}),
            );
            store
                .db()
                .execute(
                    "UPDATE runs SET started_at = ?1 WHERE id = ?2",
                    kakeai::p![*day, run],
                )
                .unwrap();
            let lines = 1 + g.next(4) as usize + 3 * k;
            let leaked = reviewed_lines(&mut store, &mut g, run, lines, &version, &secret);
            counts.push((run, lines, leaked));
        }
        drop(store);
        let pages = [
            (
                report(&env, &["--run", &counts[0].0.to_string(), "--vault", &dir]),
                counts[0],
            ),
            (
                report(&env, &["--run", &counts[1].0.to_string(), "--vault", &dir]),
                counts[1],
            ),
            (
                report(&env, &["--since", "2021-04-01", "--vault", &dir]),
                counts[1],
            ),
            (
                report(
                    &env,
                    &[
                        "--since",
                        "2021-03-01",
                        "--until",
                        "2021-03-31",
                        "--vault",
                        &dir,
                    ],
                ),
                counts[0],
            ),
        ];
        for (i, (html, (_, lines, leaked))) in pages.iter().enumerate() {
            let rows = table_rows(html, "scorecard");
            let mine: Vec<&Vec<String>> = rows.iter().filter(|r| r[1] == "あゆ").collect();
            assert!(!mine.is_empty(), "seed {seed} page {i}: {rows:?}");
            for r in mine {
                assert_eq!(
                    r[6],
                    lines.to_string(),
                    "seed {seed} page {i}: reviewed {r:?}"
                );
                if r[0] == secret {
                    assert_eq!(
                        r[4],
                        leaked.to_string(),
                        "seed {seed} page {i}: leaked {r:?}"
                    );
                }
            }
        }
    }
}

/// A stored paired comparison with generated rows: `changes[i]` and texts per turn.
fn comparison(
    store: &mut Store,
    rows: &[(String, String, kakeai::compare::outcome::Change)],
) -> i64 {
    use kakeai::compare::outcome::{Side, TurnRow};
    let side = |text: &str, status: Status| Side {
        text: text.into(),
        status,
        exhausted: false,
        tone: 2,
        findings: vec![],
        judge: None,
        judge_mean: None,
        attempts: 1,
    };
    let id = kakeai::compare::db::create(
        store,
        &kakeai::compare::db::Header {
            kind: "paired".into(),
            baseline_run: None,
            variant_name: "v".into(),
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
    let mut stored = Vec::new();
    for (i, (a, b, change)) in rows.iter().enumerate() {
        let (sa, sb) = match change {
            kakeai::compare::outcome::Change::Better => (Status::Warn, Status::Pass),
            kakeai::compare::outcome::Change::Worse => (Status::Pass, Status::Warn),
            kakeai::compare::outcome::Change::Same => (Status::Pass, Status::Pass),
        };
        let row = TurnRow {
            turn: i + 1,
            speaker: speaker(i as u32 + 1).into(),
            a: side(a, sa),
            b: vec![side(b, sb)],
            change: *change,
            diff: kakeai::compare::outcome::diff(a, b),
        };
        kakeai::compare::db::add_turn(store, id, &row).unwrap();
        stored.push(row);
    }
    let s = kakeai::compare::outcome::summarise(&stored, 0.05, &[]);
    kakeai::compare::db::set_summary(store, id, &s).unwrap();
    id
}

/// The text of `html` with the pieces inside `<drop>…</drop>` removed and every tag stripped.
fn side_of(diff: &str, drop: &str) -> String {
    let mut s = diff.to_string();
    let (open, close) = (format!("<{drop}>"), format!("</{drop}>"));
    while let Some(a) = s.find(&open) {
        let b = s[a..].find(&close).unwrap() + a + close.len();
        s.replace_range(a..b, "");
    }
    s.replace("<del>", "")
        .replace("</del>", "")
        .replace("<ins>", "")
        .replace("</ins>", "")
}

/// Generated A/B lines around names: the diff is taken between the lines as shown (masked
/// whole), so its A side (equal + deleted) is exactly the A shown and its B side the B shown —
/// a piece masked on its own would invent a mask the line does not have — and no name shows.
#[test]
fn the_compare_diff_is_taken_between_the_masked_lines() {
    use kakeai::compare::outcome::Change;
    let names = ["山田太郎", "田中花子", "佐藤", "鈴木一郎", "山田"];
    let tails = [
        "さんと会った。",
        "さんが言っていた",
        "の家に行く",
        "くんも来る",
    ];
    let mut g = Gen::new(11);
    let mut rows = Vec::new();
    for _ in 0..24 {
        let a = format!("昨日{}{}", g.pick(&names), g.pick(&tails));
        let b = format!("今日は{}{}よ", g.pick(&names), g.pick(&tails));
        rows.push((a, b, Change::Same));
    }
    let env = Env::new();
    let mut store = Store::open(&env.data_db()).unwrap();
    let id = comparison(&mut store, &rows);
    drop(store);
    let html = report(&env, &["--compare", &id.to_string()]);
    for n in names {
        assert!(!html.contains(n), "{n} is on the page");
    }
    let mut at = 0;
    for i in 0..rows.len() {
        let ab = html[at..].find("<div class=\"ab\">").unwrap() + at;
        let a_start = html[ab..].find("<br>").unwrap() + ab + 4;
        let a_shown = &html[a_start..a_start + html[a_start..].find("</div>").unwrap()];
        let b_div = html[a_start..].find("<div>B ").unwrap() + a_start;
        let b_start = html[b_div..].find("<br>").unwrap() + b_div + 4;
        let b_shown = &html[b_start..b_start + html[b_start..].find("</div>").unwrap()];
        let d = html[b_start..].find("diff: ").unwrap() + b_start + 6;
        let diff = &html[d..d + html[d..].find("</p>").unwrap()];
        assert_eq!(side_of(diff, "ins"), a_shown, "turn {}: A", i + 1);
        assert_eq!(side_of(diff, "del"), b_shown, "turn {}: B", i + 1);
        at = d;
    }
}

/// A queue, its items refreshed.
fn queue(store: &mut Store, name: &str, filter: kakeai::annotate::Filter, comparison: Option<i64>) {
    let spec = kakeai::annotate::QueueSpec {
        name: name.into(),
        filter,
        k: 2,
        lease_ms: 60_000,
        overlap: true,
        comparison,
    };
    kakeai::annotate::db::create(store, &spec, None).unwrap();
    kakeai::annotate::adjudicate::disagreements(store, name).unwrap();
}

/// A pairwise queue over comparison `id` and the lead's gold labels on some of its turns:
/// (gold labels, how many agree with the majority of `want`).
fn pair_golds(
    store: &mut Store,
    g: &mut Gen,
    id: i64,
    want: &BTreeMap<u32, BTreeMap<&str, kakeai::annotate::pairwise::Choice>>,
) -> (usize, usize) {
    // A pairwise queue and the lead's gold labels on some turns.
    queue(store, "pair", Default::default(), Some(id));
    let (mut gold_n, mut agree) = (0, 0);
    for turn in 1..=8u32 {
        if g.chance(50) {
            let label = *g.pick(&["A", "B", "tie"]);
            kakeai::annotate::adjudicate::decide(store, "pair", (id, turn), label, "理由", "lead")
                .unwrap();
            gold_n += 1;
            let major = want
                .get(&turn)
                .and_then(|m| kakeai::report::gold::majority(m.values().map(|c| c.as_str())));
            agree += usize::from(major == Some(label));
        }
    }
    (gold_n, agree)
}

/// Generated outcomes and reviewers' pairwise choices: one outcome row per turn says which
/// side the comparison found better, each reviewer's choice and the majority; the lead's gold
/// labels are counted against it.
#[test]
fn the_compare_report_shows_per_turn_outcomes_and_choices() {
    use kakeai::annotate::pairwise::{Choice, judge};
    use kakeai::compare::outcome::Change;
    for seed in 1..=4u64 {
        let mut g = Gen::new(seed);
        let changes = [Change::Better, Change::Same, Change::Worse];
        let rows: Vec<(String, String, Change)> = (0..8)
            .map(|i| (format!("A{i}の行"), format!("B{i}の行"), *g.pick(&changes)))
            .collect();
        let env = Env::new();
        let mut store = Store::open(&env.data_db()).unwrap();
        let id = comparison(&mut store, &rows);
        let mut want: BTreeMap<u32, BTreeMap<&str, Choice>> = BTreeMap::new();
        for turn in 1..=8u32 {
            for who in ["hana", "taro", "ken"] {
                if g.chance(60) {
                    let c = *g.pick(&[Choice::A, Choice::B, Choice::Tie]);
                    judge(&mut store, id, turn, who, c, &format!("理由{turn}{who}")).unwrap();
                    want.entry(turn).or_default().insert(who, c);
                }
            }
        }
        let (gold_n, agree) = pair_golds(&mut store, &mut g, id, &want);
        drop(store);
        let html = report(&env, &["--compare", &id.to_string()]);
        let table = table_rows(&html, "outcomes");
        assert_eq!(table.len(), rows.len(), "seed {seed}");
        for (i, r) in table.iter().enumerate() {
            let turn = i as u32 + 1;
            let outcome = match rows[i].2 {
                Change::Better => "B better",
                Change::Same => "same",
                Change::Worse => "A better",
            };
            assert_eq!(r[2], outcome, "seed {seed} turn {turn}");
            let mine = want.get(&turn);
            let names: Vec<String> = mine
                .map(|m| {
                    m.iter()
                        .map(|(w, c)| format!("{w} {}", c.as_str()))
                        .collect()
                })
                .unwrap_or_default();
            let shown = if names.is_empty() {
                "—".to_string()
            } else {
                names.join(" · ")
            };
            assert_eq!(r[3], shown, "seed {seed} turn {turn}");
            let major =
                mine.and_then(|m| kakeai::report::gold::majority(m.values().map(|c| c.as_str())));
            assert_eq!(r[4], major.unwrap_or("—"), "seed {seed} turn {turn}");
            for (who, _) in mine.into_iter().flatten() {
                assert!(
                    html.contains(&format!("理由{turn}{who}")),
                    "seed {seed}: a reason is missing"
                );
            }
        }
        if gold_n > 0 {
            assert!(
                html.contains(&format!(
                    "{gold_n} of 8 turns have a gold label · {agree} agree"
                )),
                "seed {seed}"
            );
        }
    }
}

/// What one generated day holds.
#[derive(Default)]
struct Day {
    runs: usize,
    turns: usize,
    attempts: usize,
    labels: usize,
    fine: usize,
}

/// Six runs on generated days of May 2022, with retries and some 👍/👎: what each day holds.
fn runs_by_day(store: &mut Store, g: &mut Gen) -> BTreeMap<String, Day> {
    let mut want: BTreeMap<String, Day> = BTreeMap::new();
    for _ in 0..6 {
        let day = format!("2022-05-{:02}", 1 + g.next(4));
        let run = new_run(store, json!({}));
        store
            .db()
            .execute(
                "UPDATE runs SET started_at = ?1 WHERE id = ?2",
                kakeai::p![format!("{day}T09:00:00Z"), run],
            )
            .unwrap();
        let w = want.entry(day).or_default();
        w.runs += 1;
        for turn in 1..=(1 + g.next(3) as u32) {
            let tries = 1 + g.next(3) as u32;
            let mut id = 0;
            for n in 1..=tries {
                id = plain(store, run, turn, n, "行", Status::Pass);
            }
            commit(store, run, turn, id, "行", Status::Pass, false);
            w.turns += 1;
            w.attempts += tries as usize;
            if g.chance(40) {
                let up = g.chance(50);
                thumb(store, run, turn, "hana", up);
                w.labels += 1;
                w.fine += usize::from(up);
            }
        }
    }
    want
}

/// Runs on generated days with generated attempts, thumbs and judge scores: the period's trend
/// has, for every day, its number of runs, attempts per turn, share of 👍 (only on days with a
/// label — never a 0 for a day without) and judge mean; a legend names the four series.
#[test]
fn the_period_report_draws_a_trend_by_day() {
    for seed in 1..=3u64 {
        let mut g = Gen::new(seed);
        let env = Env::new();
        let mut store = Store::open(&env.data_db()).unwrap();
        let want = runs_by_day(&mut store, &mut g);
        drop(store);
        let html = report(&env, &["--since", "2022-05-01", "--until", "2022-05-31"]);
        let fig = {
            let s = html.find("<figure id=\"trend\"").expect("a trend figure");
            &html[s..s + html[s..].find("</figure>").unwrap()]
        };
        for name in ["ラン数", "試行/ターン", "👍の割合", "審査員平均"] {
            assert!(
                fig.contains(&format!("</i>{name}")),
                "seed {seed}: no legend for {name}"
            );
        }
        for (day, w) in &want {
            assert!(
                fig.contains(&format!("<title>{day} ラン数: {}</title>", w.runs)),
                "seed {seed} {day}"
            );
            let apt = w.attempts as f64 / w.turns as f64;
            assert!(
                fig.contains(&format!("<title>{day} 試行/ターン: {apt:.2}</title>")),
                "seed {seed} {day}"
            );
            let share = format!("<title>{day} 👍の割合: ");
            if w.labels == 0 {
                assert!(
                    !fig.contains(&share),
                    "seed {seed} {day}: a day without labels has a point"
                );
            } else {
                let p = format!("{:.0}%", w.fine as f64 * 100.0 / w.labels as f64);
                assert!(
                    fig.contains(&format!("{share}{p}</title>")),
                    "seed {seed} {day}"
                );
            }
            assert!(
                fig.contains(&format!("<title>{day} 審査員平均: 3.60</title>")),
                "seed {seed} {day}"
            );
        }
        assert_eq!(
            fig.matches("<rect").count(),
            want.len(),
            "seed {seed}: one bar a day"
        );
    }
}

/// A run of ten committed turns, each 👍/👎 by some of three reviewers: (run, labels per turn).
fn thumbed_run(store: &mut Store, g: &mut Gen) -> (i64, BTreeMap<u32, Vec<bool>>) {
    let run = new_run(store, json!({}));
    let mut labels: BTreeMap<u32, Vec<bool>> = BTreeMap::new();
    for turn in 1..=10u32 {
        let id = plain(store, run, turn, 1, "行", Status::Pass);
        commit(store, run, turn, id, "行", Status::Pass, false);
        for who in ["hana", "taro", "ken"] {
            if g.chance(60) {
                let up = g.chance(50);
                thumb(store, run, turn, who, up);
                labels.entry(turn).or_default().push(up);
            }
        }
    }
    (run, labels)
}

/// Generated reviewers' marks and gold labels from two turn queues (sometimes disagreeing): the
/// run report counts the turns with a gold label, how many agree with the reviewers' majority,
/// disagree or have none, and the conflicting ones apart; each gold label shows on its turn.
#[test]
fn gold_labels_are_counted_against_the_reviewers_majority() {
    use kakeai::annotate::adjudicate;
    for seed in 1..=4u64 {
        let mut g = Gen::new(seed);
        let env = Env::new();
        let mut store = Store::open(&env.data_db()).unwrap();
        let (run, labels) = thumbed_run(&mut store, &mut g);
        for name in ["q1", "q2"] {
            let filter = kakeai::annotate::Filter {
                runs: vec![run],
                ..Default::default()
            };
            queue(&mut store, name, filter, None);
        }
        let (mut gold, mut agree, mut disagree, mut none, mut conflict) = (0, 0, 0, 0, 0);
        let mut decided = BTreeSet::new();
        for turn in 1..=10u32 {
            if !g.chance(60) {
                continue;
            }
            let fine = g.chance(50);
            adjudicate::decide(
                &mut store,
                "q1",
                (run, turn),
                if fine { "fine" } else { "not" },
                "理由",
                "lead",
            )
            .unwrap();
            decided.insert(turn);
            if g.chance(20) {
                adjudicate::decide(
                    &mut store,
                    "q2",
                    (run, turn),
                    if fine { "not" } else { "fine" },
                    "別",
                    "lead2",
                )
                .unwrap();
                conflict += 1;
                continue;
            }
            gold += 1;
            match kakeai::report::gold::majority(labels.get(&turn).cloned().unwrap_or_default()) {
                Some(m) if m == fine => agree += 1,
                Some(_) => disagree += 1,
                None => none += 1,
            }
        }
        drop(store);
        let html = report(&env, &["--run", &run.to_string()]);
        if gold + conflict == 0 {
            assert!(
                html.contains("no turn of these runs has a gold label"),
                "seed {seed}"
            );
            continue;
        }
        let counts = format!(
            "{gold} of 10 turns have a gold label · {agree} agree with the reviewers' majority · \
             {disagree} disagree · {none} without a majority"
        );
        assert!(html.contains(&counts), "seed {seed}: want {counts}");
        assert_eq!(
            html.contains("where two queues' gold labels disagree"),
            conflict > 0,
            "seed {seed}"
        );
        for turn in 1..=10u32 {
            let r = row(&html, turn);
            assert_eq!(
                r.contains("class=\"gold"),
                decided.contains(&turn),
                "seed {seed} turn {turn}"
            );
        }
    }
}
