-- Every API object, typed kinds and resource templates alike.
CREATE TABLE objects (
  gk          text        NOT NULL,              -- "group/Kind", e.g. "apps/Deployment", "/ConfigMap"
  namespace   text        NOT NULL DEFAULT '',   -- '' for cluster-scoped kinds
  name        text        NOT NULL,
  uid         uuid        NOT NULL UNIQUE,
  rv          bigint      NOT NULL,              -- resourceVersion = id of the writing transaction
  generation  integer     NOT NULL DEFAULT 1,
  labels      jsonb       NOT NULL DEFAULT '{}',
  index_keys  text[]      NOT NULL DEFAULT '{}', -- secondary-index entries, e.g. "cluster:member1", "owner:<uid>"
  deleting    boolean     NOT NULL DEFAULT false,
  body        jsonb       NOT NULL,              -- the whole object as served
  PRIMARY KEY (gk, namespace, name)
);
CREATE INDEX objects_index_keys ON objects USING gin (index_keys);
CREATE INDEX objects_labels ON objects USING gin (labels jsonb_path_ops);

-- Written in the same transaction as the change it describes; the relay publishes it to
-- JetStream (message id = id) and watches read it in resourceVersion order.
CREATE TABLE outbox (
  id            bigserial   PRIMARY KEY,
  rv            bigint      NOT NULL,
  gk            text        NOT NULL,
  namespace     text        NOT NULL,
  name          text        NOT NULL,
  uid           uuid        NOT NULL,
  type          text        NOT NULL,            -- ADDED | MODIFIED | DELETED
  object        jsonb       NOT NULL,            -- the object after the change (before it, for DELETED)
  created_at    timestamptz NOT NULL DEFAULT now(),
  published_at  timestamptz
);
CREATE INDEX outbox_unpublished ON outbox (id) WHERE published_at IS NULL;
CREATE INDEX outbox_rv ON outbox (rv, id);

-- Durable "come back after" timers of the controller runtime.
CREATE TABLE timers (
  controller  text        NOT NULL,
  key         text        NOT NULL,
  due_at      timestamptz NOT NULL,
  PRIMARY KEY (controller, key)
);
CREATE INDEX timers_due ON timers (controller, due_at);
