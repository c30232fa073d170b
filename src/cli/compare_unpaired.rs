//! `kakeai compare --topics FILE --variant A.toml --variant B.toml --runs N`: both variants run
//! from scratch on every topic (one per line, `#` comments), N runs each, stored as ordinary
//! runs (`options.compare`, `options.side`), then compared as distributions with 95 % intervals
//! (see `compare::unpaired`). Exit 0, 2 bad input, 3 endpoint failed.

use std::time::Duration;

use serde_json::json;

use super::compare::{CompareArgs, OutFormat, fail, open_vault};
use super::progress::{Progress, Unit};
use crate::compare::db::{self, Header};
use crate::compare::outcome::Side;
use crate::compare::unpaired::{Dist, Unpaired, dist};
use crate::compare::{EXIT_BAD_INPUT, EXIT_ENDPOINT, EXIT_OK, Variant};
use crate::director::{RuleSet, Status};
use crate::duo::backend::Backend;
use crate::duo::driver::{Driver, Notice, run_record};
use crate::duo::{
    AttemptRecord, DuoConfig, Effect, Exhaustion, RunEnd, RunSpec, Session, TurnRecord,
};
use crate::llm::{Client, LlmConfig};
use crate::store::{Store, StoreHandle};
use crate::text::analyzer;

pub fn run(args: &CompareArgs, mut store: Store) -> i32 {
    let Some(path) = &args.topics else {
        return fail(EXIT_BAD_INPUT, "--topics FILE");
    };
    let topics: Vec<String> = match crate::limits::read_string(path) {
        Ok(t) => t
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_string)
            .collect(),
        Err(e) => return fail(EXIT_BAD_INPUT, format!("{}: {e}", path.display())),
    };
    if topics.is_empty() || args.runs == 0 {
        return fail(EXIT_BAD_INPUT, "need at least one topic and --runs ≥ 1");
    }
    let [pa, pb] = args.variant.as_slice() else {
        return fail(
            EXIT_BAD_INPUT,
            "unpaired mode takes --variant A.toml --variant B.toml",
        );
    };
    let (va, vb) = match (Variant::load(pa), Variant::load(pb)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return fail(EXIT_BAD_INPUT, e),
    };
    let base = match (RuleSet::load(None), DuoConfig::load(), LlmConfig::load()) {
        (Ok(r), Ok(d), Ok(l)) => (r, d, l),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return fail(EXIT_BAD_INPUT, e),
    };
    let mut sides = Vec::new();
    for v in [&va, &vb] {
        let mut ap = match v.apply(&base.0, &base.1, &base.2) {
            Ok(a) => a,
            Err(e) => return fail(EXIT_BAD_INPUT, e),
        };
        ap.llm = ap
            .llm
            .with_flags(args.endpoint.clone(), args.model.clone(), None);
        let vault = match open_vault(v) {
            Ok(x) => x,
            Err(e) => return fail(EXIT_BAD_INPUT, e),
        };
        sides.push((ap, vault));
    }
    let analyzer = match analyzer::open(args.analyzer, &mut |m| eprintln!("{m}")) {
        Ok(a) => a,
        Err(e) => return fail(EXIT_BAD_INPUT, e),
    };
    let header = Header {
        kind: "unpaired".into(),
        baseline_run: None,
        variant_name: format!("{} vs {}", va.name, vb.name),
        variant_path: Some(format!("{} {}", pa.display(), pb.display())),
        variant_text: format!("{}\n# ---- B ----\n{}", va.text, vb.text),
        variant_hash: format!("{}/{}", va.hash, vb.hash),
        model: Some(sides[1].0.llm.model.clone()),
        endpoint: Some(sides[1].0.llm.endpoint.clone()),
        options: json!({"topics": topics, "runs": args.runs}),
        sample_runs: Vec::new(),
    };
    let id = match db::create(&mut store, &header) {
        Ok(id) => id,
        Err(e) => return fail(EXIT_BAD_INPUT, e),
    };
    let handle = StoreHandle::spawn(store);
    let rt = match crate::duo::driver::runtime() {
        Ok(rt) => rt,
        Err(e) => return fail(EXIT_BAD_INPUT, e),
    };
    let total = (2 * topics.len() * args.runs) as u64;
    let shown = Progress::start("compare", Some(total), Unit::Items("runs"), args.progress);
    rt.block_on(async {
        let mut dists: Vec<Dist> = Vec::new();
        let mut all_runs = Vec::new();
        for (label, (ap, vault)) in ["A", "B"].iter().zip(&sides) {
            let client = match Client::new(ap.llm.clone()) {
                Ok(c) => c,
                Err(e) => return fail(EXIT_BAD_INPUT, e),
            };
            if let Some(v) = vault {
                crate::vault::semantic::judge_with(v, &client);
            }
            let info = match client.ensure_model().await {
                Ok(i) => i,
                Err(e) => return fail(EXIT_ENDPOINT, e),
            };
            let cfg = client.config().clone();
            let mut lines: Vec<Side> = Vec::new();
            let mut runs = 0;
            for topic in &topics {
                for k in 1..=args.runs {
                    let spec = RunSpec {
                        topic: topic.clone(),
                        max_turns: args.turns.unwrap_or(ap.duo.max_turns).max(1),
                        max_attempts: ap.duo.max_attempts,
                        exhaustion: match ap.duo.exhaustion {
                            Exhaustion::Hold => Exhaustion::Best,
                            e => e,
                        },
                        judge: true,
                    };
                    let session = Session::new(spec.clone(), ap.duo.clone(), ap.rules.clone());
                    let new = run_record(
                        &spec,
                        &session,
                        (
                            cfg.endpoint.clone(),
                            cfg.model.clone(),
                            info.api.to_string(),
                        ),
                        Some(&cfg),
                        json!({"compare": id, "side": label, "sample": k}),
                    );
                    let run_id = match handle.call(move |s| s.create_run(&new)).await {
                        Ok(r) => r,
                        Err(e) => return fail(EXIT_BAD_INPUT, e),
                    };
                    all_runs.push(run_id);
                    let driver = Driver {
                        backend: Backend::Live(client.clone()),
                        store: handle.clone(),
                        analyzer: analyzer.clone(),
                        run_id,
                        save_every: Duration::from_millis(500),
                        vault: vault.clone(),
                    };
                    let mut done: Vec<AttemptRecord> = Vec::new();
                    let mut turns: Vec<TurnRecord> = Vec::new();
                    let mut error = None;
                    let mut sink = |n: Notice<'_>| match n {
                        Notice::Effect(Effect::AttemptDone(a)) => done.push((**a).clone()),
                        Notice::Effect(Effect::TurnCommitted(t)) => turns.push((**t).clone()),
                        Notice::Effect(Effect::AttemptFailed { error: e, .. }) => {
                            error = Some(e.clone())
                        }
                        Notice::StoreError(e) => error = Some(e),
                        _ => {}
                    };
                    let end = driver.drive(session, None, &mut sink).await;
                    if end == RunEnd::Failed {
                        return fail(EXIT_ENDPOINT, error.unwrap_or_else(|| "run failed".into()));
                    }
                    runs += 1;
                    shown.inc(1);
                    shown.line(&format!(
                        "{label} run {run_id}: 「{topic}」 #{k}: {} turns, {} RETRY",
                        turns.len(),
                        done.iter()
                            .filter(|a| a.verdict.status == Status::Retry)
                            .count()
                    ));
                    for t in &turns {
                        let of_turn: Vec<&AttemptRecord> =
                            done.iter().filter(|a| a.turn == t.turn).collect();
                        let judge = of_turn
                            .iter()
                            .find(|a| a.attempt == t.attempt)
                            .and_then(|a| a.judge.clone());
                        lines.push(Side::new(
                            &t.text,
                            &t.verdict,
                            judge.as_ref(),
                            t.flags.exhausted,
                            of_turn.len(),
                        ));
                    }
                }
            }
            dists.push(dist(&lines, runs));
        }
        shown.finish();
        let b = dists.pop().expect("two sides");
        let a = dists.pop().expect("two sides");
        let result = Unpaired {
            topics: topics.clone(),
            runs_per_topic: args.runs,
            a,
            b,
        };
        let r2 = result.clone();
        let saved = handle
            .call(move |s| {
                db::set_sample_runs(s, id, &all_runs)?;
                db::set_summary(s, id, &r2)
            })
            .await;
        if let Err(e) = saved {
            return fail(EXIT_BAD_INPUT, e);
        }
        match args.format {
            OutFormat::Json => {
                let out = json!({"comparison": {"id": id, "kind": "unpaired"}, "unpaired": result});
                println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
            }
            OutFormat::Table | OutFormat::Md => print!("{}", table(&result)),
        }
        EXIT_OK
    })
}

