//! `kakeai analyze --interview NAME | --run ID | --feedback [--format json|table]`: keywords,
//! themes and insight cards. Exit 0 when everything asked for was analysed, 3 when some
//! interview's themes could not be had (it is reported and stays queued as `not_analysed`),
//! 2 on usage errors, 4 when the store could not be written.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use serde_json::json;

use crate::insight::{Card, Deck, analyze, feedback, store as cstore};
use crate::llm::{ApiKind, Client, LlmConfig};
use crate::store::{Store, StoreHandle};
use crate::text::analyzer::{self, AnalyzerChoice};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Json,
    Table,
}

#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["interview", "run", "feedback"])))]
pub struct AnalyzeArgs {
    /// Finished interviews of this name (their cards: scope `interview:NAME`).
    #[arg(long)]
    pub interview: Option<String>,
    /// Reviewers' feedback notes and overrides of one duo run.
    #[arg(long)]
    pub run: Option<i64>,
    /// Reviewers' feedback notes and overrides across all duo runs (scope `feedback`).
    #[arg(long)]
    pub feedback: bool,
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,
    #[arg(long)]
    pub endpoint: Option<String>,
    #[arg(long)]
    pub model: Option<String>,
    #[arg(long, value_enum)]
    pub api: Option<ApiKind>,
    #[arg(long, env = "KAKEAI_DB")]
    pub db: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "auto", env = "KAKEAI_ANALYZER")]
    pub analyzer: AnalyzerChoice,
}

/// A card as printed: its fields plus confidence and label.
pub fn card_json(c: &Card) -> serde_json::Value {
    json!({
        "theme": c.theme, "jtbd": c.jtbd, "summary": c.summary, "severity": c.severity,
        "freq": c.freq, "evidence": c.quotes.len(), "quotes": c.quotes, "sources": c.sources,
        "confidence": (c.confidence() * 1000.0).round() / 1000.0, "label": c.label().as_str(),
    })
}

fn table(deck: &Deck, keywords: &[crate::insight::Keyword]) -> String {
    let mut s = String::new();
    if !keywords.is_empty() {
        s.push_str("keywords: ");
        let k: Vec<String> = keywords
            .iter()
            .map(|k| format!("{} ({:.1}×{})", k.phrase, k.score, k.count))
            .collect();
        s.push_str(&k.join(", "));
        s.push_str("\n\n");
    }
    s.push_str("label  conf   sev     freq  quotes  theme — jtbd\n");
    for c in deck.ranked() {
        s.push_str(&format!(
            "{:<6} {:<6.2} {:<7} {:>4}  {:>6}  {} — {}\n",
            c.label().as_str(),
            c.confidence(),
            c.severity.as_str(),
            c.freq,
            c.quotes.len(),
            crate::text::sanitize::for_terminal(&c.theme),
            crate::text::sanitize::for_terminal(&c.jtbd),
        ));
        for q in c.quotes.iter().take(3) {
            s.push_str(&format!(
                "         「{}」\n",
                crate::text::sanitize::for_terminal(q)
            ));
        }
    }
    s
}

pub fn run(args: AnalyzeArgs) -> i32 {
    let fail = |code: i32, msg: String| {
        eprintln!("kakeai analyze: {msg}");
        code
    };
    let analyzer = match analyzer::open(args.analyzer, &mut |m| eprintln!("{m}")) {
        Ok(a) => a,
        Err(e) => return fail(2, e.to_string()),
    };
    let store = match Store::open_or_default(args.db.as_deref()) {
        Ok(s) => StoreHandle::spawn(s),
        Err(e) => return fail(2, e),
    };
    let rt = match crate::duo::driver::runtime() {
        Ok(rt) => rt,
        Err(e) => return fail(2, format!("cannot start the async runtime: {e}")),
    };
    rt.block_on(async move {
        let (out, code) = if let Some(name) = args.interview.clone() {
            let llm = match LlmConfig::load() {
                Ok(c) => c.with_flags(args.endpoint.clone(), args.model.clone(), args.api),
                Err(e) => return fail(2, e.to_string()),
            };
            let client = Client::new(llm).ok();
            let r = match analyze::interviews(&store, client.as_ref(), analyzer, name).await {
                Ok(r) => r,
                Err(e) => return fail(crate::store::write::EXIT_STORE, e.to_string()),
            };
            // A missing interview is an error, as a missing run is everywhere.
            if r.interviews == 0 {
                return fail(2, format!("no finished interviews in {}", r.scope));
            }
            for s in &r.not_analysed {
                eprintln!(
                    "kakeai analyze: interview {} not analysed: {}",
                    s.interview_id,
                    crate::text::sanitize::for_terminal(&s.reason)
                );
            }
            let code = if r.not_analysed.is_empty() { 0 } else { 3 };
            let out = match args.format {
                Format::Json => json!({
                    "scope": r.scope, "interviews": r.interviews, "analysed": r.analysed,
                    "not_analysed": r.not_analysed, "keywords": r.keywords,
                    "cards": r.deck.ranked().into_iter().map(card_json).collect::<Vec<_>>(),
                })
                .to_string(),
                Format::Table => table(&r.deck, &r.keywords),
            };
            (out, code)
        } else {
            let run = args.run;
            if let Some(id) = run {
                let found = store
                    .call(move |s| {
                        use crate::store::sql::Optional;
                        let row = s
                            .db()
                            .one::<i64>("SELECT 1 FROM runs WHERE id = ?1", crate::p![id])
                            .optional()?;
                        Ok(row.is_some())
                    })
                    .await;
                match found {
                    Ok(true) => {}
                    Ok(false) => {
                        return fail(2, format!("no run with id {id} (see `kakeai runs`)"));
                    }
                    Err(e) => return fail(2, e.to_string()),
                }
            }
            let notes = match store.call(move |s| feedback::notes(s, run)).await {
                Ok(n) => n,
                Err(e) => return fail(2, e.to_string()),
            };
            let deck = feedback::cards(analyzer.as_ref(), &notes);
            let scope = match run {
                Some(id) => format!("feedback:run:{id}"),
                None => "feedback".to_string(),
            };
            let (sc, d) = (scope.clone(), deck.clone());
            if let Err(e) = store.call(move |s| cstore::save(s, &sc, &d)).await {
                return fail(crate::store::write::EXIT_STORE, e.to_string());
            }
            let out = match args.format {
                Format::Json => json!({
                    "scope": scope, "notes": notes.len(),
                    "cards": deck.ranked().into_iter().map(card_json).collect::<Vec<_>>(),
                })
                .to_string(),
                Format::Table => table(&deck, &[]),
            };
            (out, 0)
        };
        println!("{}", out.trim_end());
        code
    })
}
