package kit

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Acks is an acknowledgement run's figures.
type Acks struct {
	// Took is each 2xx delivery's time from its request to its answer,
	// sorted.
	Took Latencies
	// Failed counts the others, Statuses them by status (0: no answer).
	Failed   int
	Statuses map[int]int
	// Lag is the generator's largest delay.
	Lag time.Duration
}

// Why names the failures by status, " (503 ×2, no answer ×1)", or is
// empty when there were none.
func (a Acks) Why() string {
	var why []string
	for status, n := range a.Statuses {
		name := strconv.Itoa(status)
		if status == 0 {
			name = "no answer"
		}
		why = append(why, fmt.Sprintf("%s ×%d", name, n))
	}
	if len(why) == 0 {
		return ""
	}
	slices.Sort(why)
	return " (" + strings.Join(why, ", ") + ")"
}

// TimeAcks posts n deliveries to url open-loop at rate, each made by
// next(i) when its time comes (so that its signature and timestamp are
// fresh), and times each to its answer.
func TimeAcks(ctx context.Context, url string, rate, n int, next func(i int) Delivery) (Acks, error) {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	type result struct {
		took   time.Duration
		status int
	}
	results := make(chan result, n)
	lag, err := Pace(ctx, rate, n, func(i int) error {
		d := next(i)
		go func() {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(d.Body))
			if err != nil {
				results <- result{}
				return
			}
			req.Header = d.Header
			at := time.Now()
			resp, err := client.Do(req)
			took := time.Since(at)
			if err != nil {
				results <- result{took: took}
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			results <- result{took: took, status: resp.StatusCode}
		}()
		return nil
	})
	if err != nil {
		return Acks{}, err
	}
	a := Acks{Statuses: map[int]int{}, Lag: lag}
	for range n {
		r := <-results
		if r.status >= 200 && r.status < 300 {
			a.Took = append(a.Took, r.took)
		} else {
			a.Failed++
			a.Statuses[r.status]++
		}
	}
	a.Took = a.Took.Sorted()
	return a, nil
}
