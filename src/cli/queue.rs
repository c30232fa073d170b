//! `kakeai queue`: shared review queues (issue 24 §2) — `create`, `list`, `next` (claim the
//! next item under a lease), `release`, `show` (progress per reviewer) and `watch` (the same,
//! redrawn as reviewers work), `adjudicate` (a lead's gold labels where reviewers disagree).
//! Exit 0 ok, 1 nothing left for you (`next`) or nothing to adjudicate, 2 bad input, 3 the
//! store cannot be reached, 4 it refused a write.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};
use serde_json::json;

use crate::annotate::{self, Filter, QueueSpec, db};
use crate::director::Status;
use crate::store::Store;

#[derive(Subcommand, Debug)]
pub enum QueueCommand {
    /// A named queue over committed turns: which verdicts, which sister, which runs.
    Create(CreateArgs),
    /// Every queue with its filter, k, lease and progress.
    List(StoreArgs),
    /// Claim your next item (the run and turn to open); exit 1 when nothing is left for you.
    Next(ClaimArgs),
    /// Give an item back before the lease ends (skip it).
    Release(ReleaseArgs),
    /// Judge an item from the command line: `--thumb up|down` (turn queues) or
    /// `--choice A|B|tie --reason …` (pairwise queues).
    Judge(JudgeArgs),
    /// Progress: items, done (k reviewers judged), held now, judged per reviewer.
    Show(ShowArgs),
    /// `show`, redrawn every second until ctrl-c (or N times with --times).
    Watch(WatchArgs),
    /// The queue's guidelines for its reviewers: a markdown file stored with the queue (shown by
    /// `show`, the workbench's queues room and the report); --clear removes them.
    Guidelines(GuidelinesArgs),
    /// For a lead: the items reviewers disagree on (exit 1 when none), or, with --turn
    /// --label --reason, an item's gold label.
    Adjudicate(AdjudicateArgs),
}

#[derive(Args, Debug)]
pub struct AdjudicateArgs {
    pub name: String,
    /// The run (the comparison, in a pairwise queue: may be left out)
    #[arg(long)]
    pub run: Option<i64>,
    #[arg(long)]
    pub turn: Option<u32>,
    /// The gold label: fine or not (turn queues), A, B or tie (pairwise queues)
    #[arg(long)]
    pub label: Option<String>,
    /// Why this label (required with --label)
    #[arg(long, default_value = "")]
    pub reason: String,
    /// The lead deciding
    #[arg(long, env = "KAKEAI_REVIEWER")]
    pub reviewer: Option<String>,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Debug)]
pub struct GuidelinesArgs {
    pub name: String,
    /// A markdown file (UTF-8) with the guidelines
    #[arg(long, conflicts_with = "clear", required_unless_present = "clear")]
    pub file: Option<PathBuf>,
    /// Remove the queue's guidelines
    #[arg(long)]
    pub clear: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Debug, Clone)]
pub struct StoreArgs {
    /// The run store: an SQLite file or a postgresql:// URL (default: kakeai.db in the data dir)
    #[arg(long, env = "KAKEAI_DB")]
    pub db: Option<PathBuf>,
    /// JSON instead of text
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct CreateArgs {
    pub name: String,
    /// Verdicts of the committed turn, comma-separated (e.g. RETRY,UNSCORED); default any
    #[arg(long, value_delimiter = ',')]
    pub status: Vec<String>,
    /// yana or ayu (やな, あゆ)
    #[arg(long)]
    pub sister: Option<String>,
    /// Runs started on or after (2026-11-23 or an ISO 8601 time, UTC)
    #[arg(long)]
    pub since: Option<String>,
    /// Runs started before this time; a date alone (2026-11-23) includes that whole day (UTC)
    #[arg(long)]
    pub until: Option<String>,
    /// Only these runs (comma-separated ids)
    #[arg(long, value_delimiter = ',')]
    pub run: Vec<i64>,
    /// Reviewers per item
    #[arg(long, default_value_t = 1)]
    pub k: u32,
    /// How long a claim holds an item (90s, 10m, 2h)
    #[arg(long, default_value = "10m")]
    pub lease: String,
    /// Every reviewer judges every item (k says when an item counts as done)
    #[arg(long)]
    pub overlap: bool,
    /// A pairwise queue over this paired comparison's turns (A better / B better / tie)
    #[arg(long, value_name = "ID")]
    pub compare: Option<i64>,
    #[arg(long, env = "KAKEAI_REVIEWER")]
    pub reviewer: Option<String>,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Debug)]
