//! The queue's rule over generated item states, and the spec's validation.

use super::*;

fn spec(k: u32, overlap: bool) -> QueueSpec {
    QueueSpec {
        name: "retry-ayu".into(),
        filter: Filter::default(),
        k,
        lease_ms: 600_000,
        overlap,
        comparison: None,
    }
}

/// Seeded, so every run checks the same variants.
use crate::test_rng::Rng;

const PEOPLE: [&str; 4] = ["花子", "taro", "jiro", "めい"];

fn random_state(r: &mut Rng, now: i64) -> ItemState {
    let mut s = ItemState::default();
    for p in PEOPLE {
        match r.next(4) {
            0 => {
                s.judged_by.insert(p.to_string());
            }
            1 => {
                // live or expired lease
                let until = if r.next(2) == 0 { now + 1_000 } else { now - 1 };
                s.held_by.insert(p.to_string(), until);
            }
            _ => {}
        }
    }
    s
}

#[test]
fn the_rule_holds_on_generated_states() {
    let now = 1_000_000;
    let mut r = Rng::new(0x9E37_79B9_7F4A_7C15);
    for round in 0..2_000 {
        let k = 1 + r.next(3) as u32;
        let overlap = r.next(5) == 0;
        let sp = spec(k, overlap);
        let s = random_state(&mut r, now);
        let me = PEOPLE[r.next(4) as usize];
        let a = availability(&sp, &s, me, now);
        let live_others = s
            .held_by
            .iter()
            .filter(|(w, u)| **u > now && w.as_str() != me && !s.judged_by.contains(*w))
            .count();
        match a {
            Availability::Judged => assert!(s.judged_by.contains(me), "{round}"),
            Availability::Mine => assert!(s.held_by[me] > now && !s.judged_by.contains(me)),
            Availability::Done => assert!(!overlap && s.judged_by.len() >= k as usize),
            Availability::Held => {
                assert!(
                    !overlap && s.judged_by.len() + live_others >= k as usize,
                    "{round}"
                )
            }
            Availability::Open => {
                assert!(!s.judged_by.contains(me));
                assert!(
                    overlap || s.judged_by.len() + live_others < k as usize,
                    "{round}"
                );
            }
        }
    }
}

#[test]
fn pick_prefers_my_live_lease_then_the_first_open_item_and_never_a_closed_one() {
    let now = 5_000;
    let mut r = Rng::new(42);
    for _ in 0..500 {
        let sp = spec(1 + r.next(3) as u32, r.next(4) == 0);
        let items: Vec<(usize, ItemState)> =
            (0..6).map(|i| (i, random_state(&mut r, now))).collect();
        let me = PEOPLE[r.next(4) as usize];
        let av: Vec<Availability> = items
            .iter()
            .map(|(_, s)| availability(&sp, s, me, now))
            .collect();
        let got = pick(&sp, &items, me, now);
        let mine = av.iter().position(|a| *a == Availability::Mine);
        let open = av.iter().position(|a| *a == Availability::Open);
        assert_eq!(got, mine.or(open), "{av:?}");
    }
}

#[test]
fn k_reviewers_share_an_item_and_a_third_is_sent_elsewhere() {
    let now = 10;
    let sp = spec(2, false);
    let mut s = ItemState::default();
    assert_eq!(availability(&sp, &s, "taro", now), Availability::Open);
    s.held_by.insert("taro".into(), now + 100);
    assert_eq!(availability(&sp, &s, "花子", now), Availability::Open);
    s.held_by.insert("花子".into(), now + 100);
    assert_eq!(availability(&sp, &s, "jiro", now), Availability::Held);
    // taro judged: his lease no longer counts twice; still two places taken.
    s.judged_by.insert("taro".into());
    assert_eq!(availability(&sp, &s, "jiro", now), Availability::Held);
    // 花子's lease expired: jiro may take it.
    assert_eq!(availability(&sp, &s, "jiro", now + 200), Availability::Open);
    s.judged_by.insert("花子".into());
    assert_eq!(availability(&sp, &s, "jiro", now), Availability::Done);
    // With overlap everyone judges everything.
    assert_eq!(
        availability(&spec(2, true), &s, "jiro", now),
        Availability::Open
    );
}

#[test]
fn bad_specs_are_refused_with_the_reason() {
    let ok = spec(2, false);
    assert!(ok.validate().is_ok());
    let cases: Vec<(QueueSpec, &str)> = vec![
        (
            QueueSpec {
                name: "".into(),
                ..ok.clone()
            },
            "queue name",
        ),
        (
            QueueSpec {
                name: "a b".into(),
                ..ok.clone()
            },
            "queue name",
        ),
        (QueueSpec { k: 0, ..ok.clone() }, "--k"),
        (
            QueueSpec {
                lease_ms: 5,
                ..ok.clone()
            },
            "--lease",
        ),
        (
            QueueSpec {
                filter: Filter {
                    sister: Some("mika".into()),
                    ..Filter::default()
                },
                ..ok.clone()
            },
            "--sister",
        ),
        (
            QueueSpec {
                filter: Filter {
                    since: Some("2026-11-24T00:00:00.000Z".into()),
                    until: Some("2026-11-23T00:00:00.000Z".into()),
                    ..Filter::default()
                },
                ..ok.clone()
            },
            "--since",
        ),
    ];
    for (s, want) in cases {
        let e = s.validate().unwrap_err().to_string();
        assert!(e.contains(want), "{e}");
    }
}

#[test]
fn leases_and_dates_parse_or_say_why() {
    assert_eq!(parse_lease("90s").unwrap(), 90_000);
    assert_eq!(parse_lease("10m").unwrap(), 600_000);
    assert_eq!(parse_lease("2h").unwrap(), 7_200_000);
    assert_eq!(parse_lease("30").unwrap(), 30_000);
    assert!(parse_lease("10d").is_err());
    assert!(parse_lease("ten").is_err());
    assert_eq!(
        parse_when("--since", "2026-11-23").unwrap(),
        "2026-11-23T00:00:00.000Z"
    );
    assert_eq!(
        parse_when("--since", "2026-11-23T09:30:00Z").unwrap(),
        "2026-11-23T09:30:00.000Z"
    );
    assert!(
        parse_when("--since", "Monday")
            .unwrap_err()
            .to_string()
            .contains("--since Monday")
    );
    assert!(parse_when("--since", "2026-13-01").is_err());
    // A date alone as --until includes that day (month and year ends too); a time is as given.
    for (day, next) in [
        ("2026-11-23", "2026-11-24"),
        ("2026-11-30", "2026-12-01"),
        ("2026-12-31", "2027-01-01"),
        ("2028-02-28", "2028-02-29"),
    ] {
        assert_eq!(
            parse_when("--until", day).unwrap(),
            format!("{next}T00:00:00.000Z")
        );
    }
    assert_eq!(
        parse_when("--until", "2026-11-23T09:30:00Z").unwrap(),
        "2026-11-23T09:30:00.000Z"
    );
}
