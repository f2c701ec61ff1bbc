package discord

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkSendRate sends from many goroutines through the real session to
// the fake and reports the busiest one-second window the fake saw, which
// the global limiter keeps at or under 50. Run with -benchtime=200x or more
// so the window fills: go test -run XXX -bench SendRate -benchtime 200x.
func BenchmarkSendRate(b *testing.B) {
	bundle := setup(b, nil)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	b.ResetTimer()
	for i := range b.N {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			_, err := bundle.client.Send(b.Context(), bundle.channel, "message "+strconv.Itoa(i), "")
			require.NoError(b, err)
		}()
	}
	wg.Wait()
	b.StopTimer()

	reqs := bundle.server.Requests()
	busiest := 0
	for i := range reqs {
		n := 0
		for j := i; j < len(reqs) && reqs[j].At.Sub(reqs[i].At) < time.Second; j++ {
			n++
		}
		busiest = max(busiest, n)
	}
	b.ReportMetric(float64(busiest), "max-req/s-window")
}