pub struct ClaimArgs {
    pub name: String,
    #[arg(long, env = "KAKEAI_REVIEWER")]
    pub reviewer: Option<String>,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Debug)]
pub struct JudgeArgs {
    pub name: String,
    /// The run (the comparison, in a pairwise queue: may be left out)
    #[arg(long)]
    pub run: Option<i64>,
    #[arg(long)]
    pub turn: u32,
    /// 👍 or 👎 (turn queues)
    #[arg(long, value_parser = ["up", "down"])]
    pub thumb: Option<String>,
    /// A, B or tie (pairwise queues)
    #[arg(long)]
    pub choice: Option<String>,
    /// Why (required for a pairwise choice)
    #[arg(long, default_value = "")]
    pub reason: String,
    #[arg(long, env = "KAKEAI_REVIEWER")]
    pub reviewer: Option<String>,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Debug)]
pub struct ReleaseArgs {
    pub name: String,
    /// The run (the comparison, in a pairwise queue)
    #[arg(long)]
    pub run: i64,
    #[arg(long)]
    pub turn: u32,
    #[arg(long, env = "KAKEAI_REVIEWER")]
    pub reviewer: Option<String>,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    pub name: String,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Debug)]
pub struct WatchArgs {
    pub name: String,
    /// Redraw this many times, then exit (default: until interrupted)
    #[arg(long)]
    pub times: Option<u32>,
    #[command(flatten)]
    pub store: StoreArgs,
}

pub fn run(cmd: QueueCommand) -> i32 {
    let out = match cmd {
        QueueCommand::Create(a) => create(&a),
        QueueCommand::List(a) => list(&a),
        QueueCommand::Next(a) => next(&a),
        QueueCommand::Release(a) => release(&a),
        QueueCommand::Judge(a) => judge(&a),
        QueueCommand::Show(a) => show(&a.name, &a.store).map(|t| {
            println!("{t}");
            0
        }),
        QueueCommand::Watch(a) => watch(&a),
        QueueCommand::Adjudicate(a) => adjudicate(&a),
        QueueCommand::Guidelines(a) => guidelines(&a),
    };
    out.unwrap_or_else(|Fail(e, code)| {
        eprintln!("kakeai queue: {}", crate::text::sanitize::for_terminal(&e));
        code
    })
}

/// Why a queue command failed, and its exit code (3: the PostgreSQL server cannot be
/// reached; 2 otherwise).
struct Fail(String, i32);

impl From<String> for Fail {
    fn from(e: String) -> Fail {
        Fail(e, 2)
    }
}

impl From<&str> for Fail {
    fn from(e: &str) -> Fail {
        Fail(e.to_string(), 2)
    }
}

/// A queue or store error with its exit code: 3 the store cannot be reached, 4 it refused a
/// write (a read-only role), else 2.
fn fail(e: impl Into<annotate::QueueError>) -> Fail {
    let e = e.into();
    let code = match &e {
        annotate::QueueError::Store(s) => s.exit_code(),
        _ => 2,
    };
    Fail(e.to_string(), code)
}

/// The store file, or a PostgreSQL database (every queue query runs on both engines).
fn open(a: &StoreArgs, create: bool) -> Result<Store, Fail> {
    Store::open_existing(a.db.as_deref(), create).map_err(|(e, code)| Fail(e, code))
}

fn now_ms() -> i64 {
    crate::patterns::stamp::now_ms()
}

