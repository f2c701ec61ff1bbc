package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/app"
)

func migrate(ctx context.Context, cfg *app.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	if len(args) != 1 {
		return badUsage(stderr, "migrate")
	}
	// On the direct connection, as serve migrates (app.Migrate).
	_, pool, err := app.OpenDirect(ctx, cfg, 2, logger)
	if err != nil {
		return err
	}
	defer pool.Close()
	newMigrator := db.NewMigrator
	if cfg.DatabaseDirectURL == "" && cfg.DatabasePooler == "transaction" {
		newMigrator = db.NewPoolerMigrator
	}
	m, err := newMigrator(pool, logger.With("component", "migrate"))
	if err != nil {
		return err
	}
	defer m.Close()

	switch args[0] {
	case "up":
		res, err := m.Up(ctx)
		for _, r := range res {
			fmt.Fprintf(stdout, "applied %s (%s)\n", r.Source.Path, r.Duration.Round(1e6))
		}
		if err == nil && len(res) == 0 {
			fmt.Fprintln(stdout, "no pending migrations")
		}
		return err
	case "down":
		r, err := m.Down(ctx)
		if r != nil {
			fmt.Fprintf(stdout, "rolled back %s\n", r.Source.Path)
		}
		return err
	case "status":
		st, err := m.Status(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "VERSION\tSTATE\tAPPLIED AT\tFILE")
		for _, s := range st {
			at := "-"
			if !s.AppliedAt.IsZero() {
				at = s.AppliedAt.Format("2006-01-02 15:04:05")
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", s.Source.Version, s.State, at, s.Source.Path)
		}
		return tw.Flush()
	}
	fmt.Fprintf(stderr, "weft migrate: unknown action %q (want up, down or status)\n", args[0])
	return errUsage
}
