-- Chat mode (issue 6 §1): one row per user message and the sister's answer. The user's text is
-- stored only after PII masking, with the SHA-256 of the original (seed 003:
-- original_content_hash); the raw text never reaches the database.
CREATE TABLE chat_exchanges (
    id                    INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id       TEXT    NOT NULL,
    character             TEXT    NOT NULL CHECK (character IN ('yana', 'ayu')),
    user_masked           TEXT    NOT NULL,
    original_content_hash TEXT    NOT NULL,
    pii_kinds             TEXT    NOT NULL DEFAULT '[]',  -- JSON array of masked kinds
    action                TEXT    NOT NULL CHECK (action IN ('respond', 'block')),
    safety                TEXT,                           -- JSON: the safety judgment
    source                TEXT    NOT NULL,               -- pattern | llm | blocked | failed
    pattern_id            INTEGER,
    usage_id              INTEGER,
    reply                 TEXT    NOT NULL DEFAULT '',
    verdict               TEXT,                           -- JSON Verdict of the reply
    trace                 TEXT    NOT NULL DEFAULT '[]',  -- JSON array of trace lines
    thumb                 INTEGER CHECK (thumb IN (1, -1)),
    created_at            TEXT    NOT NULL
);
CREATE INDEX idx_chat_conversation ON chat_exchanges(conversation_id, id);
