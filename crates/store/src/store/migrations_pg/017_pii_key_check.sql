-- PostgreSQL twin of ../migrations/017_pii_key_check.sql (same version, same table and columns).
CREATE TABLE pii_key_check (
    id          BIGINT PRIMARY KEY CHECK (id = 1),
    check_value TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
