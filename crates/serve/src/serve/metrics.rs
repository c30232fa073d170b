//! The server's numbers: counters and latency samples, printed in Prometheus' text format at
//! `/metrics` (and read back by `kakeai serve status`).

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Latency samples kept per series (the newest); percentiles are over these.
const SAMPLES: usize = 20_000;

#[derive(Default)]
pub struct Metrics {
    pub events: AtomicU64,
    pub duplicates: AtomicU64,
    pub bad_signatures: AtomicU64,
    pub bad_bodies: AtomicU64,
    pub replies: AtomicU64,
    pub pushes: AtomicU64,
    pub send_failures: AtomicU64,
    pub blocks: AtomicU64,
    pub pattern_hits: AtomicU64,
    pub model_replies: AtomicU64,
    pub fallbacks: AtomicU64,
    pub reviews: AtomicU64,
    pub judgments: AtomicU64,
    pub judgments_saved: AtomicU64,
    pub pipeline_errors: AtomicU64,
    /// Lines (pattern, model attempt) the Director judged unusable; none of them was sent.
    pub rejected: AtomicU64,
    /// Turns where nothing was sent because even her fallback line was unusable.
    pub withheld: AtomicU64,
    pub model_errors: AtomicU64,
    /// PII second opinions that failed or did not answer in time (the message was not
    /// checked by the model: fallback line, marked for review).
    pub pii_check_failures: AtomicU64,
    pub malformed_events: AtomicU64,
    ack: Mutex<VecDeque<f64>>,
    answer: Mutex<VecDeque<f64>>,
}

pub fn inc(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

impl Metrics {
    pub fn ack_seconds(&self, s: f64) {
        push(&self.ack, s);
    }
    pub fn answer_seconds(&self, s: f64) {
        push(&self.answer, s);
    }

    pub fn prometheus(&self) -> String {
        let mut out = String::new();
        let counters: [(&str, &str, &AtomicU64); 20] = [
            (
                "kakeai_line_events_total",
                "webhook events accepted (new, not duplicates)",
                &self.events,
            ),
            (
                "kakeai_line_duplicate_events_total",
                "redelivered events already handled",
                &self.duplicates,
            ),
            (
                "kakeai_line_bad_signature_total",
                "requests refused with 401",
                &self.bad_signatures,
            ),
            (
                "kakeai_line_bad_body_total",
                "signed bodies that were not LINE webhook JSON",
                &self.bad_bodies,
            ),
            (
                "kakeai_line_replies_total",
                "messages sent with the Reply API",
                &self.replies,
            ),
            (
                "kakeai_line_pushes_total",
                "messages sent with the Push API",
                &self.pushes,
            ),
            (
                "kakeai_line_send_failures_total",
                "messages LINE did not take",
                &self.send_failures,
            ),
            (
                "kakeai_line_blocks_total",
                "user messages blocked by the safety layers",
                &self.blocks,
            ),
            (
                "kakeai_line_pattern_hits_total",
                "replies taken from the pattern DB",
                &self.pattern_hits,
            ),
            (
                "kakeai_line_model_replies_total",
                "replies written by the model",
                &self.model_replies,
            ),
            (
                "kakeai_line_fallbacks_total",
                "safe fallback lines sent",
                &self.fallbacks,
            ),
            (
                "kakeai_line_review_total",
                "replies marked for review (a line was rejected, the budget ran out, or its delivery failed or is uncertain)",
                &self.reviews,
            ),
            (
                "kakeai_line_judgments_total",
                "seed 002 judgments asked of the model",
                &self.judgments,
            ),
            (
                "kakeai_line_judgments_saved_total",
                "judgments skipped thanks to the cache",
                &self.judgments_saved,
            ),
            (
                "kakeai_line_pipeline_errors_total",
                "events whose processing failed",
                &self.pipeline_errors,
            ),
            (
                "kakeai_line_rejected_total",
                "lines the Director judged unusable (RETRY…), never sent",
                &self.rejected,
            ),
            (
                "kakeai_line_withheld_total",
                "turns with nothing sent: even the fallback line was unusable",
                &self.withheld,
            ),
            (
                "kakeai_line_model_errors_total",
                "generation attempts the model failed",
                &self.model_errors,
            ),
            (
                "kakeai_line_pii_check_failures_total",
                "PII second opinions the model failed or did not answer in time",
                &self.pii_check_failures,
            ),
            (
                "kakeai_line_malformed_events_total",
                "events of a signed batch that were not LINE's shape (recorded with the reason)",
                &self.malformed_events,
            ),
        ];
        for (name, help, c) in counters {
            out.push_str(&format!(
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {}\n",
                c.load(Ordering::Relaxed)
            ));
        }
        for (name, help, m) in [
            (
                "kakeai_line_ack_seconds",
                "webhook request to 200",
                &self.ack,
            ),
            (
                "kakeai_line_answer_seconds",
                "user message to her reply handed to LINE",
                &self.answer,
            ),
        ] {
            let v = sorted(m);
            out.push_str(&format!("# HELP {name} {help}\n# TYPE {name} summary\n"));
            for q in [0.5, 0.9, 0.99] {
                out.push_str(&format!(
                    "{name}{{quantile=\"{q}\"}} {:.6}\n",
                    quantile(&v, q)
                ));
            }
            out.push_str(&format!(
                "{name}_sum {:.6}\n{name}_count {}\n",
                v.iter().sum::<f64>(),
                v.len()
            ));
        }
        out
    }
}

fn push(m: &Mutex<VecDeque<f64>>, s: f64) {
    if let Ok(mut v) = m.lock() {
        if v.len() == SAMPLES {
            v.pop_front();
        }
        v.push_back(s);
    }
}

fn sorted(m: &Mutex<VecDeque<f64>>) -> Vec<f64> {
    let mut v: Vec<f64> = m
        .lock()
        .map(|v| v.iter().copied().collect())
        .unwrap_or_default();
    v.sort_by(f64::total_cmp);
    v
}

/// Nearest-rank quantile of sorted values; 0 when there are none.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// `name value` pairs of a Prometheus text page (comments skipped).
pub fn parse_text(page: &str) -> Vec<(String, f64)> {
    page.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let (k, v) = l.rsplit_once(' ')?;
            Some((k.to_string(), v.parse().ok()?))
        })
        .collect()
}

