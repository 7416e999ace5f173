-- Objects and outbox rows above about 2 kB are compressed when stored; lz4 costs a fraction of
-- the default pglz's CPU for about the same size. A server built without lz4 keeps pglz.
DO $$
BEGIN
  ALTER TABLE objects ALTER COLUMN body SET COMPRESSION lz4;
  ALTER TABLE outbox ALTER COLUMN object SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  RAISE NOTICE 'lz4 is not available: stored objects stay compressed with pglz';
END $$;
