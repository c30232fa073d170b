-- PostgreSQL twin of ../migrations/018_gold_labels.sql (same version, same table and columns).
CREATE TABLE gold_labels (
    queue_id   BIGINT NOT NULL REFERENCES review_queues (id) ON DELETE CASCADE,
    subject    BIGINT NOT NULL,
    turn       BIGINT NOT NULL,
    label      TEXT NOT NULL CHECK (label IN ('fine', 'not', 'A', 'B', 'tie')),
    reason     TEXT NOT NULL,
    decided_by TEXT NOT NULL,
    decided_at TEXT NOT NULL,
    PRIMARY KEY (queue_id, subject, turn)
);
