-- Member clusters sharded over execution replicas. Each replica writes a heartbeat row; the
-- replicas whose heartbeat is younger than their lease are the live set the members are hashed
-- over. A member's lease row names the one replica that probes, watches and applies it; another
-- replica may take it only once the holder released it (holder NULL) or stopped renewing it for
-- its lease (lease_ms, the holder's own setting).
CREATE TABLE member_replicas (
  replica text PRIMARY KEY,
  heartbeat_at timestamptz NOT NULL,
  lease_ms integer NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE member_leases (
  member text PRIMARY KEY,
  holder text,
  renewed_at timestamptz NOT NULL,
  lease_ms integer NOT NULL,
  acquired_at timestamptz NOT NULL,
  transitions bigint NOT NULL DEFAULT 0
);
