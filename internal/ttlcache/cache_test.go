package ttlcache

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTTLCache(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	t.Run("ExpiredEntriesLeaveBeforeTheBound", func(t *testing.T) {
		var c Cache[int]
		for i := range 100 {
			c.Put(fmt.Sprint(i), i, t0.Add(time.Duration(i)*time.Second), 10*time.Second)
		}
		// At t0+99s only what was put in the last 10 s is held.
		require.Len(t, c.m, 10, "entries held, expired or not")
		_, ok := c.Get("89", t0.Add(99*time.Second))
		require.False(t, ok, "expired")
		v, ok := c.Get("95", t0.Add(99*time.Second))
		require.True(t, ok)
		require.Equal(t, 95, v)
		require.LessOrEqual(t, len(c.puts)-c.head, 2*maxCacheEntries)
	})
	t.Run("BoundEvictsTheOldest", func(t *testing.T) {
		var c Cache[int]
		for i := range maxCacheEntries + 5 {
			c.Put(fmt.Sprint(i), i, t0, time.Hour)
		}
		require.Len(t, c.m, maxCacheEntries)
		_, ok := c.Get("4", t0)
		require.False(t, ok, "among the oldest, evicted")
		_, ok = c.Get(fmt.Sprint(maxCacheEntries+4), t0)
		require.True(t, ok)
	})
	t.Run("PutAgainOutlivesItsFirstExpiry", func(t *testing.T) {
		var c Cache[string]
		c.Put("k", "old", t0, 10*time.Second)
		c.Put("k", "new", t0.Add(5*time.Second), 10*time.Second)
		// The first put's record expires at t0+10s; it must not take the
		// second's entry with it.
		c.Put("other", "x", t0.Add(11*time.Second), 10*time.Second)
		v, ok := c.Get("k", t0.Add(12*time.Second))
		require.True(t, ok)
		require.Equal(t, "new", v)
	})
}
