package kit

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Scratch creates a bench's scratch database on the server behind
// adminURL (dropping an old one of that name first) and returns its URL
// and a cleanup that drops it again, unless keep.
func Scratch(ctx context.Context, adminURL, name string, keep bool, logger *slog.Logger) (string, func(), error) {
	url, drop, err := scratchDatabase(ctx, adminURL, name)
	if err != nil {
		return "", nil, err
	}
	cleanup := func() {
		if keep {
			return
		}
		if err := drop(context.WithoutCancel(ctx)); err != nil {
			logger.Warn("drop scratch database", slog.Any("error", err))
		}
	}
	return url, cleanup, nil
}

// scratchDatabase creates a fresh database named name on the server behind
// adminURL and returns its URL and a function that drops it.
func scratchDatabase(ctx context.Context, adminURL, name string) (string, func(context.Context) error, error) {
	scratchURL := adminURL
	adminURL = withoutPoolParams(adminURL)
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return "", nil, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(ctx)
	ident := pgx.Identifier{name}.Sanitize()
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
		return "", nil, fmt.Errorf("drop old scratch database: %w", err)
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+ident); err != nil {
		return "", nil, fmt.Errorf("create scratch database: %w", err)
	}
	u, err := url.Parse(scratchURL)
	if err != nil {
		return "", nil, fmt.Errorf("parse url: %w", err)
	}
	u.Path = "/" + name
	drop := func(ctx context.Context) error {
		c, err := pgx.Connect(ctx, adminURL)
		if err != nil {
			return err
		}
		defer c.Close(ctx)
		_, err = c.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)")
		return err
	}
	return u.String(), drop, nil
}

// withoutPoolParams drops pgxpool's own parameters (pool_max_conns, …)
// from a DATABASE_URL, which a single connection would send to the server
// as unknown settings. The scratch database's URL keeps them.
func withoutPoolParams(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	q := u.Query()
	for k := range q {
		if strings.HasPrefix(k, "pool_") {
			q.Del(k)
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}
