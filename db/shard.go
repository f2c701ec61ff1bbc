package db

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weft-dev/weft/db/internal/dbsqlc"
	"github.com/weft-dev/weft/internal/thread"
)

// ClaimShard takes or renews owner's lease on a Discord gateway shard for
// ttl and reports whether owner holds it now. A lease held by another owner
// is taken only once it has lapsed. Expiry is reckoned on the database's
// clock, so replicas with skewed clocks still agree on who holds a shard.
func (q *Queries) ClaimShard(ctx context.Context, shardID, shardCount int, owner string, ttl time.Duration) (bool, error) {
	got, err := q.gen.ClaimShard(ctx, dbsqlc.ClaimShardParams{
		ShardID: int32(shardID), ShardCount: int32(shardCount), Owner: owner, TtlMs: ttl.Milliseconds(),
	})
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
	err := q.gen.ReleaseShard(ctx, dbsqlc.ReleaseShardParams{ShardID: int32(shardID), Owner: owner})
	if err != nil {
		return fmt.Errorf("release shard %d: %w", shardID, translate(err))
	}
	return nil
}
