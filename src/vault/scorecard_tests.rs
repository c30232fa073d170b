use super::*;

fn gv(reader: &str, model: &str, version: &str) -> Group {
    Group {
        reader: reader.into(),
        model: model.into(),
        prompt_version: "p1".into(),
        vault_version: version.into(),
    }
}

fn g(reader: &str, model: &str) -> Group {
    gv(reader, model, "v1")
}

fn h(line: &str, group: Group, status: Status, secret: &str) -> LeakHit {
    LeakHit {
        line: line.into(),
        group,
        status,
        secret: secret.into(),
    }
}

fn lines(reviewed: usize, without_semantic: usize) -> Lines {
    Lines {
        reviewed,
        without_semantic,
    }
}

fn current(secrets: Vec<(String, String, u8)>, version: &str) -> Current {
    Current {
        secrets,
        versions: [("ayu", version), ("yana", version)]
            .iter()
            .map(|(r, v)| (r.to_string(), v.to_string()))
            .collect(),
    }
}

#[test]
fn a_line_counts_once_per_secret_at_its_worst() {
    let secrets = vec![
        ("ayu".to_string(), "attic".to_string(), 2),
        ("ayu".to_string(), "letter".to_string(), 1),
    ];
    let mut groups = BTreeMap::new();
    groups.insert(g("ayu", "m"), lines(40, 0));
    groups.insert(g("yana", "m"), lines(7, 0));
    let hits = vec![
        h("attempt:1", g("ayu", "m"), Status::Warn, "attic"),
        h("attempt:1", g("ayu", "m"), Status::Retry, "attic"),
        h("attempt:2", g("ayu", "m"), Status::Warn, "attic"),
        h("attempt:3", g("ayu", "m"), Status::Info, "attic"),
        h("attempt:2", g("ayu", "m"), Status::Retry, "letter"),
    ];
    let rows = tally(&current(secrets, "v1"), &groups, &hits);
    assert_eq!(rows.len(), 2, "yana is not reviewed for ayu's secrets");
    let attic = &rows[0];
    assert_eq!(
        (
            attic.reviewed,
            attic.leaked,
            attic.warn,
            attic.retry,
            attic.info
        ),
        (40, 2, 1, 1, 1)
    );
    assert_eq!((rows[1].leaked, rows[1].retry), (1, 1));
    let l = labels(&rows, Some("ayu"));
    assert_eq!(l["attic"], "あゆ L2 · leaked 2/40 on m");
}

/// Issue 27: a leak recorded against an older vault is never credited to today's secret,
/// and lines reviewed against it never inflate today's "reviewed".
#[test]
fn rows_are_kept_apart_by_vault_version() {
    let secrets = vec![("ayu".to_string(), "attic".to_string(), 2)];
    let mut groups = BTreeMap::new();
    groups.insert(gv("ayu", "m", "old1"), lines(30, 30));
    groups.insert(gv("ayu", "m", "new2"), lines(10, 4));
    let hits = vec![
        h("attempt:1", gv("ayu", "m", "old1"), Status::Retry, "attic"),
        h("attempt:2", gv("ayu", "m", "old1"), Status::Retry, "attic"),
        h("attempt:40", gv("ayu", "m", "new2"), Status::Warn, "attic"),
    ];
    let rows = tally(&current(secrets, "new2"), &groups, &hits);
    assert_eq!(rows.len(), 2);
    assert!(rows[0].current, "today's version is listed first");
    assert_eq!(
        (
            rows[0].vault_version.as_str(),
            rows[0].reviewed,
            rows[0].leaked
        ),
        ("new2", 10, 1)
    );
    assert_eq!(rows[0].without_semantic, 4);
    assert_eq!(
        (
            rows[1].vault_version.as_str(),
            rows[1].reviewed,
            rows[1].leaked
        ),
        ("old1", 30, 2)
    );
    let l = labels(&rows, Some("ayu"));
    assert_eq!(l["attic"], "あゆ L2 · leaked 1/10 on m");
}

#[test]
fn unreadable_severity_counts_as_worst_and_no_evidence_is_skipped() {
    let x = hit(
        "attempt:9".into(),
        g("yana", "m"),
        Some("??".into()),
        Some("keyword s1".into()),
    );
    assert_eq!(x.unwrap().status, Status::Retry);
    assert!(hit("attempt:9".into(), g("yana", "m"), None, None).is_none());
    // The coverage finding is not a leak.
    let cov = hit(
        "attempt:9".into(),
        g("yana", "m"),
        Some("WARN".into()),
        Some("coverage 1a2b3c4d unchecked:readings".into()),
    );
    assert!(cov.is_none());
}

