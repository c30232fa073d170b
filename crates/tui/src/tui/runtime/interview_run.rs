//! Interview mode's runtime edge: starts an interview in the background (the runner of
//! `crate::interview`), forwards the user's answers to it and its events to the app.

use tokio::sync::mpsc;

use crate::interview::{Machine, Runner, config, store as istore};
use crate::llm::Client;
use crate::tui::Runtime;
use crate::tui::app::UiMsg;
use crate::tui::error::{Notice, UiError};
use crate::tui::interview_view::InterviewMsg;

impl Runtime {
    /// `/interview NAME` in chat: loads the definition and starts the runner.
    pub(crate) fn interview_start(&mut self, name: String) {
        let cfg = match config::load(&name) {
            Ok(c) => c,
            Err(e) => {
                let e = UiError::File(e.to_string()).context("interview");
                self.app.notify(e.level(), e.to_string());
                return;
            }
        };
        let s = &self.services;
        let llm = s.llm.clone();
        let (model, endpoint) = (llm.model.clone(), llm.endpoint.clone());
        let client = Client::new(llm).ok();
        let (answer_tx, mut answers) = mpsc::unbounded_channel();
        self.interview_tx = Some(answer_tx);
        let vault = s.vault.clone();
        let (store, rules, analyzer, tx) = (
            s.store.clone(),
            self.app.rules.clone(),
            s.analyzer.clone(),
            self.tx.clone(),
        );
        static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let _ = tx.send(UiMsg::Interview(InterviewMsg::Started(
            run,
            Box::new(cfg.clone()),
        )));
        tokio::spawn(async move {
            let mut machine = Machine::new(&cfg, client.is_none());
            let (n, sister, state) = (
                cfg.name.clone(),
                cfg.sister.clone(),
                machine.state.as_str().to_string(),
            );
            let id = match store
                .call(move |s| istore::create(s, &n, &sister, &model, &endpoint, &state))
                .await
            {
                Ok(id) => id,
                Err(e) => {
                    let n = Notice::failed("interview NOT started", UiError::from(e));
                    let _ = tx.send(UiMsg::Interview(InterviewMsg::Notice(n)));
                    return;
                }
            };
            let runner = Runner {
                cfg,
                client,
                rules,
                analyzer,
                store,
                interview_id: id,
                vault,
            };
            let etx = tx.clone();
            let mut emit = move |e: &crate::interview::Event| {
                let _ = etx.send(UiMsg::Interview(InterviewMsg::Event(
                    run,
                    Box::new(e.clone()),
                )));
            };
            match runner.run(&mut machine, &mut answers, &mut emit).await {
                Err(e) => {
                    let n = Notice::failed("interview NOT saved", UiError::Store(e.to_string()));
                    let _ = tx.send(UiMsg::Interview(InterviewMsg::Notice(n)));
                }
                // The queued analysis runs now, in the background (seed 003 §8).
                Ok(crate::interview::Outcome::Finished { .. }) => {
                    let msg = analyse_finished(runner).await;
                    let _ = tx.send(UiMsg::Interview(InterviewMsg::Notice(msg)));
                }
                Ok(_) => {}
            }
        });
    }

    /// `/insights` in chat: loads every scope's cards.
    pub(crate) fn insights_open(&mut self) {
        let (store, tx) = (self.services.store.clone(), self.tx.clone());
        tokio::spawn(async move {
            let r = store
                .call(|s| crate::tui::insights_view::InsightsView::load(s))
                .await
                .map(Box::new)
                .map_err(crate::tui::error::UiError::from);
            let _ = tx.send(UiMsg::Interview(InterviewMsg::Insights(r)));
        });
    }

    /// An answer typed in interview mode (raw: the runner masks it before anything else).
    pub(crate) fn interview_answer(&mut self, text: String) {
        match &self.interview_tx {
            Some(tx) if tx.send(text).is_ok() => {}
            _ => self.app.status = "the interview has ended".into(),
        }
    }
}

/// The queued analysis of a finished interview (seed 003 §8), and what to tell the user.
async fn analyse_finished(runner: Runner) -> Notice {
    let Runner {
        cfg,
        client,
        analyzer,
        store,
        ..
    } = runner;
    let r =
        crate::insight::analyze::interviews(&store, client.as_ref(), analyzer, cfg.name.clone())
            .await;
    match r {
        Ok(r) if r.not_analysed.is_empty() => Notice::info(format!(
            "interview analysed — {} cards in {} (/insights)",
            r.deck.cards.len(),
            r.scope
        )),
        Ok(r) => Notice {
            level: crate::tui::error::Level::Warn,
            text: format!(
                "interview finished; not analysed: {}",
                r.not_analysed
                    .first()
                    .map(|s| s.reason.as_str())
                    .unwrap_or("")
            ),
        },
        Err(e) => Notice::failed("analysis NOT saved", UiError::Store(e.to_string())),
    }
}
