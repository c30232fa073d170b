//! One PII key per store (issue 41): the keyed digests and pseudonyms a store holds are only
//! comparable when every process writing them used the same key. The key itself never enters
//! the database (it stays in the operator's key file, `safety::pii::keyfile`); the store keeps
//! a check value of it (`pii_key_check`, migration 017), written by the first process that asks
//! and compared by every later one — a process whose key file differs is refused before it
//! writes a digest, with what to do.

use crate::p;
use crate::safety::pii::DigestKey;

use super::{Store, StoreError};

/// Records `key`'s check value when the store has none yet, else compares it: `Ok(Err(why))`
/// when this key is not the store's.
pub fn check(
    store: &mut Store,
    key: &DigestKey,
    key_file: &str,
) -> Result<Result<(), String>, StoreError> {
    let mine = key.check_value();
    let stored: String = store.transact(|tx| {
        tx.execute(
            "INSERT INTO pii_key_check (id, check_value, created_at) VALUES (1, ?1, ?2)
             ON CONFLICT (id) DO NOTHING",
            p![mine, super::time::now_iso()],
        )?;
        Ok(tx.one("SELECT check_value FROM pii_key_check WHERE id = 1", p![])?)
    })?;
    if stored == mine {
        return Ok(Ok(()));
    }
    Ok(Err(format!(
        "{}: this store's PII key is not the one in {key_file} (check {}…, yours {}…): every \
         process on one store must hash with the same key — copy the key file of the instance \
         that first used this store here (mode 0600), or point KAKEAI_PII_KEY_FILE at it",
        store.path().display(),
        &stored[..stored.len().min(8)],
        &mine[..mine.len().min(8)]
    )))
}
