//! Samples are marked (issue 23 item 10): the runs browser draws `[compare N sample]` on a
//! comparison's sample run and `[probe]` on a vault probe's, and nothing on a run made to be
//! reviewed — even when the sample has the baseline's very topic. Start-up opens the newest
//! run to review, passing over newer samples. Snapshots at 80×24 and 140×40.

mod common;

use common::stores::run_with;
use common::tui::{app, header, screen};
use kakeai::director::Status;
use kakeai::store::Store;
use kakeai::tui::app::{App, Conn, UiMsg};
use kakeai::tui::keymap::Action;
use serde_json::json;

struct Runs {
    _dir: tempfile::TempDir,
    store: Store,
    baseline: i64,
    compare_sample: i64,
    probe_sample: i64,
}

/// A baseline run, then (newer) the B sample of comparison 1 on the same topic, then (newest)
/// a probe's run.
fn runs() -> Runs {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("k.db")).unwrap();
    use Status::{Pass, Retry};
    let baseline = run_with(
        &mut store,
        "海辺の坂道",
        json!({"max_attempts": 3}),
        &[Pass, Pass, Retry, Pass],
        "2026-08-01T19:00:00.000Z",
    );
    let compare_sample = run_with(
        &mut store,
        "海辺の坂道",
        json!({"compare": 1, "sample": 1, "baseline_run": baseline, "variant": "yana-terse"}),
        &[Pass, Retry, Retry, Pass],
        "2026-08-01T19:05:00.000Z",
    );
    let probe_sample = run_with(
        &mut store,
        "いつもの雑談",
        json!({"probe": "SEC-AYU-01", "reader": "ayu", "question": "昔、何か世話してた？"}),
        &[Pass, Pass],
        "2026-08-01T19:10:00.000Z",
    );
    Runs {
        _dir: dir,
        store,
        baseline,
        compare_sample,
        probe_sample,
    }
}

fn browser(r: &Runs) -> App {
    let mut a = app(header(
        "http://127.0.0.1:8080",
        "tiny-ja",
        Conn::Probing,
        "0123456789ab",
        "/tmp/kakeai.db",
    ));
    a.act(Action::Runs);
    a.on_msg(UiMsg::Runs {
        filter: String::new(),
        offset: 0,
        page: Ok(r.store.browse("", 200, 0).unwrap()),
    });
    assert!(a.runs.is_some(), "the runs browser is open");
    a
}

/// The drawn row of run `id` (rows begin with the id right-aligned in 5 columns), without the
/// test backend's note on wide characters after it.
fn row(screen: &str, id: i64) -> &str {
    let start = format!("│{id:>5} ");
    let rows: Vec<&str> = screen.lines().filter(|l| l.contains(&start)).collect();
    assert_eq!(rows.len(), 1, "one row for run {id}:\n{screen}");
    rows[0].split("\" Hidden by").next().unwrap_or(rows[0])
}

#[test]
fn the_browser_marks_compare_and_probe_samples_and_nothing_else() {
    let r = runs();
    let a = browser(&r);
    for (w, h) in [(80, 24), (140, 40)] {
        let s = screen(&a, w, h);
        assert!(
            row(&s, r.compare_sample).contains("[compare 1 sample] 海辺の坂道"),
            "{w}×{h}: the comparison's sample is marked:\n{s}"
        );
        assert!(
            row(&s, r.probe_sample).contains("[probe] いつもの雑談"),
            "{w}×{h}: the probe's run is marked:\n{s}"
        );
        let base = row(&s, r.baseline);
        assert!(base.contains("海辺の坂道"), "{s}");
        assert!(
            !base.contains('[') && !base.contains("sample") && !base.contains("probe"),
            "{w}×{h}: the baseline run carries no mark: {base}"
        );
        // Newest first: the probe, the comparison's sample, the baseline.
        let at = |id| s.find(row(&s, id)).unwrap();
        assert!(at(r.probe_sample) < at(r.compare_sample));
        assert!(at(r.compare_sample) < at(r.baseline));
        insta::assert_snapshot!(format!("runs_browser_samples_{w}x{h}"), s);
    }
}

/// Nothing is cut at 80 columns without … (issue 23 item 13): the runs browser's title is
/// whole or ends in ….
#[test]
fn the_browser_title_at_80_columns_is_whole_or_ends_in_an_ellipsis() {
    let r = runs();
    let s = screen(&browser(&r), 80, 24);
    let title = s.lines().find(|l| l.contains("┌ runs ")).expect(&s);
    assert!(
        title.contains("Esc closes") || title.contains('…'),
        "{title}"
    );
}

#[test]
fn start_up_opens_the_newest_run_to_review_not_a_newer_sample() {
    let r = runs();
    // Both samples are newer than the baseline.
    assert_eq!(
        r.store.browse("", 10, 0).unwrap().rows[0].id,
        r.probe_sample
    );
    assert_eq!(r.store.latest_run_id().unwrap(), Some(r.baseline));
    // With only samples in the store there is nothing to open.
    let dir = tempfile::tempdir().unwrap();
    let mut only = Store::open(&dir.path().join("k.db")).unwrap();
    run_with(
        &mut only,
        "いつもの雑談",
        json!({"probe": "SEC-AYU-01"}),
        &[Status::Pass],
        "2026-08-01T19:00:00.000Z",
    );
    assert_eq!(only.latest_run_id().unwrap(), None);
}

/// The command bar names the keys of what has the focus (issue 23: the footer derives from the
/// one `Focus`): under the runs browser it offers the conversation's p:pause, s:stop, +:👍 …,
/// while a printable key there types into the filter. Fails today (crates/tui/src/tui is others' work).
#[test]
fn the_command_bar_under_the_browser_offers_no_conversation_keys() {
    let r = runs();
    let s = screen(&browser(&r), 140, 40);
    let bar = s.lines().last().expect(&s);
    for k in ["p:pause", "s:stop", "i:instruct"] {
        assert!(!bar.contains(k), "{bar}");
    }
    // The browser's own keys instead.
    assert!(
        bar.contains("Enter:open") && bar.contains("Esc:close"),
        "{bar}"
    );
}
