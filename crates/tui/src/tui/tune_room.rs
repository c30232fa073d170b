//! The rules pane's tune section (`kakeai tune` in the workbench): `T` learns from the team's
//! labels in the store (every run; gold first, then the reviewers' majority, then single
//! marks), `{` `}` pick a proposal, `y` accepts it. An accepted proposal is adopted at once (the
//! open run is judged again under it) and written, with the ones accepted before it, to
//! `rules.tune.toml` beside the user's rules file, headed by its provenance; kakeai loads that
//! overlay after rules.toml from then on (delete the file to undo). In blind review the section
//! is off: its figures come from every reviewer's labels, so `T` is refused with a short reason
//! and nothing learned before is drawn.

use ratatui::style::{Modifier, Style};
use ratatui::text::Line;

use crate::director::RuleSet;
use crate::store::Store;
use crate::tui::error::UiError;
use crate::tui::theme::Theme;
use crate::tune::overlay::{self, Provenance};
use crate::tune::search::{Proposal, Report, Settings};
use crate::tune::source::{self, Selection};

/// What `T` (and `{` `}` `y`) say in blind review.
pub const BLIND_REFUSAL: &str =
    "T is off in blind review: tune learns from the whole team's labels";

/// What the store's labels gave.
#[derive(Debug, Clone)]
pub struct Learned {
    pub report: Report,
    pub source: String,
    /// The ruleset the proposals were measured against.
    pub ruleset: String,
}

/// What learning gave: proposals (maybe none), or tune's refusal (too few labels, one run).
#[derive(Debug, Clone)]
pub enum Outcome {
    Learned(Box<Learned>),
    Refused(String),
}

/// The tune section's state.
#[derive(Debug, Clone, Default)]
pub enum TuneState {
    #[default]
    Idle,
    Learning,
    /// Tune ran and refused (too few labels, one run only): the reason, shown as it is.
    Refused(String),
    Ready {
        learned: Box<Learned>,
        selected: usize,
        accepted: Vec<usize>,
    },
}

/// Every run's turns and labels (on the store's thread, like every room's read).
pub fn read(store: &mut Store) -> Result<source::Loaded, UiError> {
    source::load(store, &Selection::Runs(Vec::new())).map_err(|e| UiError::Refused(e.to_string()))
}

/// Runs tune over what [`read`] brought, under the rules on disk (defaults ⊕ the user's rules
/// and overlay); off the store's thread.
pub fn learn(loaded: source::Loaded) -> Result<Outcome, UiError> {
    let rules = RuleSet::load(None).map_err(|e| UiError::Refused(e.to_string()))?;
    let analyzer = crate::text::analyzer::open(Default::default(), &mut |_| {})
        .map_err(|e| UiError::Refused(e.to_string()))?;
    let settings = Settings::default();
    let (cases, cands) =
        crate::tune::rejudge::build(&rules, analyzer.as_ref(), &loaded.turns, &settings.grid)
            .map_err(|e| UiError::Refused(e.to_string()))?;
    Ok(match crate::tune::search::tune(&cases, &cands, &settings) {
        Ok(report) => Outcome::Learned(Box::new(Learned {
            report,
            source: loaded.source,
            ruleset: rules.version.clone(),
        })),
        Err(e) => Outcome::Refused(format!("{e}; no proposals")),
    })
}

impl TuneState {
    /// Moves the selection among the proposals.
    pub fn step(&mut self, by: isize) {
        if let TuneState::Ready {
            learned, selected, ..
        } = self
        {
            let n = learned.report.proposals.len() as isize;
            if n > 0 {
                *selected = (*selected as isize + by).rem_euclid(n) as usize;
            }
        }
    }

    /// Accepting the selected proposal: the overlay's text (every accepted one, with its
    /// provenance) and `current` with the overlay merged in. None when nothing is selected.
    pub fn accept(&mut self, current: &RuleSet, date: &str) -> Option<Result<Accepted, UiError>> {
        let TuneState::Ready {
            learned,
            selected,
            accepted,
        } = self
        else {
            return None;
        };
        learned.report.proposals.get(*selected)?;
        if !accepted.contains(selected) {
            accepted.push(*selected);
        }
        let chosen: Vec<&Proposal> = accepted
            .iter()
            .filter_map(|i| learned.report.proposals.get(*i))
            .collect();
        let prov = Provenance {
            source: format!("{} (workbench)", learned.source),
            date: date.to_string(),
            ruleset: learned.ruleset.clone(),
        };
        Some(adopt(&learned.report, &chosen, &prov, current))
    }
}

