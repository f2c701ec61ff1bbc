package linear_test

import (
	"io"
	"log/slog"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/linear/lineartest"
)

// BenchmarkLinearWebhookCreated times a new session's delivery end to end
// in this process (handler, ingest, the transaction's client side), one at
// a time, logging at info as weft serve does. cpu-µs/op is this process's
// user and system time, which the machine's other load inflates less than
// the wall time.
func BenchmarkLinearWebhookCreated(b *testing.B) {
	bd := setupWith(b, dbtest.NewPool(b), slog.New(slog.NewJSONHandler(io.Discard, nil)))
	deliveries := make([]lineartest.Delivery, b.N)
	for i := range deliveries {
		deliveries[i], _ = bd.signer.Created(lineartest.SessionOpts{Timestamp: time.Now()})
	}
	before := cpuTime(b)
	b.ResetTimer()
	for i := range b.N {
		if rec := bd.deliver(deliveries[i]); rec.Code != http.StatusOK {
			b.Fatalf("delivery %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime(b)-before).Microseconds())/float64(b.N), "cpu-µs/op")
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
