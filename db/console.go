package db

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/weft-dev/weft/internal/thread"
)

// The console's queries: the operator pages read threads with what ops
// needs to see at a glance, timelines without the bulky LLM bodies, and
// the ledger, outbox and usage for the ops pages.

// ConsoleFilter selects threads for the console's list. Zero fields do not
// filter.
type ConsoleFilter struct {
	Status   thread.Status
	Type     thread.Type
	Platform thread.Platform // discord or linear: threads attached there
	// Stuck keeps only threads that should be moving and are not (see
	// ConsoleThread).
	Stuck bool
	// Search matches, case-insensitively, the text of one of a thread's
	// stitches (system prompts and deleted messages aside), its initial
	// prompt (the goal) included.
	Search string
	// After continues the listing (newest-updated first) after the thread
	// last seen: keyset paging, so a page deep in the list costs the same
	// as the first.
	AfterUpdated time.Time
	AfterID      uuid.UUID
	Limit        int
	// Grace is how long a thread may sit before it counts as stuck.
	Grace time.Duration
}

// ConsoleThread is a thread as the console lists it.
type ConsoleThread struct {
	thread.Thread
	OnLinear, OnDiscord bool
	// LeaseLapsed: running, but its turn's lease lapsed (or it has none).
	LeaseLapsed bool
	// Unanswered: input from a person is the newest stitch and no turn
	// has started on it (new input reopens even a finished thread).
	Unanswered bool
	// Stranded: a post to a platform has been due for longer than grace.
	Stranded bool
}

// Stuck reports whether the thread should be moving and is not.
func (t ConsoleThread) Stuck() bool { return t.LeaseLapsed || t.Unanswered || t.Stranded }

// The stuck conditions, over threads t, with the grace in ms as $1.
const (
	consoleLeaseLapsed = `(t.status = 'running' AND (t.lease_expires_at IS NULL OR t.lease_expires_at < now())
		AND t.last_activity_at < now() - $1 * interval '1 millisecond')`
	consoleUnanswered = `(t.status <> 'running' AND t.last_activity_at < now() - $1 * interval '1 millisecond'
		AND EXISTS (SELECT 1 FROM stitches h WHERE h.stitch_id = t.head_stitch_id
			AND h.stitch_type IN ('initial_prompt', 'discord_message', 'linear_activity') AND h.author_is_bot IS NOT TRUE))`
	consoleStranded = `EXISTS (SELECT 1 FROM platform_deliveries p WHERE p.thread_id = t.thread_id
		AND p.status = 'pending' AND p.next_attempt_at < now() - $1 * interval '1 millisecond')`
)

// MaxConsolePage bounds one page of the console's thread list.
const MaxConsolePage = 200

