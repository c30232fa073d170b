-- 010 (issue 12): interviews, their messages, and insight cards.
-- User messages are stored only after PII masking, with the SHA-256 of the original.
CREATE TABLE interviews (
    id              INTEGER PRIMARY KEY,
    name            TEXT NOT NULL,
    sister          TEXT NOT NULL CHECK (sister IN ('yana', 'ayu')),
    model           TEXT,
    endpoint        TEXT,
    started_at      TEXT NOT NULL,
    ended_at        TEXT,
    state           TEXT NOT NULL,
    fallback        INTEGER NOT NULL DEFAULT 0,
    finish          TEXT,                       -- completed | turn_limit | fallback_done
    user_turns      INTEGER NOT NULL DEFAULT 0,
    -- none (not finished) | queued | done | not_analysed
    analysis        TEXT NOT NULL DEFAULT 'none'
                    CHECK (analysis IN ('none', 'queued', 'done', 'not_analysed')),
    analysis_error  TEXT,
    keywords        TEXT NOT NULL DEFAULT '[]'  -- JSON: RAKE keywords of this conversation
);
CREATE INDEX interviews_by_name ON interviews (name, id);

CREATE TABLE interview_messages (
    id                    INTEGER PRIMARY KEY,
    interview_id          INTEGER NOT NULL REFERENCES interviews (id) ON DELETE CASCADE,
    seq                   INTEGER NOT NULL,
    role                  TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    state                 TEXT NOT NULL,        -- the state after this message
    content               TEXT NOT NULL,        -- masked for user messages
    original_content_hash TEXT,
    pii_kinds             TEXT NOT NULL DEFAULT '[]',
    source                TEXT NOT NULL,        -- user | model | fallback | closing
    verdict               TEXT,                 -- JSON Verdict of a model reply
    created_at            TEXT NOT NULL,
    UNIQUE (interview_id, seq)
);

-- One card per (scope, theme key). scope: 'interview:<name>' or 'feedback'.
CREATE TABLE insight_cards (
    id          INTEGER PRIMARY KEY,
    scope       TEXT NOT NULL,
    theme_key   TEXT NOT NULL,
    theme       TEXT NOT NULL,
    jtbd        TEXT NOT NULL DEFAULT '',
    summary     TEXT NOT NULL DEFAULT '',
    severity    TEXT NOT NULL DEFAULT 'medium',
    freq        INTEGER NOT NULL DEFAULT 0,
    quotes      TEXT NOT NULL DEFAULT '[]',
    sources     TEXT NOT NULL DEFAULT '[]',
    updated_at  TEXT NOT NULL,
    UNIQUE (scope, theme_key)
);