fn table(u: &Unpaired) -> String {
    let mut out = format!(
        "unpaired: {} topics × {} runs per side\n",
        u.topics.len(),
        u.runs_per_topic
    );
    let row = |name: &str,
               a: Option<&crate::compare::unpaired::Rate>,
               b: Option<&crate::compare::unpaired::Rate>| {
        let f = |r: Option<&crate::compare::unpaired::Rate>| match r {
            Some(r) => format!("{:.2} [{:.2}, {:.2}]", r.rate, r.ci95[0], r.ci95[1]),
            None => "0.00".into(),
        };
        format!("{name:<20} A {:<22} B {}\n", f(a), f(b))
    };
    for k in ["PASS", "WARN", "RETRY", "exhausted"] {
        out.push_str(&row(k, u.a.verdicts.get(k), u.b.verdicts.get(k)));
    }
    let mut rules: Vec<&String> = u.a.rules.keys().chain(u.b.rules.keys()).collect();
    rules.sort();
    rules.dedup();
    for k in rules {
        out.push_str(&row(
            &format!("rule {k}"),
            u.a.rules.get(k),
            u.b.rules.get(k),
        ));
    }
    let m = |x: &Option<crate::compare::unpaired::Mean>| match x {
        Some(m) => format!("{:.2} [{:.2}, {:.2}]", m.mean, m.ci95[0], m.ci95[1]),
        None => "-".into(),
    };
    out.push_str(&format!(
        "{:<20} A {:<22} B {}\n",
        "judge mean",
        m(&u.a.judge_mean),
        m(&u.b.judge_mean)
    ));
    out.push_str(&format!(
        "{:<20} A {:<22} B {}\n",
        "attempts per turn",
        m(&u.a.attempts),
        m(&u.b.attempts)
    ));
    out
}
