-- PostgreSQL twin of ../migrations/019_queue_guidelines.sql (same version, same column).
ALTER TABLE review_queues ADD COLUMN guidelines TEXT;
