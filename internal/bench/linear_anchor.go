package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/app"
	"github.com/weft-dev/weft/internal/bench/dbbench"
	"github.com/weft-dev/weft/internal/bench/kit"
	"github.com/weft-dev/weft/internal/linear"
)

// The anchor of `weft bench linear` is the least a signed webhook can cost
// on this machine and database: read the body, verify its HMAC, one
// insert, one commit, 200. It runs as a child process like weft serve
// (`weft-bench linear -anchor-serve ADDR`), on the same scratch database,
// driven by the same generator, before weft starts: weft's figures are
// read as multiples of its.
const (
	// targetAnchorAckRatio bounds weft's ack p99 at the steady rate as a
	// multiple of the anchor's, and targetAnchorCapacityShare weft's
	// capacity as a share of the anchor's knee.
	targetAnchorAckRatio      = 10
	targetAnchorCapacityShare = 0.5
)

// serveAnchor serves the anchor on addr until ctx ends.
func serveAnchor(ctx context.Context, url, addr string, secret []byte) error {
	return serveMinimal(ctx, url, addr, "/webhooks/linear", func(h http.Header, body []byte) (string, error) {
		return h.Get(linear.HeaderDelivery), linear.Verify(secret, body, h.Get(linear.HeaderSignature), time.Now())
	})
}

// anchorConns is the anchors' pool size: weft serve's intake pool's.
const anchorConns = 8

// serveMinimal serves a minimal signed-webhook handler at route on addr
// until ctx ends: read the body, check it (its signature) and take its
// ledger key, one insert, one commit, 200. The anchors of the benches
// that time a platform's webhooks are this with the platform's check.
func serveMinimal(ctx context.Context, url, addr, route string, check func(http.Header, []byte) (string, error)) error {
	// As many connections as weft's intake pool (WEFT_INTAKE_DB_CONNS's
	// default), where pgx's default would give it 4.
	pool, err := db.Open(ctx, app.WithQuery(url, "pool_max_conns", strconv.Itoa(anchorConns)))
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := dbbench.CreateAnchorTable(ctx, pool); err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /readyz", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("POST "+route, func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		key, err := check(r.Header, body)
		if err != nil {
			http.Error(w, "refused", http.StatusUnauthorized)
			return
		}
		if err := dbbench.AnchorInsert(r.Context(), pool, key, body); err != nil {
			http.Error(w, "not recorded", http.StatusServiceUnavailable)
			return
		}
	})
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("anchor: %w", err)
	}
	return nil
}

// startAnchor starts the anchor as a child on the database at url.
func startAnchor(ctx context.Context, url string, secret []byte) (*target, error) {
	p, addr, err := startMinimal(ctx, "linear", []string{"DATABASE_URL=" + url, "LINEAR_WEBHOOK_SECRET=" + string(secret)})
	if err != nil {
		return nil, err
	}
	return &target{name: "anchor", proc: p, load: kit.NewLoad("http://"+addr+"/webhooks/linear", linearDeliveryTimeout, maxInFlight)}, nil
}

// startMinimal starts `weft-bench BENCH -anchor-serve ADDR` with env and
// returns it, ready, with its address.
func startMinimal(ctx context.Context, bench string, env []string) (*kit.Process, string, error) {
	return kit.StartSelf(ctx, "anchor", func(addr string) ([]string, []string) {
		return []string{bench, "-anchor-serve", addr}, env
	}, kit.ReadyAt("/readyz", 30*time.Second))
}

// target is a server the generator drives: weft serve or the anchor.
type target struct {
	name string
	proc *kit.Process
	load *kit.Load
}

func (t *target) stop() error {
	t.load.Close()
	return t.proc.Stop(15 * time.Second)
}

func (t *target) cpu() (kit.Sched, error) { return kit.SampleSched(t.proc.PID()) }
