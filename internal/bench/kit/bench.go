// Package kit holds the instruments every benchmark of internal/bench
// measures with, written once: latencies and the table that prints them
// beside their targets (PASS or MISS), rates, the open-loop pacing of a
// run and the webhook load generator, child processes (weft serve, an
// anchor, the fake model) and what /proc and getrusage say of their CPU
// and memory, the clock on the processor's turns and model calls, the
// proxy that times the fake model, River's no-op anchor, and scratch
// databases. The benches wire them to the fakes and to weft itself.
package kit

import (
	"slices"
	"time"
)

// Latencies are durations with nearest-rank percentiles.
type Latencies []time.Duration

// Sorted returns the latencies sorted, for Percentile.
func (l Latencies) Sorted() Latencies {
	out := slices.Clone(l)
	slices.Sort(out)
	return out
}

// Percentile returns the p-th percentile (0 < p ≤ 100) of sorted
// latencies, nearest-rank; 0 when there are none.
func (l Latencies) Percentile(p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	i := int(float64(len(l))*p/100+0.5) - 1
	return l[max(0, min(i, len(l)-1))]
}

// Rate is a throughput measurement.
type Rate struct {
	Ops     int64
	Elapsed time.Duration
}

// PerSecond is the measured rate.
func (r Rate) PerSecond() float64 { return float64(r.Ops) / r.Elapsed.Seconds() }
