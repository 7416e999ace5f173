-- A random id of this database's outbox, part of every wake-up message id: outbox ids start at 1
-- in a new database, and a stream that outlived the old one must not drop them as duplicates.
ALTER TABLE outbox_watermark ADD COLUMN epoch text NOT NULL DEFAULT gen_random_uuid()::text;
