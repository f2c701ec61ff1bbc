-- Discord gateway shard leases: with several replicas, exactly one holds each
-- shard's gateway connection at a time. A lease row per shard, renewed every
-- few seconds by its holder, rather than a session advisory lock: a lease
-- lapses on the database's clock whatever happened to the holder (SIGKILL,
-- a hung host, a network partition that leaves a TCP session half open),
-- and ops can see who holds what.

-- +goose Up
CREATE TABLE discord_shard_leases (
    shard_id         integer PRIMARY KEY,
    shard_count      integer NOT NULL,
    owner            text NOT NULL,
    lease_expires_at timestamptz NOT NULL,
    acquired_at      timestamptz NOT NULL DEFAULT now(),
    renewed_at       timestamptz NOT NULL DEFAULT now(),

    CONSTRAINT discord_shard_leases_shard_range CHECK (shard_id >= 0 AND shard_id < shard_count),
    CONSTRAINT discord_shard_leases_owner_not_empty CHECK (owner <> '')
);

-- +goose Down
DROP TABLE discord_shard_leases;
