-- PostgreSQL twin of ../migrations/016_notify.sql (same version; see store::pg::migrate).
-- 016: live marks (issue 24 §2). Every statement that writes a table a reviewer's workbench
-- shows — reviewers' marks and notes, queue judgments and holds, pairwise marks, runs being
-- written, the bot's conversations — sends NOTIFY kakeai_changes with the table's name. It is
-- delivered when the writing transaction commits (never for one rolled back), once per table
-- and transaction, to every connection that listens (store::watch).
CREATE FUNCTION kakeai_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('kakeai_changes', TG_TABLE_NAME);
    RETURN NULL;
END
$$;
CREATE TRIGGER actions_changed AFTER INSERT OR UPDATE OR DELETE ON actions
    FOR EACH STATEMENT EXECUTE FUNCTION kakeai_changed();
CREATE TRIGGER turns_changed AFTER INSERT OR UPDATE OR DELETE ON turns
    FOR EACH STATEMENT EXECUTE FUNCTION kakeai_changed();
CREATE TRIGGER attempts_changed AFTER INSERT OR UPDATE OR DELETE ON attempts
    FOR EACH STATEMENT EXECUTE FUNCTION kakeai_changed();
CREATE TRIGGER runs_changed AFTER INSERT OR UPDATE OR DELETE ON runs
    FOR EACH STATEMENT EXECUTE FUNCTION kakeai_changed();
CREATE TRIGGER queue_items_changed AFTER INSERT OR UPDATE OR DELETE ON queue_items
    FOR EACH STATEMENT EXECUTE FUNCTION kakeai_changed();
CREATE TRIGGER queue_leases_changed AFTER INSERT OR UPDATE OR DELETE ON queue_leases
    FOR EACH STATEMENT EXECUTE FUNCTION kakeai_changed();
CREATE TRIGGER pairwise_marks_changed AFTER INSERT OR UPDATE OR DELETE ON pairwise_marks
    FOR EACH STATEMENT EXECUTE FUNCTION kakeai_changed();
CREATE TRIGGER line_messages_changed AFTER INSERT OR UPDATE OR DELETE ON line_messages
    FOR EACH STATEMENT EXECUTE FUNCTION kakeai_changed();
