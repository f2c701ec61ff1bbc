package db

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// codeDuplicateDatabase is what CREATE DATABASE answers when another
// process created the database first.
const codeDuplicateDatabase = "42P04"

// CreateDatabase creates the database url names, unless it exists, by
// connecting to the server's "postgres" database as url's user; created
// reports whether it did. It is how a command with a default database (a
// fresh machine's `weft demo`) works without a setup step.
func CreateDatabase(ctx context.Context, url string) (created bool, err error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return false, fmt.Errorf("parse database url: %w", err)
	}
	name := cfg.Database
	cfg.Database = "postgres"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return false, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return false, fmt.Errorf("look up database %s: %w", name, err)
	}
	if exists {
		return false, nil
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == codeDuplicateDatabase {
			return false, nil
		}
		return false, fmt.Errorf("create database %s: %w", name, err)
	}
	return true, nil
}
