-- `kakeai serve --line` (issue 11). Webhook events, deduplicated by LINE's webhookEventId (a
-- redelivery after a restart is not answered twice); every LINE message in or out, the user's
-- text only PII-masked with the keyed digest of the original (never the raw text, never a reply
-- token or a secret); and seed 002's judgment cache, exactly as the seed writes it.
CREATE TABLE line_events (
    webhook_event_id TEXT    PRIMARY KEY,
    event_type       TEXT    NOT NULL,
    source_type      TEXT    NOT NULL DEFAULT '',   -- user | group | room
    channel_id       TEXT    NOT NULL DEFAULT '',   -- the group/room/user id (the push address)
    redelivery       INTEGER NOT NULL DEFAULT 0,
    state            TEXT    NOT NULL DEFAULT 'queued', -- queued | done | failed
    received_at      TEXT    NOT NULL
);
CREATE INDEX idx_line_events_state ON line_events(state);

CREATE TABLE line_messages (
    id                    INTEGER PRIMARY KEY AUTOINCREMENT,
    channel_id            TEXT    NOT NULL,
    source_type           TEXT    NOT NULL CHECK (source_type IN ('user', 'group', 'room')),
    thread_ts             TEXT,                          -- quoted root message id; NULL = top
    message_id            TEXT,                          -- LINE's message id (user lines)
    webhook_event_id      TEXT,
    role                  TEXT    NOT NULL CHECK (role IN ('user', 'bot')),
    character             TEXT    NOT NULL CHECK (character IN ('yana', 'ayu')),
    text_masked           TEXT    NOT NULL,
    original_content_hash TEXT    NOT NULL DEFAULT '',
    pii_kinds             TEXT    NOT NULL DEFAULT '[]',
    mention               INTEGER NOT NULL DEFAULT 0,
    at_ms                 INTEGER NOT NULL,
    -- user lines: pending (the checker decides) | answered | blocked | skipped | unsupported
    -- bot lines:  sent | failed
    state                 TEXT    NOT NULL,
    reply_to              INTEGER REFERENCES line_messages(id),
    source                TEXT    NOT NULL DEFAULT '',   -- pattern | llm | fallback | canned
    delivery              TEXT    NOT NULL DEFAULT '',   -- reply | push
    pattern_id            INTEGER,
    usage_id              INTEGER,
    safety                TEXT,
    verdict               TEXT,
    attempts              INTEGER NOT NULL DEFAULT 0,
    review                INTEGER NOT NULL DEFAULT 0,    -- 1: past the budget, a human should look
    verdict_override      TEXT,
    note                  TEXT,
    thumb                 INTEGER CHECK (thumb IN (1, -1)),
    trace                 TEXT    NOT NULL DEFAULT '[]',
    created_at            TEXT    NOT NULL
);
CREATE INDEX idx_line_messages_scope ON line_messages(channel_id, thread_ts, id);
CREATE INDEX idx_line_messages_state ON line_messages(state, role);
CREATE UNIQUE INDEX idx_line_messages_msgid ON line_messages(message_id) WHERE message_id IS NOT NULL;

-- Seed 002 JudgmentCacheModel. thread_ts is '' for the top level (SQLite UNIQUE treats NULLs as
-- distinct, which would break the seed's one-row-per-scope rule); the entity maps '' ↔ None.
CREATE TABLE judgment_caches (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    channel_id        TEXT    NOT NULL,
    thread_ts         TEXT    NOT NULL DEFAULT '',
    should_respond    INTEGER NOT NULL,
    confidence        REAL    NOT NULL,
    reason            TEXT    NOT NULL,
    latest_message_ts TEXT    NOT NULL,
    next_check_at     TEXT    NOT NULL,
    created_at        TEXT    NOT NULL,
    updated_at        TEXT    NOT NULL,
    CONSTRAINT uq_channel_thread UNIQUE (channel_id, thread_ts)
);
CREATE INDEX idx_judgment_caches_channel ON judgment_caches(channel_id);
CREATE INDEX idx_judgment_caches_thread ON judgment_caches(thread_ts);
CREATE INDEX idx_judgment_caches_next ON judgment_caches(next_check_at);
