// Package ttlcache is a bounded in-memory map whose entries expire, the
// cache of the prompt's context readers (history, discovery).
package ttlcache

import (
	"sync"
	"time"
)

// maxCacheEntries bounds each cache.
const maxCacheEntries = 1000

// Cache is a bounded map whose entries expire. An entry leaves when it
// expires, not only when the map is full, so a cache holds what was put in
// its last TTL: a long-running weft reaches its steady size within one TTL
// instead of filling to the bound over however long that takes.
type Cache[V any] struct {
	mu sync.Mutex
	m  map[string]ttlEntry[V]
	// puts is every put in order, oldest at head. Each cache puts with one
	// TTL, so this is also expiry order; a key put again leaves a stale
	// record behind, recognised by its expiry.
	puts []ttlPut
	head int
}

type ttlEntry[V any] struct {
	v       V
	expires time.Time
}

type ttlPut struct {
	key     string
	expires time.Time
}

func (c *Cache[V]) Get(key string, now time.Time) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok || !now.Before(e.expires) {
		var zero V
		return zero, false
	}
	return e.v, true
}

func (c *Cache[V]) Put(key string, v V, now time.Time, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]ttlEntry[V])
	}
	for c.head < len(c.puts) {
		p := c.puts[c.head]
		if now.Before(p.expires) && len(c.m) < maxCacheEntries {
			break
		}
		if e, ok := c.m[p.key]; ok && e.expires.Equal(p.expires) {
			delete(c.m, p.key)
		}
		c.puts[c.head] = ttlPut{}
		c.head++
	}
	// Reuse the slice's front once half of it is spent.
	if c.head > len(c.puts)/2 {
		c.puts = append(c.puts[:0], c.puts[c.head:]...)
		c.head = 0
	}
	expires := now.Add(ttl)
	c.m[key] = ttlEntry[V]{v: v, expires: expires}
	c.puts = append(c.puts, ttlPut{key: key, expires: expires})
}
