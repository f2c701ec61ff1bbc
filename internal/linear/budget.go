package linear

import (
	"net/http"
	"sort"
	"sync"
	"time"
)

// DefaultRequestsPerHour is the request budget of one workspace's token:
// Linear allows an OAuth app about 5,000 requests an hour per app user
// (its rate-limiting page; the figure has changed before, so the headers
// Linear sends, when present, win over it).
const DefaultRequestsPerHour = 5000

// ReserveShare is the part of the hourly budget kept for what must be
// sent: while fewer than Limit/ReserveShare requests remain (1,000 of
// 5,000), optional requests, the progress thoughts of a streaming answer,
// fold into the answer (Budget.Low).
const ReserveShare = 5

// budgetWindow is the span a Budget counts over, in budgetSlots slots.
const (
	budgetWindow = time.Hour
	budgetSlots  = 60
	budgetSlot   = budgetWindow / budgetSlots
)

// Budget counts the requests weft makes to Linear per workspace over the
// last hour, so that optional requests stop before Linear's limit does: a
// peer that posted every thought ran its workspaces dry (Cyrus #1325). The
// count is this replica's; the X-RateLimit-Requests-* headers Linear sends
// back, which see every replica's requests, lower the remaining estimate
// until their reset. It is safe for concurrent use; the nil *Budget counts
// nothing and is never low.
type Budget struct {
	limit, reserve int
	now            func() time.Time

	mu  sync.Mutex
	per map[string]*usage
}

// usage is one workspace's requests: slots of budgetSlot each, a ring
// indexed by the slot's number since the epoch.
type usage struct {
	slots [budgetSlots]struct {
		at int64 // the slot's number; a stale one counts nothing
		n  int
	}
	total uint64
	// Linear's own word, from the newest response that carried it.
	remaining int
	reset     time.Time // zero when Linear said nothing
}

// NewBudget returns a Budget of limit requests an hour per workspace
// (DefaultRequestsPerHour when limit ≤ 0), low below a ReserveShare-th of
// it remaining.
func NewBudget(limit int) *Budget {
	if limit <= 0 {
		limit = DefaultRequestsPerHour
	}
	return &Budget{limit: limit, reserve: limit / ReserveShare, now: time.Now, per: map[string]*usage{}}
}

// Limit is the hourly budget of each workspace.
func (b *Budget) Limit() int { return b.limit }

// Reserve is the remaining count below which the budget is low.
func (b *Budget) Reserve() int { return b.reserve }

// of returns org's usage, made on first use; b.mu is held.
func (b *Budget) of(org string) *usage {
	u := b.per[org]
	if u == nil {
		u = &usage{}
		b.per[org] = u
	}
	return u
}

// Count records one request to Linear as org's installation.
func (b *Budget) Count(org string) {
	if b == nil {
		return
	}
	slot := b.now().UnixNano() / int64(budgetSlot)
	b.mu.Lock()
	defer b.mu.Unlock()
	u := b.of(org)
	s := &u.slots[slot%budgetSlots]
	if s.at != slot {
		s.at, s.n = slot, 0
	}
	s.n++
	u.total++
}

// Observe takes Linear's X-RateLimit-Requests-Remaining and -Reset from a
// response to org's installation; a response without them changes
// nothing.
func (b *Budget) Observe(org string, h http.Header) {
	if b == nil || h == nil {
		return
	}
	remaining, ok := headerInt(h, "X-Ratelimit-Requests-Remaining")
	if !ok {
		return
	}
	reset, ok := headerInt(h, "X-Ratelimit-Requests-Reset")
	if !ok {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	u := b.of(org)
	u.remaining, u.reset = int(remaining), time.UnixMilli(reset)
}

// used counts u's requests in the last hour; b.mu is held.
func (b *Budget) used(u *usage, now time.Time) int {
	slot := now.UnixNano() / int64(budgetSlot)
	n := 0
	for _, s := range u.slots {
		if s.at > slot-budgetSlots && s.at <= slot {
			n += s.n
		}
	}
	return n
}

// Usage is one workspace's count, for metrics.
type Usage struct {
	Organization string
	// Hour is the requests of the last hour; Total those since start.
	Hour  int
	Total uint64
	// Remaining is the budget's estimate of what is left this hour.
	Remaining int
}

// Remaining is org's budget left: the hour's limit less this replica's
// requests in the last hour, or what Linear last said remains if that is
// less and its reset has not passed.
func (b *Budget) Remaining(org string) int {
	if b == nil {
		return DefaultRequestsPerHour
	}
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	u := b.per[org]
	if u == nil {
		return b.limit
	}
	return b.remaining(u, now)
}

// remaining is Remaining for u; b.mu is held.
func (b *Budget) remaining(u *usage, now time.Time) int {
	left := b.limit - b.used(u, now)
	if now.Before(u.reset) && u.remaining < left {
		left = u.remaining
	}
	return max(left, 0)
}

// Low reports that org's remaining budget is below the reserve: optional
// requests should wait.
func (b *Budget) Low(org string) bool {
	return b != nil && b.Remaining(org) < b.reserve
}

// Usages lists every workspace's count, by organization.
func (b *Budget) Usages() []Usage {
	if b == nil {
		return nil
	}
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Usage, 0, len(b.per))
	for org, u := range b.per {
		out = append(out, Usage{Organization: org, Hour: b.used(u, now), Total: u.total, Remaining: b.remaining(u, now)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Organization < out[j].Organization })
	return out
}

// budgetTransport counts each request in the budget of the workspace
// named in its context, and reads the budget Linear reports back.
type budgetTransport struct {
	base   http.RoundTripper
	budget *Budget
}

func (t *budgetTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	org := organizationFrom(req.Context())
	t.budget.Count(org)
	resp, err := t.base.RoundTrip(req)
	if resp != nil {
		t.budget.Observe(org, resp.Header)
	}
	return resp, err
}
