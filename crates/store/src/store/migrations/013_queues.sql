-- 013: shared review queues (issue 24 §2). A queue is a named filter over committed turns with
-- k reviewers per item and a lease (lock timeout). Items are materialised as turns come to match
-- (every claim refreshes them); who judged an item is read from the action log (a reviewer's
-- 👍/👎 or override in force on the turn), so a mark made anywhere counts. A pairwise queue
-- (comparison_id set) holds the turns of one paired comparison; its judgements are
-- `pairwise_marks` (A better / B better / tie, with a reason; the latest per reviewer counts).
-- An item's `subject` is the run id (turn queues) or the comparison id (pairwise queues).
CREATE TABLE review_queues (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    filter     TEXT NOT NULL,
    k          INTEGER NOT NULL CHECK (k >= 1),
    lease_ms   INTEGER NOT NULL CHECK (lease_ms >= 1000),
    overlap    INTEGER NOT NULL DEFAULT 0 CHECK (overlap IN (0, 1)),
    comparison_id INTEGER REFERENCES comparisons (id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    created_by TEXT
);
CREATE TABLE queue_items (
    queue_id INTEGER NOT NULL REFERENCES review_queues (id) ON DELETE CASCADE,
    subject  INTEGER NOT NULL,
    turn     INTEGER NOT NULL CHECK (turn >= 1),
    added_at TEXT NOT NULL,
    PRIMARY KEY (queue_id, subject, turn)
);
CREATE TABLE queue_leases (
    queue_id INTEGER NOT NULL,
    subject  INTEGER NOT NULL,
    turn     INTEGER NOT NULL,
    reviewer TEXT NOT NULL,
    until_ms INTEGER NOT NULL,
    PRIMARY KEY (queue_id, subject, turn, reviewer),
    FOREIGN KEY (queue_id, subject, turn) REFERENCES queue_items (queue_id, subject, turn)
        ON DELETE CASCADE
);
CREATE TABLE pairwise_marks (
    id            INTEGER PRIMARY KEY,
    comparison_id INTEGER NOT NULL REFERENCES comparisons (id) ON DELETE CASCADE,
    turn          INTEGER NOT NULL CHECK (turn >= 1),
    reviewer      TEXT NOT NULL,
    choice        TEXT NOT NULL CHECK (choice IN ('A', 'B', 'tie')),
    reason        TEXT NOT NULL DEFAULT '',
    created_at    TEXT NOT NULL
);
CREATE INDEX pairwise_by_comparison ON pairwise_marks (comparison_id, turn, id);
