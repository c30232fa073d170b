-- 007: the reviewer's day. Every action names its reviewer (NULL: before 007, or an import);
-- the runs browser and the review queue read actions per run and turn. The `kind` CHECK gains
-- 'undo' in Rust (migrate.rs), without rebuilding the table. `requests` keeps the exact request
-- (messages and options) each attempt sent, beside the hash the attempt row already has.
ALTER TABLE actions ADD COLUMN reviewer TEXT;
CREATE INDEX actions_by_run_turn ON actions (run_id, turn);
CREATE TABLE requests (
    attempt_id INTEGER PRIMARY KEY REFERENCES attempts (id) ON DELETE CASCADE,
    request    TEXT NOT NULL
);
-- Regenerating turn N sets the committed turns from N on aside as a branch instead of deleting
-- them: branch 1, 2 … per run in the order they were set aside.
CREATE TABLE branches (
    run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    branch       INTEGER NOT NULL CHECK (branch >= 1),
    turn         INTEGER NOT NULL CHECK (turn >= 1),
    speaker      TEXT NOT NULL,
    attempt_id   INTEGER REFERENCES attempts (id),
    text         TEXT NOT NULL,
    status       TEXT NOT NULL,
    committed_at TEXT NOT NULL,
    PRIMARY KEY (run_id, branch, turn)
) WITHOUT ROWID;
