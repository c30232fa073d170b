-- 018: adjudication (issue 41). Where a queue's reviewers disagree, a lead decides the item's
-- gold label and says why; one gold label per item of a queue (a new decision replaces it).
-- Labels: fine / not in a turn queue, A / B / tie in a pairwise one.
CREATE TABLE gold_labels (
    queue_id   INTEGER NOT NULL REFERENCES review_queues (id) ON DELETE CASCADE,
    subject    INTEGER NOT NULL,
    turn       INTEGER NOT NULL,
    label      TEXT NOT NULL CHECK (label IN ('fine', 'not', 'A', 'B', 'tie')),
    reason     TEXT NOT NULL,
    decided_by TEXT NOT NULL,
    decided_at TEXT NOT NULL,
    PRIMARY KEY (queue_id, subject, turn)
);
