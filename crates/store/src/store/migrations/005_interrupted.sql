-- 005: runs remember which process runs them (`owner`, a token whose lock file is held while the
-- process lives), so a later start can tell a live run from one a quit or kill -9 left behind.
-- The status CHECK gains 'interrupted' in Rust (migrate.rs), without rebuilding the table.
ALTER TABLE runs ADD COLUMN owner TEXT;
CREATE INDEX runs_by_status ON runs (status);
