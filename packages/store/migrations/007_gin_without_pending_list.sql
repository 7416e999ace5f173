-- The label and secondary-index lookups (a binding's Works, the bindings on a cluster) run on
-- every reconcile. With GIN's fast update, new entries wait in a pending list that every lookup
-- scans in full (up to 4 MB: milliseconds per lookup while objects are being written); without
-- it, entries go straight into the index, for about the same cost per write.
SELECT gin_clean_pending_list('objects_labels'::regclass);
SELECT gin_clean_pending_list('objects_index_keys'::regclass);
ALTER INDEX objects_labels SET (fastupdate = off);
ALTER INDEX objects_index_keys SET (fastupdate = off);
