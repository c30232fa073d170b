-- 008: paired and unpaired comparisons (issue 15). One row per comparison: the baseline run
-- (NULL in unpaired mode), the variant file's text and hash, the summary JSON; one row per
-- compared turn with A's and B's judged lines as JSON. B's generated attempts live in ordinary
-- runs (one per sample) named in `sample_runs`, so every other reader of attempts sees them.
CREATE TABLE comparisons (
    id            INTEGER PRIMARY KEY,
    kind          TEXT NOT NULL CHECK (kind IN ('paired', 'unpaired')),
    baseline_run  INTEGER REFERENCES runs (id) ON DELETE SET NULL,
    variant_name  TEXT NOT NULL,
    variant_path  TEXT,
    variant_text  TEXT NOT NULL,
    variant_hash  TEXT NOT NULL,
    model         TEXT,
    endpoint      TEXT,
    options       TEXT NOT NULL DEFAULT '{}',
    sample_runs   TEXT NOT NULL DEFAULT '[]',
    summary       TEXT,
    created_at    TEXT NOT NULL
);
CREATE INDEX comparisons_by_run ON comparisons (baseline_run);

CREATE TABLE comparison_turns (
    comparison_id INTEGER NOT NULL REFERENCES comparisons (id) ON DELETE CASCADE,
    turn          INTEGER NOT NULL CHECK (turn >= 1),
    speaker       TEXT NOT NULL,
    change        TEXT NOT NULL CHECK (change IN ('better', 'same', 'worse')),
    row           TEXT NOT NULL,
    PRIMARY KEY (comparison_id, turn)
) WITHOUT ROWID;
