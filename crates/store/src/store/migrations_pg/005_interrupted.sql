-- PostgreSQL twin of ../migrations/005_interrupted.sql (same version, same tables and columns; see
-- store::pg::migrate). Integers are BIGINT, ids identity columns, timestamps stay ISO text.
-- 005: runs remember which process runs them (`owner`, a token whose lock file is held while the
-- process lives), so a later start can tell a live run from one a quit or kill -9 left behind.
-- The status CHECK gains 'interrupted' in Rust (migrate.rs), without rebuilding the table.
ALTER TABLE runs ADD COLUMN owner TEXT;
CREATE INDEX runs_by_status ON runs (status);

-- SQLite widens runs.status's CHECK in Rust (migrate::allow_interrupted); here it is SQL.
ALTER TABLE runs DROP CONSTRAINT runs_status_check;
ALTER TABLE runs ADD CONSTRAINT runs_status_check CHECK (status IN
    ('running', 'completed', 'stopped', 'failed', 'imported', 'interrupted'));
