package kit

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
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
	// Sent is the wall-clock time the request went out, and Lag how long
	// after its scheduled time: the generator's own delay, part of Latency.
	Sent time.Time
	Lag  time.Duration
	Err  error
}

// Load sends deliveries open-loop: each at its scheduled time, whether or
// not earlier ones were answered, as a platform sending webhooks does.
type Load struct {
	Client *http.Client
	URL    string
	// MaxInFlight bounds outstanding requests, and so the generator's own
	// memory when the server stops answering.
	MaxInFlight int
}

// NewLoad returns a Load posting to url with a client that keeps enough
// idle connections for thousands of requests a second, and gives up on an
// answer after timeout (the platform's own).
func NewLoad(url string, timeout time.Duration, maxInFlight int) *Load {
	tr := &http.Transport{MaxIdleConns: maxInFlight, MaxIdleConnsPerHost: maxInFlight, IdleConnTimeout: 30 * time.Second}
	return &Load{Client: &http.Client{Transport: tr, Timeout: timeout}, URL: url, MaxInFlight: maxInFlight}
}

// Close drops the client's idle connections.
func (l *Load) Close() { l.Client.CloseIdleConnections() }

// Run sends deliveries, rate a second, and returns each one's result in
// order once every request has been answered or has timed out. The caller
// builds and signs the deliveries beforehand: the generator shares the
// machine with the server under test, so work done while sending would be
// taken from the server and would delay the sends it measures.
func (l *Load) Run(ctx context.Context, rate int, deliveries []Delivery) []Result {
	results := make([]Result, len(deliveries))
	start := time.Now()
	scheduled := func(i int) time.Time { return start.Add(time.Duration(i) * time.Second / time.Duration(rate)) }
	// Senders are started as the load needs them, up to MaxInFlight, and
	// each sends one request at a time until the run ends: no goroutine per
	// request. work is unbuffered, so a delivery goes only to an idle one.
	work := make(chan int)
	senders := 0
	var wg sync.WaitGroup
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	sent := len(deliveries)
schedule:
	for i := range deliveries {
		at := scheduled(i)
		if wait := time.Until(at); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				sent = i
				break schedule
			case <-timer.C:
			}
		}
		select {
		case work <- i:
			continue
		default:
		}
		if senders == l.MaxInFlight {
			results[i] = Result{Latency: time.Since(at), Err: ErrSaturated}
			continue
		}
		senders++
		wg.Go(func() {
			results[i] = l.send(ctx, at, deliveries[i])
			for j := range work {
				results[j] = l.send(ctx, scheduled(j), deliveries[j])
			}
		})
	}
	close(work)
	wg.Wait()
	return results[:sent]
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
		return Result{Latency: time.Since(at), Sent: sent, Lag: sent.Sub(at), Err: err}
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return Result{Status: resp.StatusCode, Latency: time.Since(at), Sent: sent, Lag: sent.Sub(at)}
}

// Tally sums up a run's results.
type Tally struct {
	Sent, OK, Shed, Other, Failed, Saturated int
	// Ack is the latency of the 200s, ShedLatency of the 503s; Lag the
	// generator's delay in sending each request answered; all sorted.
	Ack, ShedLatency, Lag Latencies
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
			t.Sent++
			continue
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
		t.Lag = append(t.Lag, r.Lag)
	}
	t.Ack, t.ShedLatency, t.Lag = t.Ack.Sorted(), t.ShedLatency.Sorted(), t.Lag.Sorted()
	return t
}

// IsTimeout reports whether a request got no answer within the client's
// timeout.
func IsTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
