//! Keyed digests (issue 16 §2): HMAC-SHA-256 under a per-installation secret, for the stored
//! digest of an original message and for pseudonyms of identifiers that look personal. Without
//! the secret (kept outside the database, see `keyfile`), a stored digest cannot be checked
//! against guessed originals.
//!
//! Both digests are taken over the SHA-256 of the input rather than the input itself, with a
//! domain label. That is what lets migration 004 re-key rows written before: their unsalted
//! `sha256(text)` and `sha256(id)[:16]` become exactly the digests new writes produce, so a
//! repeat is still recognised and a user keeps one pseudonym across the migration.

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

/// Length in bytes of an installation secret.
pub const KEY_LEN: usize = 32;

const MESSAGE_LABEL: &[u8] = b"kakeai/pii/message\0";
const PSEUDONYM_LABEL: &[u8] = b"kakeai/pii/pseudonym\0";
const CHECK_LABEL: &[u8] = b"kakeai/pii/key-check\0";

/// The prefix of a pseudonym: `id-` and 16 hex digits.
pub const PSEUDONYM_PREFIX: &str = "id-";

/// A per-installation secret, ready to key HMACs.
#[derive(Clone)]
pub struct DigestKey {
    mac: Hmac<Sha256>,
}

impl std::fmt::Debug for DigestKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DigestKey(…)")
    }
}

impl DigestKey {
    pub fn from_bytes(key: &[u8; KEY_LEN]) -> DigestKey {
        DigestKey {
            // HMAC takes keys of any length: this cannot fail.
            mac: <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC accepts any key"),
        }
    }

    fn hmac(&self, parts: &[&[u8]]) -> String {
        let mut mac = self.mac.clone();
        for p in parts {
            mac.update(p);
        }
        hex(&mac.finalize().into_bytes())
    }

    /// The stored digest of an original message whose plain SHA-256 (lowercase hex) is
    /// `sha256_hex`.
    pub fn message_digest_of_sha256(&self, sha256_hex: &str) -> String {
        self.hmac(&[MESSAGE_LABEL, sha256_hex.as_bytes()])
    }

    /// What a store keeps to tell this key from another (`store::pii_key`): a keyed value of
    /// a fixed label, which says nothing about the key itself.
    pub fn check_value(&self) -> String {
        self.hmac(&[CHECK_LABEL])
    }

    /// The stored digest of an original message.
    pub fn message_digest(&self, text: &str) -> String {
        self.message_digest_of_sha256(&sha256_hex(text))
    }

    /// The pseudonym of an identifier: `id-` + 16 hex digits.
    pub fn pseudonym(&self, id: &str) -> String {
        let h = sha256_hex(id);
        self.pseudonym_of_legacy(h.get(..16).unwrap_or(&h))
    }

    /// The pseudonym for a legacy one, `id-` + `legacy16` (the first 16 hex digits of the
    /// identifier's plain SHA-256): the same value [`pseudonym`](Self::pseudonym) gives.
    pub fn pseudonym_of_legacy(&self, legacy16: &str) -> String {
        let h = self.hmac(&[PSEUDONYM_LABEL, legacy16.as_bytes()]);
        format!("{PSEUDONYM_PREFIX}{}", h.get(..16).unwrap_or(&h))
    }
}

/// Whether `id` has the shape of a pseudonym (`id-` + 16 lowercase hex digits).
pub fn is_pseudonym(id: &str) -> bool {
    id.strip_prefix(PSEUDONYM_PREFIX).is_some_and(|h| {
        h.len() == 16
            && h.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// Lowercase hex SHA-256 of `text`'s UTF-8 bytes.
pub fn sha256_hex(text: &str) -> String {
    hex(&Sha256::digest(text.as_bytes()))
}

/// Lowercase hex HMAC-SHA-256 of `data` under `key` (any length), with no label: the bare
/// primitive, exposed for oracle tests.
pub fn hmac_sha256_hex(key: &[u8], data: &[u8]) -> String {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC accepts any key");
    mac.update(data);
    hex(&mac.finalize().into_bytes())
}

fn hex(bytes: &[u8]) -> String {
    // Every message is digested: a table, not the formatter (a tenth of the masking time).
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231_case_2() {
        assert_eq!(
            hmac_sha256_hex(b"Jefe", b"what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn digests_are_keyed_labelled_and_migratable() {
        let a = DigestKey::from_bytes(&[1; KEY_LEN]);
        let b = DigestKey::from_bytes(&[2; KEY_LEN]);
        let text = "田中さんの電話は090-1234-5678";
        let sha = sha256_hex(text);
        assert_ne!(a.message_digest(text), b.message_digest(text));
        assert_ne!(a.message_digest(text), sha);
        assert_eq!(a.message_digest(text), a.message_digest_of_sha256(&sha));
        let mut label = MESSAGE_LABEL.to_vec();
        label.extend_from_slice(sha.as_bytes());
        assert_eq!(
            a.message_digest(text),
            hmac_sha256_hex(&[1; KEY_LEN], &label)
        );
        let p = a.pseudonym("taro@example.com");
        assert!(is_pseudonym(&p), "{p}");
        assert_ne!(p, format!("id-{}", &sha256_hex("taro@example.com")[..16]));
        assert_eq!(
            p,
            a.pseudonym_of_legacy(&sha256_hex("taro@example.com")[..16])
        );
        assert_ne!(p, b.pseudonym("taro@example.com"));
        assert!(!is_pseudonym("id-XYZ") && !is_pseudonym("user-1"));
        assert_eq!(format!("{a:?}"), "DigestKey(…)");
    }
}
