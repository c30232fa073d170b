-- 002: the プロレス reply-pattern DB (seed 000 §5.1, §5.2) with its two tables exactly as the
-- seed writes them, plus what kakeai adds around them without touching their definitions:
-- value checks as triggers, an index for best match, and the conversation log that the
-- learning loop (seed 000 §7) ingests. kakeai writes every timestamp as ISO-8601 UTC text.

-- ── seed 000 §5.1, verbatim ─────────────────────────────────────────────────────────────────
CREATE TABLE IF NOT EXISTS prowrestling_patterns (
    pattern_id INTEGER PRIMARY KEY AUTOINCREMENT,

    -- パターン情報
    user_message_type TEXT NOT NULL,
    user_message_example TEXT NOT NULL,
    bot_response TEXT NOT NULL,
    bot_response_type TEXT NOT NULL,
    character TEXT NOT NULL,

    -- 実績データ
    used_count INTEGER DEFAULT 0,
    success_count INTEGER DEFAULT 0,
    failure_count INTEGER DEFAULT 0,
    success_rate REAL GENERATED ALWAYS AS (
        CASE
            WHEN (success_count + failure_count) > 0
            THEN CAST(success_count AS REAL) / (success_count + failure_count)
            ELSE 0.0
        END
    ) STORED,

    -- 👍 / 👎 フィードバック（★今回追加）
    like_count INTEGER DEFAULT 0,
    dislike_count INTEGER DEFAULT 0,
    like_rate REAL GENERATED ALWAYS AS (
        CASE
            WHEN (like_count + dislike_count) > 0
            THEN CAST(like_count AS REAL) / (like_count + dislike_count)
            ELSE 0.0
        END
    ) STORED,

    -- 反実仮想フラグ（MVPでは使っても使わなくてもよい）
    is_counterfactual BOOLEAN DEFAULT 0,

    -- メタ情報
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    last_used_at TIMESTAMP,
    updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,

    UNIQUE(user_message_type, bot_response, character)
);

CREATE INDEX IF NOT EXISTS idx_character_success_rate
    ON prowrestling_patterns(character, success_rate DESC);

CREATE INDEX IF NOT EXISTS idx_message_type
    ON prowrestling_patterns(user_message_type);

-- ── seed 000 §5.2, verbatim ─────────────────────────────────────────────────────────────────
CREATE TABLE IF NOT EXISTS prowrestling_usage_log (
    log_id INTEGER PRIMARY KEY AUTOINCREMENT,
    pattern_id INTEGER,

    conversation_id TEXT,
    user_id TEXT,
    user_message TEXT,
    bot_response TEXT,

    user_reaction TEXT,
    reaction_time_seconds INTEGER,
    next_message_exists BOOLEAN,

    -- NEW: フィードバック
    --  1  = 👍
    -- -1  = 👎
    -- NULL = 未評価
    feedback INTEGER,

    character TEXT,
    timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP,

    FOREIGN KEY (pattern_id) REFERENCES prowrestling_patterns(pattern_id)
);

CREATE INDEX IF NOT EXISTS idx_pattern_reaction
    ON prowrestling_usage_log(pattern_id, user_reaction);

CREATE INDEX IF NOT EXISTS idx_pattern_feedback
    ON prowrestling_usage_log(pattern_id, feedback);

-- ── kakeai: value checks ────────────────────────────────────────────────────────────────────
-- Triggers rather than CHECK clauses, so the seed's CREATE TABLE statements stay as written.
-- The library validates first and says which field is wrong; these catch any other writer.
CREATE TRIGGER prowrestling_patterns_values_insert
BEFORE INSERT ON prowrestling_patterns
WHEN NEW.bot_response_type NOT IN ('プロレス受け', '流し', 'カウンター')
  OR NEW.character NOT IN ('yana', 'ayu')
BEGIN
    SELECT RAISE(ABORT, 'prowrestling_patterns: bot_response_type must be プロレス受け, 流し or カウンター; character must be yana or ayu');
END;

CREATE TRIGGER prowrestling_patterns_values_update
BEFORE UPDATE OF bot_response_type, character ON prowrestling_patterns
WHEN NEW.bot_response_type NOT IN ('プロレス受け', '流し', 'カウンター')
  OR NEW.character NOT IN ('yana', 'ayu')
BEGIN
    SELECT RAISE(ABORT, 'prowrestling_patterns: bot_response_type must be プロレス受け, 流し or カウンター; character must be yana or ayu');
END;

