-- 017: one PII key per store (issue 41). Every instance of `kakeai serve --line` on one store
-- must hash with the same key, or the same text gets a different stored digest per instance and
-- cross-instance dedup and `serve forget` miss rows. The key stays outside the database (the
-- operator's key file); the store keeps only a keyed check value of a fixed label (it says
-- nothing about the key), written by the first instance, compared by every later one.
CREATE TABLE pii_key_check (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    check_value TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