/// An accepted proposal: the overlay's text and the rules with it merged in.
pub struct Accepted {
    pub overlay: String,
    pub rules: RuleSet,
}

fn adopt(
    report: &Report,
    chosen: &[&Proposal],
    prov: &Provenance,
    current: &RuleSet,
) -> Result<Accepted, UiError> {
    let refused = |e: &dyn std::fmt::Display| UiError::Refused(e.to_string());
    let overlay = overlay::render(report, chosen, prov, &current.data).map_err(|e| refused(&e))?;
    let over: toml::Table = toml::from_str(&overlay).map_err(|e| refused(&e))?;
    let mut table = toml::Table::try_from(&*current.data).map_err(|e| refused(&e))?;
    crate::config::merge_tables(&mut table, over);
    let rules = RuleSet::from_table(table).map_err(|e| refused(&e))?;
    Ok(Accepted { overlay, rules })
}

/// The section's lines in the rules pane, wrapped at `width` (nothing is cut; continuations
/// indented); `blind`: only why it is off.
pub fn lines(state: &TuneState, blind: bool, t: &Theme, width: u16) -> Vec<Line<'static>> {
    let width = usize::from(width).max(16);
    let mut out = Vec::new();
    let raw = if blind {
        vec![Line::styled(BLIND_REFUSAL, Style::new().fg(t.dim))]
    } else {
        raw_lines(state, t)
    };
    for line in raw {
        let style = line.style;
        let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
        for (k, piece) in crate::tui::wrap::wrap(&text, width - 2)
            .into_iter()
            .enumerate()
        {
            let piece = if k == 0 {
                piece
            } else {
                format!("  {}", piece.trim_start())
            };
            out.push(Line::styled(piece, style));
        }
    }
    out
}

fn raw_lines(state: &TuneState, t: &Theme) -> Vec<Line<'static>> {
    let dim = Style::new().fg(t.dim);
    let head = Style::new().fg(t.accent).add_modifier(Modifier::BOLD);
    let mut out = vec![Line::styled(
        "learned from the team's labels (T: tune)",
        head,
    )];
    match state {
        TuneState::Idle => out.push(Line::styled(
            "T reads every run's labels and proposes rule changes that hold up on held-out runs",
            dim,
        )),
        TuneState::Learning => out.push(Line::styled("learning from the labels …", dim)),
        TuneState::Refused(why) => out.push(Line::styled(why.clone(), Style::new().fg(t.warn))),
        TuneState::Ready {
            learned,
            selected,
            accepted,
        } => out.extend(ready(learned, *selected, accepted, t)),
    }
    out
}

