// Package dbtest gives each test its own freshly migrated Postgres database,
// cloned from a template built once per set of migrations, so a test costs a
// CREATE DATABASE rather than a migration run.
//
// It reads TEST_DATABASE_URL (then DATABASE_URL), defaulting to the local
// server, and fails rather than skips when Postgres is absent: a test that
// silently skips hides a broken setup.
package dbtest

import (
	"context"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver pgtestdb opens
	"github.com/peterldowns/pgtestdb"
	"github.com/peterldowns/pgtestdb/migrators/goosemigrator"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/migrations"
)

// DefaultURL is the server tests use when no URL is configured.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// ServerURL is the admin URL of the server tests create databases on.
func ServerURL() string {
	for _, k := range []string{"TEST_DATABASE_URL", "DATABASE_URL"} {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	return DefaultURL
}

func config(t testing.TB) pgtestdb.Config {
	t.Helper()
	u, err := url.Parse(ServerURL())
	if err != nil {
		t.Fatalf("dbtest: parse database url: %v", err)
	}
	pw, _ := u.User.Password()
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	return pgtestdb.Config{
		DriverName: "pgx",
		Host:       u.Hostname(),
		Port:       port,
		User:       u.User.Username(),
		Password:   pw,
		Database:   strings.TrimPrefix(u.Path, "/"),
		Options:    u.RawQuery,
		// Tests may leave connections open (a subprocess killed mid-query);
		// dropping the database must not wait on them.
		ForceTerminateConnections: true,
	}
}

// URL creates a fresh migrated database for t and returns its URL. The
// database is dropped when t passes and kept (its URL logged) when it fails.
func URL(t testing.TB) string {
	t.Helper()
	u := pgtestdb.Custom(t, config(t), goosemigrator.New(".", goosemigrator.WithFS(migrations.FS))).URL()
	waitDisconnected(t, u)
	return u
}

// disconnectWait bounds how long a test's end waits for its database's
// backends to exit.
const disconnectWait = 15 * time.Second

// waitDisconnected registers a cleanup, run before pgtestdb's drop, that
// waits until no backend is connected to the database at dsn. A client
// that closed its connections (a weft serve the test stopped) leaves
// backends that exit a moment later, and on a loaded machine the drop
// could find one still there ("is being accessed by other users"). A
// backend that never goes is left for the drop to report.
func waitDisconnected(t testing.TB, dsn string) {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("dbtest: parse database url: %v", err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), disconnectWait)
		defer cancel()
		conn, err := pgx.Connect(ctx, ServerURL())
		if err != nil {
			return // the drop reports the server's trouble
		}
		defer conn.Close(context.WithoutCancel(ctx))
		for {
			var n int
			err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = $1`, name).Scan(&n)
			if err != nil || n == 0 {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
}

// EmptyURL creates a fresh database with no schema at all, as a newcomer's
// first run finds, and returns its URL.
func EmptyURL(t testing.TB) string {
	t.Helper()
	return pgtestdb.Custom(t, config(t), pgtestdb.NoopMigrator{}).URL()
}

// NewPool returns a pool on a fresh migrated database, closed at cleanup.
func NewPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return open(t, URL(t))
}

// NewPoolOf is NewPool with at most conns connections, for tests of what
// happens when callers outnumber connections.
func NewPoolOf(t testing.TB, conns int) *pgxpool.Pool {
	t.Helper()
	u, err := url.Parse(URL(t))
	if err != nil {
		t.Fatalf("dbtest: parse database url: %v", err)
	}
	q := u.Query()
	q.Set("pool_max_conns", strconv.Itoa(conns))
	u.RawQuery = q.Encode()
	return open(t, u.String())
}

func open(t testing.TB, dsn string) *pgxpool.Pool {
	t.Helper()
	pool, err := db.Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// NewStore returns a Store on a fresh migrated database.
func NewStore(t testing.TB) *db.Store {
	t.Helper()
	return db.New(NewPool(t), Logger(t))
}

// Logger returns a logger writing to t.Log.
func Logger(t testing.TB) *slog.Logger { return logtest.New(t) }