/// One line of `kakeai serve status`: the prefix dropped; a latency quantile or sum in ms, a
/// sample count as a count.
pub fn status_line(name: &str, v: f64) -> String {
    let k = name.trim_start_matches("kakeai_line_");
    if k.contains("seconds") && !k.ends_with("_count") {
        format!("{k:<40} {:.1} ms", v * 1000.0)
    } else {
        format!("{k:<40} {v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_prints_sample_counts_as_counts_and_latencies_in_ms() {
        let line = status_line("kakeai_line_ack_seconds_count", 108.0);
        assert!(line.ends_with(" 108") && !line.contains("ms"), "{line}");
        let line = status_line("kakeai_line_ack_seconds{quantile=\"0.99\"}", 0.0044);
        assert!(line.ends_with(" 4.4 ms"), "{line}");
        let line = status_line("kakeai_line_events_total", 3.0);
        assert!(line.ends_with(" 3"), "{line}");
    }

    #[test]
    fn quantiles_are_nearest_rank_and_the_page_parses_back() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile(&v, 0.5), 50.0);
        assert_eq!(quantile(&v, 0.99), 99.0);
        assert_eq!(quantile(&[], 0.9), 0.0);
        let m = Metrics::default();
        inc(&m.events);
        inc(&m.events);
        for i in 1..=10 {
            m.ack_seconds(f64::from(i) / 1000.0);
        }
        let parsed = parse_text(&m.prometheus());
        let get = |k: &str| parsed.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
        assert_eq!(get("kakeai_line_events_total"), Some(2.0));
        assert_eq!(
            get("kakeai_line_ack_seconds{quantile=\"0.99\"}"),
            Some(0.01)
        );
        assert_eq!(get("kakeai_line_ack_seconds_count"), Some(10.0));
    }
}
