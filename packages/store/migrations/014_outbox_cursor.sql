-- The relay's place in the outbox: every row at or before (published_rv, published_id), in
-- (rv, id) order, is on the stream. A pass of the relay moves it with one row write, where it
-- used to mark each row it published (one row write per object write). The relay reads only rows
-- below the snapshot's xmin, which are final: no transaction still open can add a row before them.
ALTER TABLE outbox_watermark
  ADD COLUMN published_rv bigint NOT NULL DEFAULT 0,
  ADD COLUMN published_id bigint NOT NULL DEFAULT 0;
-- Start below the oldest row not yet published (republishing is harmless: the stream drops a
-- message it holds as a duplicate, and wake-ups are level-triggered) and below any transaction
-- still open.
UPDATE outbox_watermark SET
  published_rv = least(
    coalesce((SELECT min(rv) - 1 FROM outbox WHERE published_at IS NULL), (SELECT max(rv) FROM outbox), 0),
    pg_snapshot_xmin(pg_current_snapshot())::text::bigint - 1),
  published_id = 9223372036854775807;
DROP INDEX outbox_unpublished;
ALTER TABLE outbox DROP COLUMN published_at;
