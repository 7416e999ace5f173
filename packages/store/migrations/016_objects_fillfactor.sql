-- Half of each page of `objects` is left free for later versions of its rows. A status write
-- changes no indexed column, so with room on the page it is a heap-only update: no new entry in
-- the primary key, the uid index or the two GIN indexes, and the old version is pruned in place
-- without waiting for vacuum. Measured by test/load/store/hot-updates.ts (3,000 Works carrying a
-- Deployment, four status writes each, 2026-11-29): at fillfactor 100, 1,815 of 12,000 writes
-- were heap-only and each read and write cost Postgres 0.147–0.155 ms of CPU, the table 26 MB;
-- at 50, 11,659 of 12,000, 0.108–0.110 ms, 13 MB. Pages written before keep their fill until rewritten.
ALTER TABLE objects SET (fillfactor = 50);