fn ready(l: &Learned, selected: usize, accepted: &[usize], t: &Theme) -> Vec<Line<'static>> {
    let r = &l.report;
    let dim = Style::new().fg(t.dim);
    let mut out = vec![
        Line::styled(
            format!(
                "{}: {} labels, {} folds by run",
                l.source, r.labels, r.folds
            ),
            dim,
        ),
        Line::styled(
            format!(
                "held-out κ {:.2} → {:.2} (spread {:.2}) · flips {}/{} · p {:.1e}",
                r.agreement_before,
                r.agreement_after,
                r.spread,
                r.flipped_right,
                r.flipped_wrong,
                r.p_value
            ),
            Style::new().fg(t.text),
        ),
    ];
    if r.proposals.is_empty() {
        out.push(Line::styled(
            "no proposal holds up: the rules stay as they are",
            dim,
        ));
        return out;
    }
    out.push(Line::styled(
        "{ } select · y accept (adopted now, written to rules.tune.toml)",
        dim,
    ));
    for (i, p) in r.proposals.iter().enumerate() {
        let mark = if accepted.contains(&i) { "✓" } else { " " };
        let what = if p.change.starts_with("severity.") {
            format!("{} {}", p.rule, p.after)
        } else {
            format!("{} {} → {}", p.change, p.before, p.after)
        };
        let text = format!(
            "{mark} {what} · +{} −{} · {}/{} folds",
            p.support.len(),
            p.against.len(),
            p.chosen_in_folds,
            r.folds
        );
        let st = if i == selected {
            Style::new()
                .fg(t.text)
                .bg(t.selected_bg)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().fg(t.text)
        };
        out.push(Line::styled(text, st));
    }
    if let Some(p) = r.proposals.get(selected) {
        let show = |v: &[String]| v.iter().take(6).cloned().collect::<Vec<_>>().join(" ");
        out.push(Line::styled(
            format!("  supports (run#turn): {}", show(&p.support)),
            dim,
        ));
        if !p.against.is_empty() {
            out.push(Line::styled(
                format!("  flips the wrong way: {}", show(&p.against)),
                Style::new().fg(t.warn),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::director::Status;
    use crate::duo::TurnFlags;
    use crate::store::{ActionKind, NewAction, NewRun, TurnCommit};
    use crate::test_rng::Rng;

    /// `runs` runs of やな/あゆ lines of 1–6 sentences; two reviewers say a line of `limit`
    /// sentences or more is unusable.
    fn store(limit: usize, runs: usize) -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("k.db")).unwrap();
        let mut rng = Rng::new(7);
        for r in 0..runs {
            let run_id = s
                .create_run(&NewRun {
                    topic: format!("話題{r}"),
                    model: None,
                    endpoint: None,
                    api: None,
                    options: serde_json::json!({}),
                    persona_version: None,
                    ruleset_version: None,
                })
                .unwrap();
            for t in 1..=10u32 {
                let (speaker, line) = if t % 2 == 1 {
                    ("yana", "今日は晴れてるね。")
                } else {
                    ("ayu", "今日は晴れていますね。")
                };
                let n = 1 + rng.below(6);
                s.commit_turn(&TurnCommit {
                    run_id,
                    turn: t,
                    speaker: speaker.into(),
                    attempt_id: None,
                    text: line.repeat(n),
                    status: Status::Pass,
                    flags: TurnFlags::default(),
                    hook: None,
                    hook_depth: None,
                })
                .unwrap();
                for who in ["aoi", "ren"] {
                    s.add_action_by(
                        &NewAction {
                            run_id,
                            turn: Some(t),
                            attempt_id: None,
                            kind: ActionKind::Thumb,
                            payload: serde_json::json!({"up": n < limit}),
                        },
                        Some(who),
                    )
                    .unwrap();
                }
            }
        }
        (dir, s)
    }

    #[test]
    fn learning_then_accepting_adopts_the_proposal_with_its_provenance() {
        let (_dir, mut s) = store(5, 8);
        let Outcome::Learned(learned) = learn(read(&mut s).unwrap()).unwrap() else {
            panic!("80 labels over 8 runs are enough")
        };
        assert!(learned.report.agreement_after > learned.report.agreement_before);
        let n = learned.report.proposals.len();
        assert!(n > 0, "{:?}", learned.report);
        let mut state = TuneState::Ready {
            learned,
            selected: 0,
            accepted: Vec::new(),
        };
        state.step(-1);
        let TuneState::Ready { selected, .. } = &state else {
            unreachable!()
        };
        assert_eq!(*selected, n - 1, "the selection wraps");
        let current = RuleSet::builtin().unwrap();
        let Some(Ok(Accepted {
            overlay: text,
            rules,
        })) = state.accept(&current, "2026-11-28T00:00:00Z")
        else {
            panic!("a selected proposal is accepted")
        };
        assert!(text.contains("(workbench), 2026-11-28T00:00:00Z"), "{text}");
        assert_ne!(rules.version, current.version);
        // The overlay alone over the same rules gives the same ruleset.
        let mut table = toml::Table::try_from(&*current.data).unwrap();
        crate::config::merge_tables(&mut table, toml::from_str(&text).unwrap());
        assert_eq!(RuleSet::from_table(table).unwrap().version, rules.version);
        let TuneState::Ready { accepted, .. } = &state else {
            unreachable!()
        };
        assert_eq!(accepted, &vec![n - 1]);
        let shown: Vec<String> = lines(&state, false, &crate::tui::theme::load_all().0[0], 60)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        assert!(shown.iter().any(|l| l.starts_with('✓')), "{shown:?}");
        // Blind: the same learned state draws none of its figures, only why the section is off.
        for w in [30u16, 60, 120] {
            let blind: String = lines(&state, true, &crate::tui::theme::load_all().0[0], w)
                .iter()
                .flat_map(|l| l.spans.iter().map(|s| s.content.to_string()))
                .collect();
            for figure in ["κ", "flips", "supports", "labels,", "✓", "folds"] {
                assert!(
                    !blind.contains(figure),
                    "{figure} shown blind at {w}: {blind}"
                );
            }
            assert!(blind.contains("off in blind review"), "{blind}");
        }
    }

    #[test]
    fn too_few_labels_is_said_and_nothing_is_accepted() {
        let (_dir, mut s) = store(5, 2);
        let Outcome::Refused(why) = learn(read(&mut s).unwrap()).unwrap() else {
            panic!("20 labels are too few")
        };
        assert!(why.contains("only 20 labelled turns"), "{why}");
        let mut state = TuneState::Refused(why);
        assert!(state.accept(&RuleSet::builtin().unwrap(), "now").is_none());
    }
}
