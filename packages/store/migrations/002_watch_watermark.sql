-- Outbox rows at or below this resourceVersion have been pruned: a watch that asks to
-- resume from an older resourceVersion is answered 410 Gone (the client relists).
CREATE TABLE outbox_watermark (
  id          integer PRIMARY KEY DEFAULT 1 CHECK (id = 1),
  pruned_rv   bigint  NOT NULL DEFAULT 0
);
INSERT INTO outbox_watermark (id, pruned_rv) VALUES (1, 0);