// ConsoleThreads lists threads newest-updated first, a page at a time. The
// page is found by the threads_updated_idx (updated_at DESC, thread_id
// DESC) index, an index-only scan of 50 entries however deep the page;
// the stuck conditions are evaluated only for the rows shown, unless Stuck
// filters on them.
func (q *Queries) ConsoleThreads(ctx context.Context, f ConsoleFilter) ([]ConsoleThread, error) {
	if f.Limit <= 0 || f.Limit > MaxConsolePage {
		f.Limit = 50
	}
	where := []string{"true"}
	args := []any{f.Grace.Milliseconds()}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if f.Status != "" {
		where = append(where, "t.status = "+arg(string(f.Status)))
	}
	if f.Type != "" {
		where = append(where, "t.thread_type = "+arg(string(f.Type)))
	}
	switch f.Platform {
	case "":
	case thread.PlatformLinear:
		where = append(where, "EXISTS (SELECT 1 FROM linear_thread_metadata l WHERE l.thread_id = t.thread_id)")
	case thread.PlatformDiscord:
		where = append(where, "EXISTS (SELECT 1 FROM discord_thread_metadata d WHERE d.thread_id = t.thread_id)")
	default:
		// API and CLI threads are attached nowhere.
		where = append(where, `NOT EXISTS (SELECT 1 FROM linear_thread_metadata l WHERE l.thread_id = t.thread_id)
			AND NOT EXISTS (SELECT 1 FROM discord_thread_metadata d WHERE d.thread_id = t.thread_id)`)
	}
	if f.Stuck {
		where = append(where, "("+consoleLeaseLapsed+" OR "+consoleUnanswered+" OR "+consoleStranded+")")
	}
	if s := strings.TrimSpace(f.Search); s != "" {
		p := arg("%" + escapeLike(s) + "%")
		// Through stitches_content_trgm_idx. A thread's goal is its
		// initial prompt's text, so searching stitches finds goals too; an
		// index on threads.goal would be written on every append (each
		// moves updated_at, so no update of a thread is heap-only).
		where = append(where, `t.thread_id IN (SELECT s.thread_id FROM stitches s
			WHERE s.content ILIKE `+p+` AND s.deleted_at IS NULL AND s.stitch_type <> 'system_prompt')`)
	}
	if !f.AfterUpdated.IsZero() {
		where = append(where, "(t.updated_at, t.thread_id) < ("+arg(f.AfterUpdated)+", "+arg(f.AfterID)+")")
	}
	// The page is chosen first, then its flags worked out: over the whole
	// table the planner would hash both attachment tables for the EXISTS
	// (190 ms at 100,000 threads) instead of probing 50 rows.
	order := ` ORDER BY t.updated_at DESC, t.thread_id DESC`
	sql := `SELECT ` + prefixed("t.", threadColumns) + `,
		EXISTS (SELECT 1 FROM linear_thread_metadata l WHERE l.thread_id = t.thread_id),
		EXISTS (SELECT 1 FROM discord_thread_metadata d WHERE d.thread_id = t.thread_id),
		` + consoleLeaseLapsed + `, ` + consoleUnanswered + `, ` + consoleStranded + `
		FROM (SELECT * FROM threads t WHERE ` + strings.Join(where, " AND ") + order + ` LIMIT ` + arg(f.Limit) + `) t` + order
	rows, err := q.db.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("console threads: %w", translate(err))
	}
	defer rows.Close()
	var out []ConsoleThread
	for rows.Next() {
		var c ConsoleThread
		t, err := scanThread(extraRow{Row: rows, extra: []any{&c.OnLinear, &c.OnDiscord, &c.LeaseLapsed, &c.Unanswered, &c.Stranded}})
		if err != nil {
			return nil, fmt.Errorf("console threads: %w", err)
		}
		c.Thread = *t
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("console threads: %w", translate(err))
	}
	return out, nil
}

// ConsoleStitch is a stitch as the timeline shows it: without its LLM
// request and response, which carry the whole conversation each and are
// read one at a time when an operator opens them.
type ConsoleStitch struct {
	thread.Stitch
	HasRequest, HasResponse bool
}

// consoleStitchColumns are stitchColumns with the LLM bodies left out.
var consoleStitchColumns = strings.Replace(stitchColumns, "llm_request, llm_response", "NULL::jsonb, NULL::jsonb", 1)

// ConsoleStitches reads up to limit stitches of a thread after position
// after, in chain order.
func (q *Queries) ConsoleStitches(ctx context.Context, threadID uuid.UUID, after int64, limit int) ([]ConsoleStitch, error) {
	rows, err := q.db.Query(ctx, `SELECT `+consoleStitchColumns+`, llm_request IS NOT NULL, llm_response IS NOT NULL
		FROM stitches WHERE thread_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, threadID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("console stitches: %w", translate(err))
	}
	defer rows.Close()
	var out []ConsoleStitch
	for rows.Next() {
		var c ConsoleStitch
		s, err := scanStitch(extraRow{Row: rows, extra: []any{&c.HasRequest, &c.HasResponse}})
		if err != nil {
			return nil, fmt.Errorf("console stitches: %w", err)
		}
		c.Stitch = *s
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("console stitches: %w", translate(err))
	}
	return out, nil
}

// LLMBodies returns the request and response of a thread's LLM call.
func (q *Queries) LLMBodies(ctx context.Context, threadID, stitchID uuid.UUID) (req, resp json.RawMessage, err error) {
	err = q.db.QueryRow(ctx, `SELECT llm_request, llm_response FROM stitches
		WHERE stitch_id = $1 AND thread_id = $2`, stitchID, threadID).Scan(&req, &resp)
	if err != nil {
		return nil, nil, fmt.Errorf("llm bodies of %s: %w", stitchID, translate(err))
	}
	return req, resp, nil
}

// OutboxBacklog lists up to limit posts not yet sent, oldest first.
func (q *Queries) OutboxBacklog(ctx context.Context, limit int) ([]thread.Outbox, error) {
	rows, err := q.db.Query(ctx, `SELECT `+outboxColumns+` FROM platform_deliveries
		WHERE status <> 'sent' ORDER BY created_at LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("outbox backlog: %w", translate(err))
	}
	out, err := collectOutbox(rows)
	if err != nil {
		return nil, fmt.Errorf("outbox backlog: %w", err)
	}
	return out, nil
}

