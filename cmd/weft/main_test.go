package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
)

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

func TestServe(t *testing.T) {
	t.Parallel()
	url := dbtest.URL(t)
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	var stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"weft", "serve"}, env(map[string]string{"DATABASE_URL": url, "WEFT_ADDR": addr}), &bytes.Buffer{}, &stderr)
	}()

	base := "http://" + addr
	require.Eventually(t, func() bool {
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 10*time.Second, 20*time.Millisecond)

	resp, err := http.Get(base + "/readyz")
	require.NoError(t, err)
	var body map[string]string
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "ok", body["database"])

	cancel() // what SIGTERM does through signal.NotifyContext
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
	// Every log line is JSON, and the request log names the request.
	var sawRequest bool
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		if rec["msg"] == "http request" && rec["path"] == "/readyz" {
			sawRequest = true
			require.NotEmpty(t, rec["request_id"])
		}
	}
	require.True(t, sawRequest)
}

func TestServeRefusesWithoutDatabase(t *testing.T) {
	t.Parallel()
	// Migrations need the database, so serve refuses to start without it.
	err := run(context.Background(), []string{"weft", "serve"},
		env(map[string]string{"DATABASE_URL": "postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=2", "WEFT_ADDR": freeAddr(t)}),
		&bytes.Buffer{}, &bytes.Buffer{})
	require.Error(t, err)
}

func TestMigrateAndOps(t *testing.T) {
	t.Parallel()
	url := dbtest.URL(t)
	e := env(map[string]string{"DATABASE_URL": url})
	ctx := context.Background()
	weft := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(ctx, append([]string{"weft"}, args...), e, &out, &errOut)
		return out.String(), err
	}

	out, err := weft("migrate", "status")
	require.NoError(t, err)
	require.Contains(t, out, "00001_threads.sql")
	require.NotContains(t, out, "pending")

	out, err = weft("migrate", "down")
	require.NoError(t, err)
	require.Contains(t, out, "rolled back")
	out, err = weft("migrate", "status")
	require.NoError(t, err)
	require.Contains(t, out, "pending")
	out, err = weft("migrate", "up")
	require.NoError(t, err)
	require.Contains(t, out, "applied")

	out, err = weft("ops")
	require.NoError(t, err)
	for _, v := range db.Views() {
		require.Contains(t, out, v)
	}
	for _, v := range db.Views() {
		out, err = weft("ops", v)
		require.NoError(t, err, v)
		require.Contains(t, out, "(0 rows)", v)
	}

	store, p, err := openStore(ctx, &config{DatabaseURL: url}, dbtest.Logger(t))
	require.NoError(t, err)
	defer p.Close()
	for i := range 3 {
		_, err := store.Pool().Exec(ctx, `INSERT INTO threads (thread_id, thread_type, goal) VALUES (gen_random_uuid(), 'autonomous', $1)`,
			fmt.Sprintf("goal number %d with a rather long description that must be cut in the table", i))
		require.NoError(t, err)
	}
	out, err = weft("ops", "thread_overview")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 5, out) // header, 3 rows, count
	require.True(t, strings.HasPrefix(lines[0], "THREAD_ID"), out)
	// Aligned: every row's status column starts where the header's does.
	col := strings.Index(lines[0], "STATUS")
	for _, l := range lines[1:4] {
		require.Equal(t, "pending", strings.Fields(l[col:])[0], out)
	}
	require.Equal(t, "(3 rows)", lines[4])

	_, err = weft("ops", "no_such_view")
	require.Error(t, err)
	_, err = weft("migrate", "sideways")
	require.ErrorIs(t, err, errUsage)
	_, err = weft("frobnicate")
	require.ErrorIs(t, err, errUsage)
}
