-- PostgreSQL twin of ../migrations/015_line_lease.sql (same version, same tables and columns; see
-- store::pg::migrate). Integers are BIGINT, ids identity columns, timestamps stay ISO text.
-- 015: the LINE bot on several instances (issue 24 §3). A user message being answered is
-- held by one instance: lease_owner is that instance's token, lease_until (ms since the epoch)
-- when the hold lapses unless renewed. The instance that acknowledged the message holds it
-- from the start and renews it while it lives; when it dies, another instance takes the
-- message over once the lease has lapsed. NULL: not held (rows from before, or settled).
ALTER TABLE line_messages ADD COLUMN lease_owner TEXT;
ALTER TABLE line_messages ADD COLUMN lease_until BIGINT;
CREATE INDEX line_messages_lease ON line_messages (state, lease_until) WHERE role = 'user';
