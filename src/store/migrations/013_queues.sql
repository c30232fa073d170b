-- 013: shared review queues (issue 24 §2). A queue is a named filter over committed turns with
-- k reviewers per item and a lease (lock timeout). Items are materialised as turns come to match
-- (every claim refreshes them); who judged an item is read from the action log (a reviewer's
-- 👍/👎 or override in force on the turn), so a mark made anywhere counts.
CREATE TABLE review_queues (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    filter     TEXT NOT NULL,
    k          INTEGER NOT NULL CHECK (k >= 1),
    lease_ms   INTEGER NOT NULL CHECK (lease_ms >= 1000),
    overlap    INTEGER NOT NULL DEFAULT 0 CHECK (overlap IN (0, 1)),
    created_at TEXT NOT NULL,
    created_by TEXT
);
CREATE TABLE queue_items (
    queue_id INTEGER NOT NULL REFERENCES review_queues (id) ON DELETE CASCADE,
    run_id   INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    turn     INTEGER NOT NULL CHECK (turn >= 1),
    added_at TEXT NOT NULL,
    PRIMARY KEY (queue_id, run_id, turn)
);
CREATE TABLE queue_leases (
    queue_id INTEGER NOT NULL,
    run_id   INTEGER NOT NULL,
    turn     INTEGER NOT NULL,
    reviewer TEXT NOT NULL,
    until_ms INTEGER NOT NULL,
    PRIMARY KEY (queue_id, run_id, turn, reviewer),
    FOREIGN KEY (queue_id, run_id, turn) REFERENCES queue_items (queue_id, run_id, turn)
        ON DELETE CASCADE
);