-- user_reaction is kakeai's outcome label: NULL = not resolved yet, 'replied' = the user
-- answered within the dropout window, 'continued' = and then spoke again (the banter went on),
-- 'dropout' = no answer within the window.
CREATE TRIGGER prowrestling_usage_log_values_insert
BEFORE INSERT ON prowrestling_usage_log
WHEN (NEW.character IS NOT NULL AND NEW.character NOT IN ('yana', 'ayu'))
  OR (NEW.feedback IS NOT NULL AND NEW.feedback NOT IN (1, -1))
  OR (NEW.user_reaction IS NOT NULL AND NEW.user_reaction NOT IN ('replied', 'continued', 'dropout'))
BEGIN
    SELECT RAISE(ABORT, 'prowrestling_usage_log: character must be yana or ayu, feedback 1 or -1, user_reaction replied, continued or dropout');
END;

CREATE TRIGGER prowrestling_usage_log_values_update
BEFORE UPDATE OF character, feedback, user_reaction ON prowrestling_usage_log
WHEN (NEW.character IS NOT NULL AND NEW.character NOT IN ('yana', 'ayu'))
  OR (NEW.feedback IS NOT NULL AND NEW.feedback NOT IN (1, -1))
  OR (NEW.user_reaction IS NOT NULL AND NEW.user_reaction NOT IN ('replied', 'continued', 'dropout'))
BEGIN
    SELECT RAISE(ABORT, 'prowrestling_usage_log: character must be yana or ayu, feedback 1 or -1, user_reaction replied, continued or dropout');
END;

-- ── kakeai: best match ──────────────────────────────────────────────────────────────────────
-- The seed's ORDER BY key (§6.3) as an expression index: best match walks it in order and
-- stops at the first row that passes the success threshold, instead of sorting every pattern
-- of the character. success_rate rides along so the threshold is checked inside the index.
CREATE INDEX idx_pattern_best
    ON prowrestling_patterns(character, (success_rate * 0.6 + like_rate * 0.4) DESC,
                             pattern_id, success_rate);

-- The same, for a caller that knows the message's type (best match prefers that type).
CREATE INDEX idx_pattern_best_by_type
    ON prowrestling_patterns(character, user_message_type,
                             (success_rate * 0.6 + like_rate * 0.4) DESC, pattern_id, success_rate);

-- ── kakeai: the conversation log (seed 000 §7 Phase 1, `kakeai ingest`) ─────────────────────
-- One row per conversation; user_id is the log's id, or a hash of it when it looked like PII.
CREATE TABLE conversations (
    conversation_id TEXT PRIMARY KEY,
    user_id         TEXT NOT NULL,
    first_at        TEXT NOT NULL,
    last_at         TEXT NOT NULL,
    ingested_at     TEXT NOT NULL
);

-- One row per message. text is PII-masked (user and bot lines alike: a bot can echo a name it
-- was told); original_sha256 is the SHA-256 of the raw text, which is never stored. A message
-- ingested twice (same conversation, role, instant and raw text) is kept once.
CREATE TABLE conversation_messages (
    message_id      INTEGER PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations (conversation_id),
    role            TEXT NOT NULL CHECK (role IN ('user', 'bot')),
    text            TEXT NOT NULL,
    original_sha256 TEXT NOT NULL,
    pii_detected    INTEGER NOT NULL DEFAULT 0,
    at_ms           INTEGER NOT NULL,
    at              TEXT NOT NULL,
    character       TEXT CHECK (character IN ('yana', 'ayu')),
    pattern_id      INTEGER REFERENCES prowrestling_patterns (pattern_id),
    log_id          INTEGER REFERENCES prowrestling_usage_log (log_id),
    source          TEXT,
    UNIQUE (conversation_id, role, at_ms, original_sha256)
);
CREATE INDEX conversation_messages_by_time
    ON conversation_messages (conversation_id, at_ms, message_id);

-- The LLM's counterfactual replies for one dropout (a bot message's id), one per reply type;
-- pattern_id is set once a reviewer accepted (possibly edited) the draft.
CREATE TABLE counterfactual_drafts (
    dropout_id        INTEGER NOT NULL REFERENCES conversation_messages (message_id),
    bot_response_type TEXT NOT NULL CHECK (bot_response_type IN ('プロレス受け', '流し', 'カウンター')),
    text              TEXT NOT NULL,
    user_message_type TEXT,
    model             TEXT,
    created_at        TEXT NOT NULL,
    pattern_id        INTEGER REFERENCES prowrestling_patterns (pattern_id),
    PRIMARY KEY (dropout_id, bot_response_type)
);
