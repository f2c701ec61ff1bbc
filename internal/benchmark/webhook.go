package benchmark

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"
)

// ErrSaturated marks a delivery the load generator could not send on time
// because maxInFlight requests were already outstanding: the generator, not
// the server, was the limit.
var ErrSaturated = errors.New("load generator saturated")

// Delivery is one webhook request: a signed body and its headers.
type Delivery struct {
	Body   []byte
	Header http.Header
}

// Result is what became of one delivery.
type Result struct {
	// Status is the HTTP status, 0 when there was no answer (Err says why).
	Status int
	// Latency runs from the delivery's scheduled send time, not the actual
	// one, so a generator falling behind shows as latency rather than
	// hiding it (no coordinated omission).
	Latency time.Duration
	// Sent is the wall-clock time the request went out.
	Sent time.Time
	Err  error
}

// Load sends deliveries open-loop: each at its scheduled time, whether or
// not earlier ones were answered, as Linear does.
type Load struct {
	Client *http.Client
	URL    string
	// MaxInFlight bounds outstanding requests, and so the generator's own
	// memory when the server stops answering.
	MaxInFlight int
}

// NewLoad returns a Load posting to url with a client that keeps enough
// idle connections for thousands of requests a second, and gives up on an
// answer after timeout (Linear's is 5 s).
func NewLoad(url string, timeout time.Duration, maxInFlight int) *Load {
	tr := &http.Transport{MaxIdleConns: maxInFlight, MaxIdleConnsPerHost: maxInFlight, IdleConnTimeout: 30 * time.Second}
	return &Load{Client: &http.Client{Transport: tr, Timeout: timeout}, URL: url, MaxInFlight: maxInFlight}
}

// Close drops the client's idle connections.
func (l *Load) Close() { l.Client.CloseIdleConnections() }

// Run sends rate deliveries a second for d and returns each one's result,
// in schedule order, once every request has been answered or has timed
// out. build makes the i-th delivery just before it is sent; it is called
// from many goroutines at once.
func (l *Load) Run(ctx context.Context, rate int, d time.Duration, build func(i int) Delivery) []Result {
	n := int(d.Seconds() * float64(rate))
	results := make([]Result, n)
	slots := make(chan struct{}, l.MaxInFlight)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		at := start.Add(time.Duration(i) * time.Second / time.Duration(rate))
		if wait := time.Until(at); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				results = results[:i]
				wg.Wait()
				return results
			case <-t.C:
			}
		}
		select {
		case slots <- struct{}{}:
		default:
			results[i] = Result{Latency: time.Since(at), Err: ErrSaturated}
			continue
		}
		wg.Go(func() {
			defer func() { <-slots }()
			results[i] = l.send(ctx, at, build(i))
		})
	}
	wg.Wait()
	return results
}

func (l *Load) send(ctx context.Context, at time.Time, d Delivery) Result {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.URL, bytes.NewReader(d.Body))
	if err != nil {
		return Result{Err: err}
	}
	req.Header = d.Header
	sent := time.Now()
	resp, err := l.Client.Do(req)
	if err != nil {
		return Result{Latency: time.Since(at), Sent: sent, Err: err}
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return Result{Status: resp.StatusCode, Latency: time.Since(at), Sent: sent}
}

// Tally sums up a run's results.
type Tally struct {
	Sent, OK, Shed, Other, Failed, Saturated int
	// Ack is the latency of the 200s, ShedLatency of the 503s; both sorted.
	Ack, ShedLatency Latencies
}

// Count tallies results.
func Count(results []Result) Tally {
	var t Tally
	for _, r := range results {
		switch {
		case errors.Is(r.Err, ErrSaturated):
			t.Saturated++
			continue
		case r.Err != nil:
			t.Failed++
		case r.Status == http.StatusOK:
			t.OK++
			t.Ack = append(t.Ack, r.Latency)
		case r.Status == http.StatusServiceUnavailable:
			t.Shed++
			t.ShedLatency = append(t.ShedLatency, r.Latency)
		default:
			t.Other++
		}
		t.Sent++
	}
	t.Ack, t.ShedLatency = t.Ack.Sorted(), t.ShedLatency.Sorted()
	return t
}
