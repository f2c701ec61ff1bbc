// Package kit holds the measuring instruments of `weft bench turns` and
// `weft bench linear`: a clock on the processor's turns and model calls,
// and an open-loop webhook load generator. The commands in cmd/weft wire
// them to a scratch database, the fakes and weft itself, and print the
// figures beside the targets of docs/architecture.md.
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
