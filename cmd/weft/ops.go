package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/app"
)

// ops lists the ops views, or prints one as an aligned table.
func ops(ctx context.Context, cfg *app.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	if len(args) > 1 {
		return badUsage(stderr, "ops")
	}
	store, pool, err := app.Open(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer pool.Close()
	if len(args) == 0 {
		fmt.Fprintln(stdout, "Views (weft ops VIEW prints one):")
		for _, v := range db.Views() {
			fmt.Fprintln(stdout, "  "+v)
		}
		return nil
	}
	rows, err := store.View(ctx, args[0])
	if err != nil {
		return err
	}
	return printTable(stdout, rows)
}

// maxCell keeps one long value (a goal, a prompt) from widening the table
// past a terminal.
const maxCell = 60

func printTable(w io.Writer, v *db.ViewRows) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.ToUpper(strings.Join(v.Columns, "\t")))
	for _, row := range v.Rows {
		cells := make([]string, len(row))
		for i, c := range row {
			c = strings.Join(strings.Fields(c), " ")
			if r := []rune(c); len(r) > maxCell {
				c = string(r[:maxCell-1]) + "…"
			}
			if c == "" {
				c = "-"
			}
			cells[i] = c
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "(%d rows)\n", len(v.Rows))
	return nil
}
