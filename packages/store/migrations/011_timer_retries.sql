-- A durable timer also counts the retries in a row of its key (the controller runtime's
-- `retry(baseMs, maxMs)`: a doubling wait kept with the timer, so replicas and a restarted
-- process continue the same count). `after()` resets it; `done()` deletes the row.
ALTER TABLE timers ADD COLUMN retries integer NOT NULL DEFAULT 0;
