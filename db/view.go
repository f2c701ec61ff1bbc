package db

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/weft-dev/weft/internal/thread"
)

// Views lists the ops views, in the order `weft ops` shows them.
func Views() []string {
	return []string{
		"thread_overview", "active_linear_threads", "active_discord_threads", "active_slack_threads",
		"active_github_threads", "cross_platform_threads", "stuck_threads", "linear_session_health", "delivery_backlog", "daily_thread_stats", "llm_usage_daily",
	}
}

// ViewRows is an ops view's contents as text, ready to print.
type ViewRows struct {
	Columns []string
	Rows    [][]string
}

// MaxViewRows bounds what an ops view prints.
const MaxViewRows = 500

// View reads up to MaxViewRows of an ops view. Only the names Views lists are
// accepted: the name is interpolated into SQL.
func (q *Queries) View(ctx context.Context, name string) (*ViewRows, error) {
	if !slices.Contains(Views(), name) {
		return nil, fmt.Errorf("view %q: %w", name, thread.ErrNotFound)
	}
	rows, err := q.db.Query(ctx, fmt.Sprintf("SELECT * FROM %s LIMIT %d", pgx.Identifier{name}.Sanitize(), MaxViewRows),
		pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return nil, fmt.Errorf("view %s: %w", name, translate(err))
	}
	defer rows.Close()
	out := &ViewRows{}
	for _, f := range rows.FieldDescriptions() {
		out.Columns = append(out.Columns, f.Name)
	}
	for rows.Next() {
		// The simple protocol returns every value as text, as psql prints it.
		raw := rows.RawValues()
		row := make([]string, len(raw))
		for i, v := range raw {
			if v == nil {
				row[i] = ""
			} else {
				row[i] = string(v)
			}
		}
		out.Rows = append(out.Rows, row)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("view %s: %w", name, translate(err))
	}
	return out, nil
}
