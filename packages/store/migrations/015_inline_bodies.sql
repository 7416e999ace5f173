-- Rows stay whole, their bodies compressed (lz4, migration 005) in line, instead of moving to the
-- TOAST table once the compressed row is still over about 2 kB (a Work carrying its manifest, a
-- binding with its per-cluster status). Out of line, every write of such an object inserted its
-- chunks into the TOAST table and its index and deleted the old ones: about 30 row writes per
-- Deployment from POST to ready, half of all. Every variable-length column is MAIN, not only the
-- body: the toaster moves any EXTENDED column out of line (labels, index keys, a long name)
-- before it compresses a MAIN one. A row may now grow to a page (8 kB); a body larger than that
-- compressed still goes out of line. Rows written before keep their TOAST until rewritten.
ALTER TABLE objects
  ALTER COLUMN body SET STORAGE MAIN,
  ALTER COLUMN labels SET STORAGE MAIN,
  ALTER COLUMN index_keys SET STORAGE MAIN,
  ALTER COLUMN gk SET STORAGE MAIN,
  ALTER COLUMN namespace SET STORAGE MAIN,
  ALTER COLUMN name SET STORAGE MAIN;
ALTER TABLE outbox
  ALTER COLUMN object SET STORAGE MAIN,
  ALTER COLUMN index_keys SET STORAGE MAIN,
  ALTER COLUMN trace_context SET STORAGE MAIN,
  ALTER COLUMN gk SET STORAGE MAIN,
  ALTER COLUMN namespace SET STORAGE MAIN,
  ALTER COLUMN name SET STORAGE MAIN,
  ALTER COLUMN type SET STORAGE MAIN;
