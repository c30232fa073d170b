//! The operator's side of `kakeai serve`: `serve forget ID` (a user's data deleted) and the
//! SIGHUP handler (the vault reloaded; secrets and settings are read at start only).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::serve::Services;
use crate::store::Store;

/// `kakeai serve forget ID`: exit 0 deleted (counts printed), 1 nothing stored about it, 2 not a
/// LINE id (nothing opened) or no store, 4 the store stayed locked.
pub fn forget(id: &str, db: Option<&Path>) -> i32 {
    let id = id.trim();
    if !is_line_id(id) {
        crate::say!(
            "kakeai serve forget: {id:?} is not a LINE user, group or room id \
             (U, C or R and 32 hex digits, as in the webhook's source)"
        );
        return 2;
    }
    // A file that must exist, or the bot's PostgreSQL database.
    let mut store = match Store::open_existing(db, false) {
        Ok(s) => s,
        Err((e, code)) => {
            crate::say!("kakeai serve forget: {e}");
            return code;
        }
    };
    match forget_in(&mut store, id) {
        Ok(n) if n.iter().all(|(_, c)| *c == 0) => {
            println!("nothing stored about {id}");
            1
        }
        Ok(n) => {
            for (what, c) in n {
                println!("{what:<44} {c}");
            }
            println!(
                "(patterns registered from their lines keep their masked example; the counters stay)"
            );
            0
        }
        Err(e) => {
            crate::say!("kakeai serve forget: {e}");
            crate::cli::patterns::store_code(crate::store::write::BusyCheck::is_busy(&e))
        }
    }
}

/// A LINE userId, groupId or roomId as LINE writes them: `U`, `C` or `R` and 32 lowercase hex
/// digits. Anything else is a typo and never reaches the store.
pub fn is_line_id(id: &str) -> bool {
    let mut c = id.chars();
    matches!(c.next(), Some('U' | 'C' | 'R'))
        && id.len() == 33
        && c.all(|d| d.is_ascii_digit() || ('a'..='f').contains(&d))
}

/// Deletes (in one transaction) what the store holds about chat `id`; the counts per table.
/// On either engine.
pub fn forget_in(
    store: &mut Store,
    id: &str,
) -> Result<Vec<(&'static str, usize)>, crate::store::StoreError> {
    let conv = crate::serve::pipeline::conversation(id);
    store.transact(|tx| {
        let drafts = tx.execute(
            "DELETE FROM counterfactual_drafts WHERE dropout_id IN
               (SELECT message_id FROM conversation_messages WHERE conversation_id = ?1)",
            crate::p![conv],
        )?;
        let log = tx.execute(
            "DELETE FROM conversation_messages WHERE conversation_id = ?1",
            crate::p![conv],
        )?;
        let usage = tx.execute(
            "UPDATE prowrestling_usage_log SET user_message = NULL, user_id = NULL,
               conversation_id = NULL WHERE conversation_id = ?1",
            crate::p![conv],
        )?;
        tx.execute(
            "DELETE FROM conversations WHERE conversation_id = ?1",
            crate::p![conv],
        )?;
        // A person's lines inside groups and rooms (and her replies to them) go too.
        let in_groups = tx.execute(
            "DELETE FROM line_messages WHERE reply_to IN
               (SELECT id FROM line_messages WHERE speaker = ?1)",
            crate::p![id],
        )? + tx.execute(
            "DELETE FROM line_messages WHERE speaker = ?1",
            crate::p![id],
        )?;
        let messages = tx.execute(
            "DELETE FROM line_messages WHERE channel_id = ?1",
            crate::p![id],
        )? + in_groups;
        let events = tx.execute(
            "DELETE FROM line_events WHERE channel_id = ?1",
            crate::p![id],
        )?;
        let caches = tx.execute(
            "DELETE FROM judgment_caches WHERE channel_id = ?1",
            crate::p![id],
        )?;
        Ok(vec![
            ("LINE messages (theirs and her replies)", messages),
            ("webhook events", events),
            ("judgment cache rows", caches),
            ("conversation-log lines", log),
            ("counterfactual drafts on their dropouts", drafts),
            ("pattern uses anonymised", usage),
        ])
    })
}

/// Listens for SIGHUP (before the server says it listens, so a hang-up never kills it).
#[cfg(unix)]
pub fn listen_hangups() -> Option<tokio::signal::unix::Signal> {
    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok()
}

/// On each SIGHUP: the vault is read again from its folder (the old one stays when the new one
/// does not load); LINE secrets and settings are read at start only (the log says so).
#[cfg(unix)]
pub async fn hangups(
    svc: Arc<Services>,
    mut hup: tokio::signal::unix::Signal,
    dir: Option<PathBuf>,
    work: Option<String>,
) {
    while hup.recv().await.is_some() {
        reload(&svc, dir.as_deref(), work.as_deref());
    }
}

fn reload(svc: &Services, dir: Option<&Path>, work: Option<&str>) {
    match (&svc.vault, dir) {
        (Some(v), Some(d)) => match crate::vault::load::load_vault(d, work) {
            Ok(w) => {
                v.replace(w);
                svc.log
                    .write("sighup", &format!("vault reloaded from {}", d.display()));
                let lines = svc.cfg.lines();
                for (name, text) in [
                    ("fallback", &lines.fallback),
                    ("text_only", &lines.text_only),
                ] {
                    let (verdict, _) =
                        crate::serve::pipeline::checks(svc).judge(&svc.me, &[], text, &[]);
                    if !crate::chat::usable(&verdict) {
                        svc.log.write(
                            "sighup",
                            &format!(
                                "WARNING: with this vault her {name} line is {} ({}): turns with no usable line will send NOTHING",
                                verdict.status,
                                crate::chat::verdict::blocking_rules(&verdict)
                            ),
                        );
                    }
                }
            }
            Err(e) => svc.log.write(
                "sighup",
                &format!("vault NOT reloaded (the old one stays): {e}"),
            ),
        },
        _ => svc
            .log
            .write("sighup", "no vault folder (--no-vault): nothing to reload"),
    }
    svc.log.write(
        "sighup",
        "LINE secrets and serve settings are read at start only: restart to change them",
    );
}

#[cfg(test)]
mod tests {
    use super::is_line_id;

    #[test]
    fn only_line_shaped_ids_are_taken() {
        let mut rng = crate::test_rng::Rng::new(43);
        for _ in 0..200 {
            let hex: String = (0..32)
                .map(|_| char::from_digit(rng.below(16) as u32, 16).unwrap())
                .collect();
            for k in ['U', 'C', 'R'] {
                let id = format!("{k}{hex}");
                assert!(is_line_id(&id), "{id}");
                // One character more or less, another kind letter, upper-case hex: refused.
                assert!(!is_line_id(&id[..32]), "{id}");
                assert!(!is_line_id(&format!("{id}0")), "{id}");
                assert!(!is_line_id(&format!("X{hex}")), "{id}");
                let at = 1 + rng.below(32);
                let mut bad = id.clone();
                bad.replace_range(at..at + 1, "g");
                assert!(!is_line_id(&bad), "{bad}");
            }
        }
        for word in ["bogus", "", "U", "Uabc", "U'; DROP TABLE x", "Ｕ０１２"] {
            assert!(!is_line_id(word), "{word}");
        }
    }
}
