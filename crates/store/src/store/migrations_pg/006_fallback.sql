-- PostgreSQL twin of ../migrations/006_fallback.sql (same version, same tables and columns; see
-- store::pg::migrate). Integers are BIGINT, ids identity columns, timestamps stay ISO text.
-- 006: why streaming was given up for one non-stream call on this attempt (seed 003 §4), when it
-- was — NULL for an attempt that streamed. Shown in the detail pane and exported.
ALTER TABLE attempts ADD COLUMN fallback TEXT;