// Delivery is an inbound delivery as the ledger recorded it.
type Delivery struct {
	Platform   thread.Platform
	DeliveryID string
	EventType  string
	Action     string
	Outcome    thread.InboundOutcome
	ThreadID   uuid.UUID // uuid.Nil when it opened or reached no thread
	ReceivedAt time.Time
}

// RecentDeliveries lists up to limit inbound deliveries, newest first.
func (q *Queries) RecentDeliveries(ctx context.Context, limit int) ([]Delivery, error) {
	rows, err := q.db.Query(ctx, `SELECT platform, delivery_id, event_type, action, outcome, thread_id, received_at
		FROM webhook_deliveries ORDER BY received_at DESC LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("recent deliveries: %w", translate(err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Delivery, error) {
		var (
			d      Delivery
			action pgtype.Text
			tid    pgtype.UUID
		)
		err := row.Scan(&d.Platform, &d.DeliveryID, &d.EventType, &action, &d.Outcome, &tid, &d.ReceivedAt)
		d.Action, d.ThreadID = str(action), uid(tid)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("recent deliveries: %w", translate(err))
	}
	return out, nil
}

// LLMUsage is one model's calls on one day.
type LLMUsage struct {
	Day          time.Time
	Model        string
	Calls        int64
	InputTokens  int64
	OutputTokens int64
}

// LLMUsageSince reads the llm_usage_daily view from day since on, by day
// then model.
func (q *Queries) LLMUsageSince(ctx context.Context, since time.Time) ([]LLMUsage, error) {
	rows, err := q.db.Query(ctx, `SELECT day::timestamptz, coalesce(model, ''), calls, input_tokens, output_tokens
		FROM llm_usage_daily WHERE day >= $1::date ORDER BY day, model`, since)
	if err != nil {
		return nil, fmt.Errorf("llm usage: %w", translate(err))
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[LLMUsage])
	if err != nil {
		return nil, fmt.Errorf("llm usage: %w", translate(err))
	}
	return out, nil
}

// WatchStitches registers a LISTEN connection's interest in a thread's new
// stitches: while the row stays, each stitch appended to the thread sends
// a NOTIFY on channel weft_stitch carrying the thread id (see migration
// 00015). It first clears the rows of backends that are gone. The caller
// removes its row with UnwatchStitches.
func (q *Queries) WatchStitches(ctx context.Context, threadID uuid.UUID, pid uint32) error {
	_, err := q.db.Exec(ctx, `
		WITH gone AS (
			DELETE FROM stitch_watchers w
			WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = w.pid)
		)
		INSERT INTO stitch_watchers (thread_id, pid) VALUES ($1, $2) ON CONFLICT DO NOTHING`, threadID, int32(pid))
	if err != nil {
		return fmt.Errorf("watch stitches of %s: %w", threadID, translate(err))
	}
	return nil
}

// UnwatchStitches removes a WatchStitches row.
func (q *Queries) UnwatchStitches(ctx context.Context, threadID uuid.UUID, pid uint32) error {
	_, err := q.db.Exec(ctx, `DELETE FROM stitch_watchers WHERE thread_id = $1 AND pid = $2`, threadID, int32(pid))
	if err != nil {
		return fmt.Errorf("unwatch stitches of %s: %w", threadID, translate(err))
	}
	return nil
}

// StitchChannel is the NOTIFY channel of new stitches on watched threads.
const StitchChannel = "weft_stitch"