fn create(a: &CreateArgs) -> Result<i32, Fail> {
    let statuses = a
        .status
        .iter()
        .map(|s| {
            Status::parse(&s.trim().to_uppercase())
                .ok_or_else(|| format!("--status {s}: one of PASS, WARN, RETRY, MODIFY, UNSCORED"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let sister = a.sister.as_deref().map(|s| match s {
        "やな" => "yana".to_string(),
        "あゆ" => "ayu".to_string(),
        s => s.to_string(),
    });
    let when = |flag: &str, v: &Option<String>| {
        v.as_deref()
            .map(|s| annotate::parse_when(flag, s))
            .transpose()
            .map_err(fail)
    };
    let spec = QueueSpec {
        name: a.name.clone(),
        filter: Filter {
            statuses,
            sister,
            since: when("--since", &a.since)?,
            until: when("--until", &a.until)?,
            runs: a.run.clone(),
        },
        k: a.k,
        lease_ms: annotate::parse_lease(&a.lease).map_err(fail)?,
        overlap: a.overlap,
        comparison: a.compare,
    };
    spec.validate().map_err(fail)?;
    let mut store = open(&a.store, true)?;
    let id = db::create(&mut store, &spec, a.reviewer.as_deref()).map_err(fail)?;
    let p = db::progress(&mut store, &spec.name, now_ms()).map_err(fail)?;
    if a.store.json {
        println!("{}", json!({"id": id, "name": spec.name, "items": p.items}));
    } else {
        println!("queue {} created: {} item(s) now", spec.name, p.items);
    }
    Ok(0)
}

fn list(a: &StoreArgs) -> Result<i32, Fail> {
    let mut store = open(a, false)?;
    let queues = db::list(store.db()).map_err(fail)?;
    let mut rows = Vec::new();
    for q in &queues {
        let p = db::progress(&mut store, &q.spec.name, now_ms()).map_err(fail)?;
        rows.push((q, p));
    }
    if a.json {
        let v: Vec<_> = rows
            .iter()
            .map(|(q, p)| {
                json!({"name": q.spec.name, "filter": q.spec.filter, "k": q.spec.k,
                       "lease_s": q.spec.lease_ms / 1000, "overlap": q.spec.overlap,
                       "items": p.items, "done": p.done, "held": p.held,
                       "per_reviewer": p.per_reviewer})
            })
            .collect();
        println!("{}", serde_json::Value::Array(v));
        return Ok(0);
    }
    if rows.is_empty() {
        println!("no queues yet (kakeai queue create NAME --status RETRY,UNSCORED …)");
    }
    for (q, p) in rows {
        println!(
            "{}  {}  k={}{}  lease {} s  {}/{} done",
            q.spec.name,
            q.spec.filter.describe(),
            q.spec.k,
            if q.spec.overlap { " overlap" } else { "" },
            q.spec.lease_ms / 1000,
            p.done,
            p.items
        );
    }
    Ok(0)
}

/// `--reviewer` checked (`annotate::reviewer_name`): printable and bounded.
fn reviewer(r: &Option<String>) -> Result<String, String> {
    annotate::reviewer_name(r.as_deref().unwrap_or("")).map_err(|e| e.to_string())
}

fn next(a: &ClaimArgs) -> Result<i32, Fail> {
    let me = reviewer(&a.reviewer)?;
    let mut store = open(&a.store, false)?;
    let claim = db::claim(&mut store, &a.name, &me, now_ms()).map_err(fail)?;
    let Some(c) = claim else {
        if a.store.json {
            println!("{}", json!({"item": null}));
        } else {
            println!("nothing left for {me} in {}", a.name);
        }
        return Ok(1);
    };
    let secs = (c.until_ms - now_ms()).max(0) / 1000;
    if a.store.json {
        let key = if c.pairwise { "comparison" } else { "run_id" };
        println!(
            "{}",
            json!({"item": {key: c.subject, "turn": c.turn, "speaker": c.speaker,
                            "lease_until_ms": c.until_ms}})
        );
    } else if c.pairwise {
        println!(
            "comparison {} turn {} ({}) — yours for {secs} s",
            c.subject, c.turn, c.speaker
        );
        print_pair(&store, c.subject, c.turn);
        println!(
            "judge: kakeai queue judge {} --turn {} --choice A|B|tie --reason …",
            a.name, c.turn
        );
    } else {
        print!("{}", claim_hint(&a.name, &c, secs));
    }
    Ok(0)
}

/// What a turn-queue claim prints: the item, then each next step as a whole command on its own
/// line (copied as it is, with no quote or punctuation stuck to it).
fn claim_hint(queue: &str, c: &db::Claim, secs: i64) -> String {
    let (run, turn) = (c.subject, c.turn);
    format!(
        "run {run} turn {turn} ({}) — yours for {secs} s\n  \
         open:      kakeai --replay {run}\n  \
         judge:     kakeai queue judge {queue} --run {run} --turn {turn} --thumb up|down\n  \
         give back: kakeai queue release {queue} --run {run} --turn {turn}\n",
        c.speaker
    )
}

/// A's and B's lines of one compared turn, for a reviewer at a terminal.
fn print_pair(store: &Store, comparison: i64, turn: u32) {
    let Ok(Some(s)) = crate::compare::db::load(store, comparison) else {
        return;
    };
    if let Some(row) = s.turns.iter().find(|r| r.turn == turn as usize) {
        let clean = |t: &str| crate::text::sanitize::for_terminal(t).into_owned();
        println!("  A: {}", clean(&row.a.text));
        for (i, b) in row.b.iter().enumerate() {
            println!(
                "  B{}: {}",
                if row.b.len() > 1 {
                    (i + 1).to_string()
                } else {
                    String::new()
                },
                clean(&b.text)
            );
        }
    }
}

fn judge(a: &JudgeArgs) -> Result<i32, Fail> {
    let me = reviewer(&a.reviewer)?;
    let mut store = open(&a.store, false)?;
    let q = db::get(store.db(), &a.name).map_err(fail)?;
    match (q.spec.comparison, &a.choice, &a.thumb) {
        (Some(c), Some(choice), None) => {
            let choice = annotate::pairwise::Choice::parse(choice)
                .ok_or_else(|| format!("--choice {choice}: A, B or tie"))?;
            if a.reason.trim().is_empty() {
                return Err("a pairwise choice needs --reason (what made it better)".into());
            }
            if a.run.is_some_and(|r| r != c) {
                return Err(format!("queue {} is over comparison {c}", a.name).into());
            }
            db::may_judge(&mut store, &a.name, &me, (c, a.turn), now_ms()).map_err(fail)?;
            annotate::pairwise::judge(&mut store, c, a.turn, &me, choice, &a.reason)
                .map_err(fail)?;
            println!(
                "{me}: {} on comparison {c} turn {} · saved ✓",
                choice.as_str(),
                a.turn
            );
        }
        (None, None, Some(thumb)) => {
            let run = a.run.ok_or("--run is needed in a turn queue")?;
            db::may_judge(&mut store, &a.name, &me, (run, a.turn), now_ms()).map_err(fail)?;
            let up = thumb == "up";
            store
                .add_action_by(
                    &crate::store::NewAction {
                        run_id: run,
                        turn: Some(a.turn),
                        attempt_id: None,
                        kind: crate::store::ActionKind::Thumb,
                        payload: json!({"up": up}),
                    },
                    Some(&me),
                )
                .map_err(fail)?;
            println!(
                "{me}: {} on run {run} turn {} · saved ✓",
                if up { "👍" } else { "👎" },
                a.turn
            );
        }
        (Some(_), _, _) => return Err("a pairwise queue takes --choice A|B|tie --reason …".into()),
        (None, _, _) => return Err("a turn queue takes --thumb up|down (--run R --turn T)".into()),
    }
    Ok(0)
}

fn release(a: &ReleaseArgs) -> Result<i32, Fail> {
    let me = reviewer(&a.reviewer)?;
    let mut store = open(&a.store, false)?;
    let held = db::release(&mut store, &a.name, &me, (a.run, a.turn)).map_err(fail)?;
    if held {
        println!("released run {} turn {}", a.run, a.turn);
        Ok(0)
    } else {
        Err(format!(
            "{me} holds no lease on run {} turn {} in {}",
            a.run, a.turn, a.name
        )
        .into())
    }
}

fn show(name: &str, a: &StoreArgs) -> Result<String, Fail> {
    let mut store = open(a, false)?;
    let q = db::get(store.db(), name).map_err(fail)?;
    let p = db::progress(&mut store, name, now_ms()).map_err(fail)?;
    let alpha = db::agreement(store.db(), &q).map_err(fail)?;
    let pace = annotate::team::pace(store.db(), &q, now_ms()).map_err(fail)?;
    let rules = annotate::team::guidelines(store.db(), name).map_err(fail)?;
    if a.json {
        let pace: serde_json::Map<_, _> = pace
            .iter()
            .map(|(who, p)| {
                (
                    who.clone(),
                    json!({"per_hour": p.per_hour(), "last_hour": p.last_hour,
                                     "first_ms": p.first_ms, "last_ms": p.last_ms}),
                )
            })
            .collect();
        return Ok(
            json!({"name": name, "items": p.items, "done": p.done, "held": p.held,
                   "k": q.spec.k, "per_reviewer": p.per_reviewer, "pace": pace,
                   "guidelines": rules,
                   "alpha": alpha.and_then(|x| x.alpha),
                   "alpha_items": alpha.map_or(0, |x| x.units)})
            .to_string(),
        );
    }
    let mut t = format!(
        "{name}: {}\n{} item(s) · {} done (k = {}) · {} held now",
        q.spec.filter.describe(),
        p.items,
        p.done,
        q.spec.k,
        p.held
    );
    for (who, n) in &p.per_reviewer {
        let pace = pace.get(who).copied().unwrap_or_default();
        // A name stored before names were checked is printed without its controls.
        let who = crate::text::sanitize::for_terminal(who).replace(['\n', '\t'], " ");
        t.push_str(&format!("\n  {who}: {n} judged · {}", pace.describe()));
    }
    t.push_str(&format!(
        "\nagreement across reviewers: {}",
        annotate::alpha::describe(alpha)
    ));
    let split = annotate::adjudicate::disagreements(&mut store, name).map_err(fail)?;
    if !split.is_empty() {
        let decided = split.iter().filter(|d| d.gold.is_some()).count();
        t.push_str(&format!(
            "\n{} item(s) the reviewers disagree on · {decided} with a gold label (`kakeai queue adjudicate {name}`)",
            split.len()
        ));
    }
    match rules {
        Some(r) => {
            t.push_str("\nguidelines:");
            for l in crate::text::sanitize::for_terminal(&r).lines() {
                t.push_str(&format!("\n  │ {l}"));
            }
        }
        None => t.push_str(&format!(
            "\nno guidelines yet (`kakeai queue guidelines {name} --file GUIDE.md`)"
        )),
    }
    Ok(t)
}

fn guidelines(a: &GuidelinesArgs) -> Result<i32, Fail> {
    let text = match &a.file {
        Some(f) => Some(std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?),
        None => None,
    };
    if let (Some(f), Some(t)) = (&a.file, &text) {
        annotate::team::check_guidelines(t).map_err(|e| {
            // "GUIDE.md:3:7: …" for a place in the file, "GUIDE.md: …" for the whole of it.
            let e = e.to_string();
            let sep = if e.starts_with(|c: char| c.is_ascii_digit()) {
                ":"
            } else {
                ": "
            };
            format!("{}{sep}{e}", f.display())
        })?;
    }
    let mut store = open(&a.store, false)?;
    annotate::team::set_guidelines(&mut store, &a.name, text.as_deref()).map_err(fail)?;
    match text {
        Some(t) => println!(
            "guidelines of {} saved ✓ ({} characters)",
            a.name,
            t.chars().count()
        ),
        None => println!("guidelines of {} removed", a.name),
    }
    Ok(0)
}

fn adjudicate(a: &AdjudicateArgs) -> Result<i32, Fail> {
    use annotate::adjudicate as adj;
    let mut store = open(&a.store, false)?;
    let q = db::get(store.db(), &a.name).map_err(fail)?;
    if let (Some(turn), Some(label)) = (a.turn, &a.label) {
        let lead = reviewer(&a.reviewer)?;
        let subject = match (q.spec.comparison, a.run) {
            (Some(c), None) => c,
            (_, Some(r)) => r,
            (None, None) => return Err("--run is needed in a turn queue".into()),
        };
        adj::decide(
            &mut store,
            &a.name,
            (subject, turn),
            label,
            &a.reason,
            &lead,
        )
        .map_err(fail)?;
        println!("gold label {label} on {subject} turn {turn} · saved ✓ ({lead})");
        return Ok(0);
    }
    if a.turn.is_some() || a.label.is_some() {
        return Err("a gold label takes --turn T --label L --reason … (and --run R)".into());
    }
    let list = adj::disagreements(&mut store, &a.name).map_err(fail)?;
    let clean = |t: &str| crate::text::sanitize::for_terminal(t).replace(['\n', '\t'], " ");
    if a.store.json {
        let items: Vec<_> = list
            .iter()
            .map(|d| {
                json!({"subject": d.item.0, "turn": d.item.1, "labels": d.labels,
                       "gold": d.gold.as_ref().map(|g| json!({"label": g.label,
                           "reason": g.reason, "by": g.by, "at": g.at}))})
            })
            .collect();
        println!("{}", json!({"queue": a.name, "disagreements": items}));
    } else if list.is_empty() {
        println!("{}: no item the reviewers disagree on", a.name);
    }
    if !a.store.json {
        for d in &list {
            let labels: Vec<String> = d
                .labels
                .iter()
                .map(|(who, l)| format!("{}: {l}", clean(who)))
                .collect();
            let gold = match &d.gold {
                Some(g) => format!(
                    " — gold {} ({}: {})",
                    g.label,
                    clean(&g.by),
                    clean(&g.reason)
                ),
                None => format!(
                    " — decide: kakeai queue adjudicate {} --run {} --turn {} --label {} --reason …",
                    a.name,
                    d.item.0,
                    d.item.1,
                    annotate::adjudicate::labels(&q).join("|")
                ),
            };
            println!(
                "{} turn {}: {}{gold}",
                d.item.0,
                d.item.1,
                labels.join(" · ")
            );
        }
    }
    Ok(if list.is_empty() { 1 } else { 0 })
}

fn watch(a: &WatchArgs) -> Result<i32, Fail> {
    let mut shown = 0;
    loop {
        let t = show(&a.name, &a.store)?;
        println!("{}\n", crate::store::time::now_iso());
        println!("{t}\n");
        shown += 1;
        if a.times.is_some_and(|n| shown >= n) {
            return Ok(0);
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command in the hint is a whole line after its label: run as it is, it parses
    /// (no stray quote, comma or space of the sentence around it).
    #[test]
    fn the_claim_hint_gives_commands_that_parse_as_they_are() {
        for (queue, run, turn) in [("retry-ayu", 4, 2), ("q", 123_456, 1), ("あゆ-週末", 9, 30)]
        {
            let c = db::Claim {
                subject: run,
                pairwise: false,
                turn,
                speaker: "ayu".into(),
                until_ms: 0,
            };
            let hint = claim_hint(queue, &c, 600);
            assert!(hint.starts_with(&format!("run {run} turn {turn} (ayu) — yours for 600 s\n")));
            let cmds: Vec<&str> = hint
                .lines()
                .filter_map(|l| l.split_once(": ").map(|(_, c)| c.trim_start()))
                .collect();
            assert_eq!(cmds.len(), 3, "{hint}");
            assert_eq!(cmds[0], format!("kakeai --replay {run}"));
            for cmd in &cmds[1..] {
                let cmd = cmd.replace("up|down", "up");
                let args: Vec<&str> = cmd.split(' ').collect();
                assert_eq!(args[0], "kakeai");
                let parsed = <crate::cli::Cli as clap::Parser>::try_parse_from(&args);
                assert!(parsed.is_ok(), "{cmd}: {:?}", parsed.err());
            }
            assert!(!hint.contains('`') && !hint.contains(" ,"), "{hint}");
        }
    }
}
