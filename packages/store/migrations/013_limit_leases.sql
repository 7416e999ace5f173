-- Fleet-wide limits (packages/store/src/limit-leases.ts): one row per holder of a named limit.
-- Two uses of the one table:
--   * a semaphore (move-back's maxConcurrent): a holder (a binding's uid) claims a slot under
--     the limit's advisory lock when fewer than the limit's maximum hold one; its row is the
--     claim's grace (expires_at), and an object carrying the limit's label holds a slot too, so
--     a claim that was written lives as long as the label, and one that was not expires;
--   * shares (eviction rates, per-user request rates and watch caps): each replica renews a row
--     per limit it uses every few seconds with its demand (and what it holds open), and takes
--     a share of the limit in proportion to its demand among the live rows.
CREATE TABLE limit_leases (
  limit_name  text             NOT NULL,
  holder      text             NOT NULL,
  expires_at  timestamptz      NOT NULL,
  demand      double precision NOT NULL DEFAULT 0,
  used        double precision NOT NULL DEFAULT 0,
  acquired_at timestamptz      NOT NULL DEFAULT now(),
  PRIMARY KEY (limit_name, holder)
);
CREATE INDEX limit_leases_expires ON limit_leases (expires_at);
