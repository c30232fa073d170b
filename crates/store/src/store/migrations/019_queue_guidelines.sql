-- 019: guidelines per queue (issue 41, as Argilla and Label Studio have): a markdown text the
-- team writes for a queue's reviewers, shown by `queue show`, the workbench's queues room and
-- the report. NULL: none written yet.
ALTER TABLE review_queues ADD COLUMN guidelines TEXT;
