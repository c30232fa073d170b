-- PostgreSQL twin of ../migrations/011_scorecard.sql (same version, same tables and columns; see
-- store::pg::migrate). Integers are BIGINT, ids identity columns, timestamps stay ISO text.
-- The secret-keeping scorecard reads every judged attempt and every line with a leak finding.
-- Two partial indexes keep it off the verdict blobs: judged attempts by reader (covering the
-- count), and the few attempts whose verdict mentions the leak rule.
CREATE INDEX IF NOT EXISTS attempts_judged ON attempts (speaker, run_id) WHERE verdict IS NOT NULL;
CREATE INDEX IF NOT EXISTS attempts_leak ON attempts (id) WHERE strpos(verdict, '"leak"') > 0;
