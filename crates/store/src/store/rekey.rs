//! The Rust step of migration 004 (issue 16 §2): rows written before it kept an unsalted
//! SHA-256 of each original message, and `id-` + `sha256(id)[:16]` for ids that looked
//! personal — anyone could test guesses against them. Each is replaced by the keyed value new
//! writes produce (`DigestKey::message_digest_of_sha256`, `pseudonym_of_legacy`), so a repeat
//! is still recognised and a user keeps one pseudonym, while the old values are gone. The
//! chat trace's `SHA-256 <12 hex>…` note is rewritten too. Needs the installation secret only
//! when there is something to re-key.

use rusqlite::{Transaction, params};

use super::StoreError;
use crate::safety::pii::digest::{DigestKey, is_pseudonym};

/// Columns that may hold a legacy pseudonym.
const ID_COLUMNS: [(&str, &str); 6] = [
    ("conversations", "conversation_id"),
    ("conversations", "user_id"),
    ("conversation_messages", "conversation_id"),
    ("prowrestling_usage_log", "conversation_id"),
    ("prowrestling_usage_log", "user_id"),
    ("chat_exchanges", "conversation_id"),
];

fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn sql(e: rusqlite::Error) -> StoreError {
    StoreError::from(e)
}

pub(super) fn migrate(tx: &Transaction) -> Result<(), StoreError> {
    let count =
        |q: &str| -> Result<i64, StoreError> { tx.query_row(q, [], |r| r.get(0)).map_err(sql) };
    let mut pending = count("SELECT COUNT(*) FROM conversation_messages")?
        + count("SELECT COUNT(*) FROM chat_exchanges")?;
    for (table, col) in ID_COLUMNS {
        pending += count(&format!(
            "SELECT COUNT(*) FROM {table} WHERE {col} LIKE 'id-%'"
        ))?;
    }
    if pending == 0 {
        return Ok(());
    }
    let key = crate::safety::pii::installation_key().map_err(|e| {
        StoreError::Invalid(format!(
            "migration 004 (keyed digests) needs the PII key: {e}"
        ))
    })?;
    rekey(tx, key)
}

