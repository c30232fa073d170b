-- Migration 004 (issue 16 §2): digests and pseudonyms become keyed.
-- conversation_messages.original_sha256 and chat_exchanges.original_content_hash now hold
-- HMAC-SHA-256 (under the installation secret, kept outside the database: <data dir>/pii.key
-- or $KAKEAI_PII_KEY_FILE) of the original text's SHA-256, never a plain SHA-256; ids that
-- looked personal are `id-` + 16 hex digits of a keyed HMAC, not of a plain hash. The column
-- names stay for compatibility. The rows written before are re-keyed by the Rust step of this
-- migration (crates/store/src/store/rekey.rs): nothing in SQL can compute an HMAC.
SELECT 1;
