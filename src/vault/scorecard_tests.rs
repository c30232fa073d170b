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
