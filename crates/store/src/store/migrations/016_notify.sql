-- 016: live marks on PostgreSQL (issue 24 §2): there, every write to the tables a reviewer's
-- workbench shows notifies channel kakeai_changes (see ../migrations_pg/016_notify.sql).
-- SQLite needs nothing: a watcher reads PRAGMA data_version, which moves with every commit
-- made through another connection. The version exists here so both engines stay numbered
-- together.
SELECT 1;
