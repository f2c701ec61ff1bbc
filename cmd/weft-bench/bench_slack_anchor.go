package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbbench"
	"github.com/weft-dev/weft/internal/benchmark"
	"github.com/weft-dev/weft/internal/slack"
)

// The anchor of `weft bench slack`'s acknowledgements is the least a signed
// Events API delivery can cost on this machine and database, as linear's:
// read the body, verify Slack's v0 signature, take the event id, one
// insert, one commit, 200. It runs as a child process like weft serve
// (`weft-bench slack -anchor-serve ADDR`), on the same scratch database,
// driven by the same generator at the same rate once weft's run is over.

// serveSlackAnchor serves the anchor on addr until ctx ends.
func serveSlackAnchor(ctx context.Context, url, addr, secret string) error {
	pool, err := db.Open(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := dbbench.CreateAnchorTable(ctx, pool); err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /readyz", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("POST /webhooks/slack", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		if err := slack.Verify(r.Header, body, secret); err != nil {
			http.Error(w, "invalid signature", http.StatusUnauthorized)
			return
		}
		var envelope struct {
			EventID string `json:"event_id"`
		}
		if err := json.Unmarshal(body, &envelope); err != nil || envelope.EventID == "" {
			http.Error(w, "no event id", http.StatusBadRequest)
			return
		}
		if err := dbbench.AnchorInsert(r.Context(), pool, envelope.EventID, body); err != nil {
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
		return fmt.Errorf("slack anchor: %w", err)
	}
	return nil
}

// startSlackAnchor starts the anchor as a child on the database at url and
// returns it with its door's URL.
func startSlackAnchor(ctx context.Context, url, secret string) (*benchmark.Process, string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, "", fmt.Errorf("find the weft-bench binary: %w", err)
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	p, err := benchmark.Start(exe, []string{"slack", "-anchor-serve", addr}, []string{"DATABASE_URL=" + url, "SLACK_SIGNING_SECRET=" + secret})
	if err != nil {
		return nil, "", err
	}
	if err := p.WaitReady(ctx, "http://"+addr+"/readyz", 30*time.Second); err != nil {
		_ = p.Stop(5 * time.Second)
		return nil, "", fmt.Errorf("%w\nanchor stderr:\n%s", err, p.Stderr())
	}
	return p, "http://" + addr + "/webhooks/slack", nil
}
