-- 001: runs, their attempts (written from the first token), committed turns, reviewer actions.
-- Timestamps are ISO-8601 text; JSON columns hold serde_json text.

CREATE TABLE runs (
    id              INTEGER PRIMARY KEY,
    topic           TEXT NOT NULL,
    model           TEXT,
    endpoint        TEXT,
    api             TEXT,
    options         TEXT NOT NULL DEFAULT '{}',
    persona_version TEXT,
    ruleset_version TEXT,
    started_at      TEXT NOT NULL,
    ended_at        TEXT,
    status          TEXT NOT NULL
                    CHECK (status IN ('running', 'completed', 'stopped', 'failed', 'imported')),
    error           TEXT,
    source          TEXT UNIQUE
);
CREATE INDEX runs_by_start ON runs (started_at);

CREATE TABLE attempts (
    id             INTEGER PRIMARY KEY,
    run_id         INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    turn           INTEGER NOT NULL CHECK (turn >= 1),
    speaker        TEXT NOT NULL CHECK (speaker IN ('yana', 'ayu')),
    attempt        INTEGER NOT NULL CHECK (attempt >= 1),
    state          TEXT NOT NULL CHECK (state IN ('streaming', 'done', 'failed', 'cancelled')),
    text           TEXT,
    status         TEXT CHECK (status IN ('PASS', 'WARN', 'RETRY', 'MODIFY', 'UNSCORED')),
    verdict        TEXT,
    judge          TEXT,
    judge_raw      TEXT,
    guidance       TEXT,
    prompt_hash    TEXT,
    started_at     TEXT NOT NULL,
    first_token_ms INTEGER,
    latency_ms     INTEGER,
    tokens         INTEGER,
    error          TEXT,
    origin         TEXT,
    UNIQUE (run_id, turn, attempt)
);

CREATE TABLE turns (
    run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    turn         INTEGER NOT NULL CHECK (turn >= 1),
    speaker      TEXT NOT NULL CHECK (speaker IN ('yana', 'ayu')),
    attempt_id   INTEGER REFERENCES attempts (id),
    text         TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('PASS', 'WARN', 'RETRY', 'MODIFY', 'UNSCORED')),
    exhausted    INTEGER NOT NULL DEFAULT 0,
    futile       INTEGER NOT NULL DEFAULT 0,
    held         INTEGER NOT NULL DEFAULT 0,
    hook         TEXT,
    hook_depth   INTEGER,
    committed_at TEXT NOT NULL,
    PRIMARY KEY (run_id, turn)
) WITHOUT ROWID;

CREATE TABLE actions (
    id         INTEGER PRIMARY KEY,
    run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    turn       INTEGER,
    attempt_id INTEGER REFERENCES attempts (id),
    kind       TEXT NOT NULL CHECK (kind IN ('override', 'thumb', 'feedback', 'note', 'pause',
                                             'resume', 'stop', 'inject', 'regenerate')),
    payload    TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    source     TEXT UNIQUE
);
CREATE INDEX actions_by_run ON actions (run_id, id);
