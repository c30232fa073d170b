-- The secret-keeping scorecard reads every judged attempt and every line with a leak finding.
-- Two partial indexes keep it off the verdict blobs: judged attempts by reader (covering the
-- count), and the few attempts whose verdict mentions the leak rule.
CREATE INDEX IF NOT EXISTS attempts_judged ON attempts (speaker, run_id) WHERE verdict IS NOT NULL;
CREATE INDEX IF NOT EXISTS attempts_leak ON attempts (id) WHERE instr(verdict, '"leak"') > 0;
