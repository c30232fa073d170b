use super::*;
use std::collections::BTreeMap;

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

/// The SQL oracle (SQLite's json functions) and the read in Rust give the same
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
    let (g1, mut h1) = read_sqlite(store.conn()).unwrap();
    let (g2, mut h2) = read(store.db()).unwrap();
    assert_eq!(g1, g2);
    let key = |h: &LeakHit| (h.line.clone(), h.secret.clone(), h.status.as_str());
    h1.sort_by_key(key);
    h2.sort_by_key(key);
    assert_eq!(h1, h2);
    assert!(h1.len() > 20, "{}", h1.len());
}

/// The coverage part of a verdict: (vault version, semantic check missing) from its
/// `coverage` evidence; `-` and unknown when it has none.
const COVERAGE_SQL: &str =
    "(SELECT json_extract(f.value, '$.evidence') FROM json_each(v, '$.findings') f
     WHERE json_extract(f.value, '$.evidence') LIKE 'coverage %' LIMIT 1)";

/// The oracle: the scorecard's read as SQL with SQLite's json functions (the code before
/// issue 24 moved the read into Rust for both engines).
fn read_sqlite(
    conn: &rusqlite::Connection,
) -> rusqlite::Result<(BTreeMap<Group, Lines>, Vec<LeakHit>)> {
    let mut groups: BTreeMap<Group, Lines> = BTreeMap::new();
    let mut add = |g: Group, cov: Option<String>, n: usize| {
        let (vault_version, semantic_missing) = coverage(cov);
        let e = groups.entry(Group { vault_version, ..g }).or_default();
        e.reviewed += n;
        if semantic_missing {
            e.without_semantic += n;
        }
    };
    let sql = format!(
        "SELECT speaker, model, persona, cov, COUNT(*) FROM (
           SELECT a.speaker AS speaker, COALESCE(r.model, '') AS model,
                  COALESCE(r.persona_version, '') AS persona,
                  CASE WHEN json_valid(a.verdict) THEN
                    {} END AS cov
           FROM attempts a JOIN runs r ON r.id = a.run_id
           WHERE a.verdict IS NOT NULL)
         GROUP BY 1, 2, 3, 4",
        COVERAGE_SQL.replace("json_each(v", "json_each(a.verdict")
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map([], |r| {
        Ok((
            Group {
                reader: r.get(0)?,
                model: r.get(1)?,
                prompt_version: r.get(2)?,
                vault_version: String::new(),
            },
            r.get::<_, Option<String>>(3)?,
            r.get::<_, i64>(4)? as usize,
        ))
    })?;
    for row in rows {
        let (g, cov, n) = row?;
        add(g, cov, n);
    }
    let sql = format!(
        "SELECT character, cov, COUNT(*) FROM (
           SELECT c.character AS character,
                  CASE WHEN json_valid(c.verdict) THEN {} END AS cov
           FROM chat_exchanges c WHERE c.verdict IS NOT NULL)
         GROUP BY 1, 2",
        COVERAGE_SQL.replace("json_each(v", "json_each(c.verdict")
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, Option<String>>(1)?,
            r.get::<_, i64>(2)?,
        ))
    })?;
    for row in rows {
        let (reader, cov, n) = row?;
        add(chat_group(reader), cov, n as usize);
    }
    let mut hits = Vec::new();
    let sql = format!(
        "SELECT 'attempt:' || a.id, a.speaker, COALESCE(r.model, ''),
                COALESCE(r.persona_version, ''),
                CASE WHEN json_type(f.value, '$.status') = 'text'
                     THEN json_extract(f.value, '$.status') END,
                CASE WHEN json_type(f.value, '$.evidence') = 'text'
                     THEN json_extract(f.value, '$.evidence') END,
                {}
         FROM attempts a JOIN runs r ON r.id = a.run_id, json_each(a.verdict, '$.findings') f
         WHERE instr(a.verdict, '\"leak\"') > 0 AND json_valid(a.verdict)
           AND json_extract(f.value, '$.rule') = 'leak'",
        COVERAGE_SQL
            .replace("json_each(v", "json_each(a.verdict")
            .replace(" f\n", " g\n")
            .replace("f.value", "g.value")
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            Group {
                reader: r.get(1)?,
                model: r.get(2)?,
                prompt_version: r.get(3)?,
                vault_version: coverage(r.get::<_, Option<String>>(6)?).0,
            },
            r.get::<_, Option<String>>(4)?,
            r.get::<_, Option<String>>(5)?,
        ))
    })?;
    for row in rows {
        let (line, group, status, evidence) = row?;
        hits.extend(hit(line, group, status, evidence));
    }
    let sql = format!(
        "SELECT 'chat:' || c.id, c.character,
                CASE WHEN json_type(f.value, '$.status') = 'text'
                     THEN json_extract(f.value, '$.status') END,
                CASE WHEN json_type(f.value, '$.evidence') = 'text'
                     THEN json_extract(f.value, '$.evidence') END,
                {}
         FROM chat_exchanges c, json_each(c.verdict, '$.findings') f
         WHERE c.verdict LIKE '%\"leak\"%' AND json_valid(c.verdict)
           AND json_extract(f.value, '$.rule') = 'leak'",
        COVERAGE_SQL
            .replace("json_each(v", "json_each(c.verdict")
            .replace(" f\n", " g\n")
            .replace("f.value", "g.value")
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, Option<String>>(2)?,
            r.get::<_, Option<String>>(3)?,
            r.get::<_, Option<String>>(4)?,
        ))
    })?;
    for row in rows {
        let (line, reader, status, evidence, cov) = row?;
        let group = Group {
            vault_version: coverage(cov).0,
            ..chat_group(reader)
        };
        hits.extend(hit(line, group, status, evidence));
    }
    Ok((groups, hits))
}

/// A work's scorecard counts the runs made under it only: a run stamped with another work is
/// left out, a run with no stamp counts for the bundled sample alone.
#[test]
fn a_works_scorecard_reads_its_own_runs_only() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = crate::store::Store::open(&dir.path().join("k.db")).unwrap();
    let mut run = |options: serde_json::Value| {
        let id = store
            .create_run(&crate::store::NewRun {
                topic: "t".into(),
                model: Some("m".into()),
                endpoint: None,
                api: None,
                options,
                persona_version: None,
                ruleset_version: None,
            })
            .unwrap();
        store
            .db()
            .execute(
                "INSERT INTO attempts (run_id, turn, speaker, attempt, state, text, verdict,
                   started_at) VALUES (?1, 1, 'ayu', 1, 'done', 'x', '{\"status\":\"PASS\",\"findings\":[]}',
                   '2026-11-27T00:00:00Z')",
                crate::p![id],
            )
            .unwrap();
    };
    run(serde_json::json!({"vault": {"dir": null, "work": "sisters", "hash": "bundled-sample"}}));
    run(serde_json::json!({"vault": {"dir": "/v", "work": "外伝", "hash": "x"}}));
    run(serde_json::json!({}));
    let sample = crate::vault::load::sample();
    let rows = scorecard(store.db(), &sample).unwrap();
    let ayu: Vec<&Row> = rows.iter().filter(|r| r.reader == "ayu").collect();
    assert!(!ayu.is_empty(), "{rows:?}");
    for r in ayu {
        assert_eq!(
            r.reviewed, 2,
            "the sample's stamped run and the unstamped one: {r:?}"
        );
    }
    let (all, _) = read(store.db()).unwrap();
    assert_eq!(all.values().map(|l| l.reviewed).sum::<usize>(), 3);
}
