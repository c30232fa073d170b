-- PostgreSQL twin of ../migrations/007_review.sql (same version, same tables and columns; see
-- store::pg::migrate). Integers are BIGINT, ids identity columns, timestamps stay ISO text.
-- 007: the reviewer's day. Every action names its reviewer (NULL: before 007, or an import);
-- the runs browser and the review queue read actions per run and turn. The `kind` CHECK gains
-- 'undo' in Rust (migrate.rs), without rebuilding the table. `requests` keeps the exact request
-- (messages and options) each attempt sent, beside the hash the attempt row already has.
ALTER TABLE actions ADD COLUMN reviewer TEXT;
CREATE INDEX actions_by_run_turn ON actions (run_id, turn);
CREATE TABLE requests (
    attempt_id BIGINT PRIMARY KEY REFERENCES attempts (id) ON DELETE CASCADE,
    request    TEXT NOT NULL
);
-- Regenerating turn N sets the committed turns from N on aside as a branch instead of deleting
-- them: branch 1, 2 … per run in the order they were set aside.
CREATE TABLE branches (
    run_id       BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    branch       BIGINT NOT NULL CHECK (branch >= 1),
    turn         BIGINT NOT NULL CHECK (turn >= 1),
    speaker      TEXT NOT NULL,
    attempt_id   BIGINT REFERENCES attempts (id),
    text         TEXT NOT NULL,
    status       TEXT NOT NULL,
    committed_at TEXT NOT NULL,
    PRIMARY KEY (run_id, branch, turn)
);

-- SQLite widens actions.kind's CHECK in Rust (browse::allow_undo); here it is SQL.
ALTER TABLE actions DROP CONSTRAINT actions_kind_check;
ALTER TABLE actions ADD CONSTRAINT actions_kind_check CHECK (kind IN ('override', 'thumb',
    'feedback', 'note', 'pause', 'resume', 'stop', 'inject', 'regenerate', 'undo'));
