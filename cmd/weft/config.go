package main

import (
	"fmt"
	"time"
)

// config is weft's configuration, read once from the environment.
type config struct {
	DatabaseURL     string
	Addr            string
	LogLevel        string
	ShutdownTimeout time.Duration
}

// defaultDatabaseURL is the local PostgreSQL `make run` finds on a fresh
// machine; the Makefile passes DATABASE_URL explicitly anyway.
const defaultDatabaseURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

func loadConfig(getenv func(string) string) (*config, error) {
	cfg := &config{
		DatabaseURL:     getenv("DATABASE_URL"),
		Addr:            getenv("WEFT_ADDR"),
		LogLevel:        getenv("WEFT_LOG_LEVEL"),
		ShutdownTimeout: 30 * time.Second,
	}
	if cfg.DatabaseURL == "" {
		cfg.DatabaseURL = defaultDatabaseURL
	}
	if cfg.Addr == "" {
		cfg.Addr = ":8080"
	}
	if v := getenv("WEFT_SHUTDOWN_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("WEFT_SHUTDOWN_TIMEOUT: %w", err)
		}
		cfg.ShutdownTimeout = d
	}
	return cfg, nil
}
