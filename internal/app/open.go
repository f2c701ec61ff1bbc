package app

import (
	"context"
	"io"
	"log/slog"
	neturl "net/url"
	"strconv"
	"strings"

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
// unless the URL sets pool_max_conns.
func Open(ctx context.Context, cfg *Config, logger *slog.Logger) (*db.Store, *pgxpool.Pool, error) {
	url := cfg.DatabaseURL
	if cfg.DBConns > 0 && !strings.Contains(url, "pool_max_conns") {
		url = WithQuery(url, "pool_max_conns", strconv.Itoa(cfg.DBConns))
	}
	pool, err := db.OpenTraced(ctx, url, cfg.DBTracer)
	if err != nil {
		return nil, nil, err
	}
	return db.New(pool, logger), pool, nil
}

// OpenMigrated connects and applies pending migrations, as the commands
// that run the processor must before they start.
func OpenMigrated(ctx context.Context, cfg *Config, logger *slog.Logger) (*db.Store, *pgxpool.Pool, error) {
	store, pool, err := Open(ctx, cfg, logger)
	if err != nil {
		return nil, nil, err
	}
	if err := db.Migrate(ctx, pool, logger.With("component", "migrate")); err != nil {
		pool.Close()
		return nil, nil, err
	}
	return store, pool, nil
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
