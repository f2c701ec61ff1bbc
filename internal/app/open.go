package app

import (
	"context"
	"io"
	"log/slog"
	neturl "net/url"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/logging"
)

// NewLogger is weft's logger: JSON lines on w at level ("debug", "info",
// "warn" or "error"; anything else is info).
func NewLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		l = slog.LevelInfo
	}
	// Context ids on every line, a repeating failure once per interval,
	// River's routine status lines at debug.
	return slog.New(logging.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}), logging.Options{Demote: logging.RiverDemote}))
}

// Open connects to the configured database, its pool sized by DBConns
// unless the URL sets pool_max_conns. Behind a transaction pooler, pgx
// keeps no prepared statement (PgBouncer would run the next statement on
// another server connection, which lacks it: SQLSTATE 26000): it caches
// statements' descriptions and runs each with the unnamed statement, in
// one round trip, unless the URL sets default_query_exec_mode itself.
func Open(ctx context.Context, cfg *Config, logger *slog.Logger) (*db.Store, *pgxpool.Pool, error) {
	url := cfg.DatabaseURL
	if cfg.DatabasePooler == "transaction" && !strings.Contains(url, "default_query_exec_mode") {
		url = WithQuery(url, "default_query_exec_mode", "cache_describe")
	}
	return open(ctx, url, cfg.DBConns, cfg.DBTracer, logger)
}

// OpenDirect connects to WEFT_DATABASE_DIRECT_URL (DATABASE_URL when it is
// unset) with conns connections: what must hold a session, LISTEN or a
// session lock, opens there.
func OpenDirect(ctx context.Context, cfg *Config, conns int, logger *slog.Logger) (*db.Store, *pgxpool.Pool, error) {
	if cfg.DatabaseDirectURL == "" {
		c := *cfg
		c.DBConns, c.DBTracer = conns, nil
		return Open(ctx, &c, logger)
	}
	return open(ctx, cfg.DatabaseDirectURL, conns, nil, logger)
}

func open(ctx context.Context, url string, conns int, tracer pgx.QueryTracer, logger *slog.Logger) (*db.Store, *pgxpool.Pool, error) {
	if conns > 0 && !strings.Contains(url, "pool_max_conns") {
		url = WithQuery(url, "pool_max_conns", strconv.Itoa(conns))
	}
	pool, err := db.OpenTraced(ctx, url, tracer)
	if err != nil {
		return nil, nil, err
	}
	return db.New(pool, logger), pool, nil
}

// migrationConns is the direct pool's size while it migrates: goose's
// lock holds one connection, the migrations run on another.
const migrationConns = 2

// OpenMigrated connects and applies pending migrations, as the commands
// that run the processor must before they start. Migrations run on the
// direct connection when there is one; behind a pooler without one, under
// goose's lease row rather than a session's advisory lock.
func OpenMigrated(ctx context.Context, cfg *Config, logger *slog.Logger) (*db.Store, *pgxpool.Pool, error) {
	store, pool, err := Open(ctx, cfg, logger)
	if err != nil {
		return nil, nil, err
	}
	if err := Migrate(ctx, cfg, pool, logger.With("component", "migrate")); err != nil {
		pool.Close()
		return nil, nil, err
	}
	return store, pool, nil
}

// Migrate applies pending migrations as OpenMigrated does; pool is
// DATABASE_URL's.
func Migrate(ctx context.Context, cfg *Config, pool *pgxpool.Pool, logger *slog.Logger) error {
	switch {
	case cfg.DatabaseDirectURL != "":
		_, direct, err := OpenDirect(ctx, cfg, migrationConns, logger)
		if err != nil {
			return err
		}
		defer direct.Close()
		return db.Migrate(ctx, direct, logger)
	case cfg.DatabasePooler == "transaction":
		return db.MigrateThroughPooler(ctx, pool, logger)
	}
	return db.Migrate(ctx, pool, logger)
}

// WithQuery sets one query parameter of a database URL; an URL it cannot
// parse is returned as it is, for the driver to refuse.
func WithQuery(raw, key, value string) string {
	u, err := neturl.Parse(raw)
	if err != nil {
		return raw
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}
