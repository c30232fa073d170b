-- PostgreSQL twin of ../migrations/012_line_speaker.sql (same version, same tables and columns; see
-- store::pg::migrate). Integers are BIGINT, ids identity columns, timestamps stay ISO text.
-- Who said a group or room line (LINE's source.userId; '' for 1:1 chats, whose channel is the
-- user, and for a group member LINE does not name). The bot's group prompt marks speakers
-- apart with it, and `serve forget U…` finds a person's lines inside groups.
ALTER TABLE line_messages ADD COLUMN speaker TEXT NOT NULL DEFAULT '';
CREATE INDEX idx_line_messages_speaker ON line_messages(speaker) WHERE speaker <> '';
