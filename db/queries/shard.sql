-- name: ClaimShard :one
-- ClaimShard takes or renews the lease of owner on a gateway shard; a lease
-- held by another owner is taken only once it lapsed (no row otherwise).
INSERT INTO discord_shard_leases (shard_id, shard_count, owner, lease_expires_at)
VALUES (@shard_id, @shard_count, @owner, now() + sqlc.arg(ttl_ms)::bigint * interval '1 millisecond')
ON CONFLICT (shard_id) DO UPDATE SET
    shard_count = EXCLUDED.shard_count,
    owner = EXCLUDED.owner,
    lease_expires_at = EXCLUDED.lease_expires_at,
    renewed_at = now(),
    acquired_at = CASE WHEN discord_shard_leases.owner = EXCLUDED.owner
        THEN discord_shard_leases.acquired_at ELSE now() END
WHERE discord_shard_leases.owner = EXCLUDED.owner OR discord_shard_leases.lease_expires_at < now()
RETURNING owner;

-- name: ReleaseShard :exec
DELETE FROM discord_shard_leases WHERE shard_id = @shard_id AND owner = @owner;