fn rekey(tx: &Transaction, key: &DigestKey) -> Result<(), StoreError> {
    // Parent and child keys change together; checked at commit.
    tx.execute_batch("PRAGMA defer_foreign_keys = ON")
        .map_err(sql)?;
    let rows: Vec<(i64, String)> = tx
        .prepare("SELECT message_id, original_sha256 FROM conversation_messages")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    for (id, old) in rows.into_iter().filter(|(_, d)| is_sha256_hex(d)) {
        tx.execute(
            "UPDATE conversation_messages SET original_sha256 = ?2 WHERE message_id = ?1",
            params![id, key.message_digest_of_sha256(&old)],
        )?;
    }
    let rows: Vec<(i64, String, String)> = tx
        .prepare("SELECT id, original_content_hash, trace FROM chat_exchanges")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    for (id, old, trace) in rows.into_iter().filter(|(_, d, _)| is_sha256_hex(d)) {
        let new = key.message_digest_of_sha256(&old);
        let trace = trace.replace(
            &format!("SHA-256 {}…", &old[..12]),
            &format!("keyed digest {}…", &new[..12]),
        );
        tx.execute(
            "UPDATE chat_exchanges SET original_content_hash = ?2, trace = ?3 WHERE id = ?1",
            params![id, new, trace],
        )?;
    }
    for (table, col) in ID_COLUMNS {
        let olds: Vec<String> = tx
            .prepare(&format!(
                "SELECT DISTINCT {col} FROM {table} WHERE {col} LIKE 'id-%'"
            ))?
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        for old in olds.into_iter().filter(|o| is_pseudonym(o)) {
            let new = key.pseudonym_of_legacy(&old[3..]);
            tx.execute(
                &format!("UPDATE {table} SET {col} = ?2 WHERE {col} = ?1"),
                params![old, new],
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use crate::safety::pii::{installation_key, sha256_hex};
    use crate::store::Store;

    const V3: [&str; 3] = [
        include_str!("migrations/001_init.sql"),
        include_str!("migrations/002_patterns.sql"),
        include_str!("migrations/003_chat.sql"),
    ];

    fn all_text(conn: &Connection) -> String {
        let mut out = String::new();
        for t in ["conversations", "conversation_messages", "chat_exchanges"] {
            let mut st = conn.prepare(&format!("SELECT * FROM {t}")).unwrap();
            let n = st.column_count();
            let rows = st
                .query_map([], |r| {
                    let mut s = String::new();
                    for i in 0..n {
                        if let Ok(v) = r.get::<_, String>(i) {
                            s.push_str(&v);
                            s.push('|');
                        }
                    }
                    Ok(s)
                })
                .unwrap();
            for r in rows {
                out.push_str(&r.unwrap());
            }
        }
        out
    }

    #[test]
    fn a_version_3_store_is_re_keyed_and_keeps_its_links() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        let text = "田中さんの電話は090-1234-5678";
        let email = "taro@example.com";
        let conv_raw = "hanako@example.org";
        let old_msg = sha256_hex(text);
        let old_user = format!("id-{}", &sha256_hex(email)[..16]);
        let old_conv = format!("id-{}", &sha256_hex(conv_raw)[..16]);
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON;")
                .unwrap();
            for sql in V3 {
                conn.execute_batch(sql).unwrap();
            }
            conn.pragma_update(None, "user_version", 3).unwrap();
            conn.execute(
                "INSERT INTO conversations VALUES (?1, ?2, 't', 't', 't')",
                [&old_conv, &old_user],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO conversation_messages (conversation_id, role, text, original_sha256,
                     pii_detected, at_ms, at) VALUES (?1, 'user', '[氏名]さんの電話は[電話番号]', ?2, 1, 5, 't')",
                [&old_conv, &old_msg],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO chat_exchanges (conversation_id, character, user_masked,
                     original_content_hash, action, source, trace, created_at)
                 VALUES ('chat-1', 'yana', '[氏名]さん', ?1, 'respond', 'llm', ?2, 't')",
                [
                    &old_msg,
                    &format!(
                        r#"["PII: masked 氏名 (only the text's SHA-256 {}… is kept)"]"#,
                        &old_msg[..12]
                    ),
                ],
            )
            .unwrap();
        }
        let store = Store::open(&path).unwrap();
        let conn = store.conn();
        let key = installation_key().unwrap();
        let (conv, user): (String, String) = conn
            .query_row(
                "SELECT conversation_id, user_id FROM conversations",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        // Exactly what a new write of the same id and text produces.
        assert_eq!(user, key.pseudonym(email));
        assert_eq!(conv, key.pseudonym(conv_raw));
        let (mconv, digest): (String, String) = conn
            .query_row(
                "SELECT conversation_id, original_sha256 FROM conversation_messages",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(mconv, conv, "the message still belongs to its conversation");
        assert_eq!(digest, key.message_digest(text));
        let (hash, trace): (String, String) = conn
            .query_row(
                "SELECT original_content_hash, trace FROM chat_exchanges",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(hash, key.message_digest(text));
        assert!(
            trace.contains(&format!("keyed digest {}…", &hash[..12])),
            "{trace}"
        );
        // Nothing unkeyed is left anywhere.
        let dump = all_text(conn);
        for old in [&old_msg[..12], &old_user[3..], &old_conv[3..]] {
            assert!(!dump.contains(old), "{old} still stored: {dump}");
        }
        let fk: i64 = conn
            .query_row("SELECT COUNT(*) FROM pragma_foreign_key_check", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(fk, 0);
    }

    #[test]
    fn an_empty_store_migrates_without_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.db");
        let store = Store::open(&path).unwrap();
        drop(store);
        let conn = rusqlite::Connection::open(&path).unwrap();
        let v: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert!(v >= 4, "the re-keying step ran");
        assert_eq!(v, Store::schema_version());
    }
}
