//! The retry policy's pure parts: guidance built from findings, futile-retry detection and the
//! choice of an attempt when every attempt failed (seed 001 §1, seed-origins §10 item 5).

use super::config::Exhaustion;
use super::records::AttemptRecord;
use crate::director::{Finding, RuleId, Status, Verdict};

/// How a guidance line opens: it names the line it comes from, and the detail pane sorts
/// guidance by it ([`kind_of`]).
const RETRY_LEAD: &str = "前回の案";
const OWN_LEAD: &str = "あなたの前の発言";
const NEXT_LEAD: &str = "会話の流れ";
const TOPIC_LEAD: &str = "今の話題の焦点";

/// Who a piece of guidance is for, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuidanceKind {
    /// The reasons an attempt of this turn was rejected.
    Retry,
    /// A critique of the speaker's own last committed line (tone, praise, length …).
    OwnLine,
    /// What concerns the conversation (loop, early shift), for whoever speaks next.
    Conversation,
    /// Where the hook stands.
    Topic,
    Other,
}

/// Sorts a guidance line sent with a prompt by its opening.
pub fn kind_of(g: &str) -> GuidanceKind {
    if g.starts_with(RETRY_LEAD) {
        GuidanceKind::Retry
    } else if g.starts_with(OWN_LEAD) {
        GuidanceKind::OwnLine
    } else if g.starts_with(NEXT_LEAD) {
        GuidanceKind::Conversation
    } else if g.starts_with(TOPIC_LEAD) {
        GuidanceKind::Topic
    } else {
        GuidanceKind::Other
    }
}

/// Whom a finding is for (seed 001 §1, §8): a critique of a line goes to its speaker's next
/// turn; what concerns the conversation goes to the next speaker.
pub fn for_next_speaker(rule: RuleId) -> bool {
    matches!(rule, RuleId::TopicLoop | RuleId::EarlyTopicShift)
}

/// Guidance lines for a regeneration: the rejected attempt (turn and attempt number), then each
/// RETRY reason with its suggestion, worst first.
pub fn retry_guidance(v: &Verdict, turn: usize, attempt: usize) -> Vec<String> {
    // A line the leak review rejected: other findings may quote its words (a topic shift names
    // the new topic), so only the neutral leak guidance goes back.
    let leaked = leak_rejected(v);
    let mut fs: Vec<&Finding> = v
        .findings
        .iter()
        .filter(|f| f.status >= Status::Warn && !crate::vault::review::is_coverage(f))
        .filter(|f| !leaked || f.rule == RuleId::Leak)
        .collect();
    fs.sort_by_key(|f| std::cmp::Reverse(f.status));
    let mut out = vec![format!(
        "{RETRY_LEAD}（ターン{turn}・案{attempt}）は採用されませんでした。次の点を直して言い直してください。"
    )];
    for l in fs.iter().map(|f| line(f)) {
        if !out.contains(&l) {
            out.push(l);
        }
    }
    out
}

/// The intervention a committed line carries forward, split by who it is for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Intervention {
    /// For the speaker's own next turn: critiques of her line.
    pub own: Vec<String>,
    /// For the next speaker: what concerns the conversation.
    pub next: Vec<String>,
}

/// What a committed WARN (or an exhausted RETRY) line of `turn` by `name` carries forward. A
/// RETRY line never enters the conversation state (seed 001 §9), so it carries only the critique
/// of itself, to its speaker.
pub fn intervention(v: &Verdict, turn: usize, name: &str) -> Intervention {
    let mut out = Intervention::default();
    let in_state = v.status < Status::Retry;
    let leaked = leak_rejected(v);
    for f in v.findings.iter().filter(|f| {
        f.status >= Status::Warn
            && f.status != Status::Unscored
            && !crate::vault::review::is_coverage(f)
            && (!leaked || f.rule == RuleId::Leak)
    }) {
        if for_next_speaker(f.rule) {
            if !in_state {
                continue;
            }
            out.next.push(format!(
                "{NEXT_LEAD}（ターン{turn}・{name}の発言から）: {}",
                line(f)
            ));
        } else {
            let l = format!("{OWN_LEAD}（ターン{turn}）への指摘: {}", line(f));
            if !out.own.contains(&l) {
                out.own.push(l);
            }
        }
    }
    out
}

/// Did the leak review reject this verdict's line (a RETRY `leak` finding)? Such a line is
/// never committed as said, never carried into a later prompt.
pub fn leak_rejected(v: &Verdict) -> bool {
    v.findings.iter().any(|f| {
        f.rule == RuleId::Leak && f.status >= Status::Retry && !crate::vault::review::is_coverage(f)
    })
}

/// A finding as guidance. A leak finding is always worded neutrally, whatever the secret's level
/// for the speaker: guidance is stored with the request and may reach a sister (or an export)
/// that must not learn which secret matters.
fn line(f: &Finding) -> String {
    if f.rule == RuleId::Leak {
        let (message, suggestion) = crate::vault::leak::neutral_messages();
        return format!("{message} {suggestion}");
    }
    if f.suggestion.is_empty() {
        f.message.clone()
    } else {
        format!("{} {}", f.message, f.suggestion)
    }
}

/// The RETRY reasons of a verdict, as (rule, message) pairs, for futility checks.
fn retry_reasons(v: &Verdict) -> Vec<(String, String)> {
    let mut r: Vec<(String, String)> = v
        .findings
        .iter()
        .filter(|f| f.status == Status::Retry)
        .map(|f| (f.rule.as_str().to_string(), f.message.clone()))
        .collect();
    r.sort();
    r
}

/// Two RETRY attempts in a row failing the same rules for the same reasons: regenerating again
/// would burn another call for nothing (duo-talk's NoveltyGuard loop, seed-origins §1.10 item 6).
pub fn is_futile(prev: &Verdict, cur: &Verdict) -> bool {
    let a = retry_reasons(prev);
    !a.is_empty() && a == retry_reasons(cur)
}

/// Which of the cycle's attempts to commit when all were RETRY (`Hold` picks none). `Best`:
/// the least severe verdict, then the fewest RETRY findings, then the highest judge mean.
pub fn choose(attempts: &[AttemptRecord], policy: Exhaustion) -> Option<usize> {
    match policy {
        Exhaustion::Hold => None,
        Exhaustion::Last => attempts.len().checked_sub(1),
        Exhaustion::Best => (0..attempts.len()).min_by(|&i, &j| {
            let (a, b) = (&attempts[i], &attempts[j]);
            a.verdict
                .status
                .cmp(&b.verdict.status)
                .then_with(|| a.severe_findings().cmp(&b.severe_findings()))
                .then_with(|| b.judge_mean().total_cmp(&a.judge_mean()))
                .then_with(|| i.cmp(&j))
        }),
    }
}
