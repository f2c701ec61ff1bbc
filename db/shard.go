package db

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weft-dev/weft/internal/thread"
)

// ClaimShard takes or renews owner's lease on a Discord gateway shard for
// ttl and reports whether owner holds it now. A lease held by another owner
// is taken only once it has lapsed. Expiry is reckoned on the database's
// clock, so replicas with skewed clocks still agree on who holds a shard.
func (q *Queries) ClaimShard(ctx context.Context, shardID, shardCount int, owner string, ttl time.Duration) (bool, error) {
	var got string
	err := q.db.QueryRow(ctx, `
		INSERT INTO discord_shard_leases (shard_id, shard_count, owner, lease_expires_at)
		VALUES ($1, $2, $3, now() + $4 * interval '1 millisecond')
		ON CONFLICT (shard_id) DO UPDATE SET
			shard_count = EXCLUDED.shard_count,
			owner = EXCLUDED.owner,
			lease_expires_at = EXCLUDED.lease_expires_at,
			renewed_at = now(),
			acquired_at = CASE WHEN discord_shard_leases.owner = EXCLUDED.owner
				THEN discord_shard_leases.acquired_at ELSE now() END
		WHERE discord_shard_leases.owner = EXCLUDED.owner OR discord_shard_leases.lease_expires_at < now()
		RETURNING owner`, shardID, shardCount, owner, ttl.Milliseconds()).Scan(&got)
	if err != nil {
		err = translate(err)
		if errors.Is(err, thread.ErrNotFound) {
			return false, nil // held by a live owner: the upsert's WHERE refused
		}
		return false, fmt.Errorf("claim shard %d: %w", shardID, err)
	}
	return got == owner, nil
}

// ReleaseShard gives up owner's lease on a shard, if it still holds it, so
// another replica can take it at its next attempt instead of waiting for
// the lease to lapse.
func (q *Queries) ReleaseShard(ctx context.Context, shardID int, owner string) error {
	_, err := q.db.Exec(ctx, `DELETE FROM discord_shard_leases WHERE shard_id = $1 AND owner = $2`, shardID, owner)
	if err != nil {
		return fmt.Errorf("release shard %d: %w", shardID, translate(err))
	}
	return nil
}