#[test]
fn coverage_evidence_gives_version_and_semantic() {
    assert_eq!(
        coverage(Some(
            "coverage ab12 unchecked:semantic_similarity,readings".into()
        )),
        ("ab12".to_string(), true)
    );
    assert_eq!(
        coverage(Some("coverage ab12 unchecked:-".into())),
        ("ab12".to_string(), false)
    );
    assert_eq!(coverage(None), ("-".to_string(), false));
}

/// The quick read of a verdict (most name no leak) finds the same coverage as reading every
/// finding, on generated verdicts: with and without coverage, leak findings, escapes, other
/// fields that mention coverage, and text that is not JSON.
#[test]
fn the_quick_read_agrees_with_reading_every_finding() {
    let mut rng = crate::test_rng::Rng::new(26);
    let pieces = [
        r#"{"rule":"coverage","status":"INFO","evidence":"coverage v3 unchecked:semantic"}"#,
        r#"{"rule":"coverage","status":"INFO","evidence":"coverage v4 unchecked:"}"#,
        r#"{"rule":"leak","status":"WARN","evidence":"keyword SEC-HEIR"}"#,
        r#"{"rule":"tone","status":"PASS","evidence":"語尾 \"だね\""}"#,
        r#"{"rule":"tone","status":"PASS","message":"coverage of tone"}"#,
        r#"{"rule":"x","status":3,"evidence":"coverage \"q\" v1"}"#,
    ];
    for _ in 0..2_000 {
        let n = rng.below(4);
        let fs: Vec<&str> = (0..n).map(|_| rng.pick(&pieces)).collect();
        let mut v = format!(r#"{{"status":"PASS","findings":[{}]}}"#, fs.join(","));
        if rng.below(10) == 0 {
            v.truncate(v.len() - 1); // not JSON
        }
        let full = serde_json::from_str::<super::Verdict>(&v)
            .map(|v| v.findings)
            .unwrap_or_default()
            .iter()
            .filter_map(|f| super::text(&f.evidence))
            .find(|e| e.starts_with("coverage "));
        assert_eq!(super::read_verdict(&v).0, full, "{v}");
    }
}

/// SQLite's read (inside the engine) and the engine-neutral read (PostgreSQL's) give the same
/// groups and leak hits on generated verdicts: coverage or none, leak findings of every
/// severity, a severity that is not a string, escapes, text that is not JSON.
#[test]
fn both_reads_agree_on_generated_verdicts() {
    let d = tempfile::tempdir().unwrap();
    let mut store = crate::store::Store::open(&d.path().join("k.db")).unwrap();
    let mut rng = crate::test_rng::Rng::new(2426);
    let pieces = [
        r#"{"rule":"coverage","status":"INFO","evidence":"coverage v3 unchecked:semantic"}"#,
        r#"{"rule":"coverage","status":"INFO","evidence":"coverage v4 unchecked:"}"#,
        r#"{"rule":"leak","status":"WARN","evidence":"keyword SEC-HEIR"}"#,
        r#"{"rule":"leak","status":"RETRY","evidence":"reading SEC-ROYAL"}"#,
        r#"{"rule":"leak","status":7,"evidence":"keyword SEC-HEIR"}"#,
        r#"{"rule":"tone","status":"PASS","evidence":"語尾 \"だね\""}"#,
        r#"{"rule":"tone","status":"PASS","message":"coverage of tone"}"#,
    ];
    for r in 0..6 {
        let run = store
            .create_run(&crate::store::NewRun {
                topic: format!("t{r}"),
                model: Some(["gemma2:27b", "qwen"][r % 2].into()),
                endpoint: None,
                api: None,
                options: serde_json::json!({}),
                persona_version: Some(format!("p{}", r % 3)),
                ruleset_version: None,
            })
            .unwrap();
        for k in 0..40u32 {
            let n = rng.below(4);
            let fs: Vec<&str> = (0..n).map(|_| rng.pick(&pieces)).collect();
            let mut v = format!(r#"{{"status":"PASS","findings":[{}]}}"#, fs.join(","));
            if rng.below(12) == 0 {
                v.truncate(v.len() - 1);
            }
            store
                .db()
                .execute(
                    "INSERT INTO attempts (run_id, turn, speaker, attempt, state, text, verdict,
                       started_at) VALUES (?1, ?2, ?3, 1, 'done', 'x', ?4, '2026-11-27T00:00:00Z')",
                    crate::p![run, k + 1, ["yana", "ayu"][k as usize % 2], v],
                )
                .unwrap();
        }
    }
    let (g1, mut h1) = read(store.db()).unwrap();
    let (g2, mut h2) = read_rows(store.db()).unwrap();
    assert_eq!(g1, g2);
    let key = |h: &LeakHit| (h.line.clone(), h.secret.clone(), h.status.as_str());
    h1.sort_by_key(key);
    h2.sort_by_key(key);
    assert_eq!(h1, h2);
    assert!(h1.len() > 20, "{}", h1.len());
}
