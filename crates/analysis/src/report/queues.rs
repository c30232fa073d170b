//! The report's review-queue section (issue 41): for every queue, its progress, each reviewer's
//! count and pace (items per hour, and in the last hour) and the queue's guidelines. Read only:
//! the items are the ones the store holds now (a claim or `queue show` refreshes them).

use std::fmt::Write as _;

use super::html::{esc, missing};
use crate::annotate::{db, team};
use crate::store::Store;

/// The section, or a line saying why it could not be read (never a silent gap).
pub fn section(store: &Store, now_ms: i64) -> String {
    let mut b = String::from("<h2>レビューキュー</h2>");
    match body(store, now_ms) {
        Ok(s) if s.is_empty() => b.push_str(&missing("queues", "no review queue in this store")),
        Ok(s) => b.push_str(&s),
        Err(e) => b.push_str(&missing("queues", &format!("could not be read: {e}"))),
    }
    b
}

fn body(store: &Store, now_ms: i64) -> Result<String, crate::annotate::QueueError> {
    let mut b = String::new();
    for q in db::list(store.db())? {
        let states = db::states(store.db(), &q)?;
        let done = states
            .iter()
            .filter(|(_, s)| s.judged_by.len() >= q.spec.k as usize)
            .count();
        let mut judged: std::collections::BTreeMap<&str, usize> = Default::default();
        for who in states.iter().flat_map(|(_, s)| s.judged_by.iter()) {
            *judged.entry(who.as_str()).or_default() += 1;
        }
        let pace = team::pace(store.db(), &q, now_ms)?;
        let _ = write!(
            b,
            "<h3>{}</h3><p class=\"meta\">{} · k={} · {}/{} done</p>",
            esc(&q.spec.name),
            esc(&q.spec.filter.describe()),
            q.spec.k,
            done,
            states.len()
        );
        b.push_str(
            "<table class=\"pace\"><tr><th class=\"who\">reviewer</th><th class=\"n\">judged</th>\
             <th class=\"n\">items/h</th><th class=\"n\">last hour</th></tr>",
        );
        for (who, n) in &judged {
            let p = pace.get(*who).copied().unwrap_or_default();
            let rate = p.per_hour().map_or("—".to_string(), |r| format!("{r:.1}"));
            let _ = write!(
                b,
                "<tr><td class=\"who\">{}</td><td class=\"n\">{n}</td><td class=\"n\">{rate}</td>\
                 <td class=\"n\">{}</td></tr>",
                esc(who),
                p.last_hour
            );
        }
        b.push_str("</table>");
        match team::guidelines(store.db(), &q.spec.name)? {
            Some(g) => {
                let _ = write!(
                    b,
                    "<h4>guidelines</h4><pre class=\"guidelines\">{}</pre>",
                    esc(&g)
                );
            }
            None => b.push_str("<p class=\"meta\">no guidelines written for this queue</p>"),
        }
    }
    Ok(b)
}
