package db

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weft-dev/weft/internal/thread"
)

// StitchSearch is a text search over the conversations: the messages (see
// isMessage) whose text contains Query, case-insensitively.
type StitchSearch struct {
	Query string
	Limit int // threads, at most MaxSearchResults
}

// MaxSearchResults bounds the threads one search returns.
const MaxSearchResults = 100

// SearchHit is a thread whose conversation matched, with its newest
// matching message.
type SearchHit struct {
	Thread  thread.Thread
	Stitch  thread.Stitch // the newest match
	Matches int           // how many of the thread's messages matched
}

// SearchStitches finds the threads whose messages contain the query, the
// most recently matching first. It is a substring match (ILIKE, served by
// the trigram index of migration 00011), so it finds words in any language,
// code identifiers and ids alike. Deleted messages never match, and neither
// do system prompts. An empty query fails with thread.ErrInvalid.
func (q *Queries) SearchStitches(ctx context.Context, s StitchSearch) ([]SearchHit, error) {
	if strings.TrimSpace(s.Query) == "" {
		return nil, fmt.Errorf("search stitches: %w: empty query", thread.ErrInvalid)
	}
	if s.Limit <= 0 || s.Limit > MaxSearchResults {
		s.Limit = MaxSearchResults
	}
	// The index predicate (deleted_at IS NULL AND stitch_type <>
	// 'system_prompt') is repeated literally so the planner can use it.
	rows, err := q.db.Query(ctx, `
		SELECT * FROM (
			SELECT DISTINCT ON (thread_id) `+stitchColumns+`, count(*) OVER (PARTITION BY thread_id) AS matches
			FROM stitches
			WHERE content ILIKE $1 ESCAPE '\' AND deleted_at IS NULL AND stitch_type <> 'system_prompt'
			  AND `+isMessage+`
			ORDER BY thread_id, seq DESC
		) m
		ORDER BY created_at DESC, thread_id
		LIMIT $2`, "%"+escapeLike(s.Query)+"%", s.Limit)
	if err != nil {
		return nil, fmt.Errorf("search stitches: %w", translate(err))
	}
	defer rows.Close()
	var out []SearchHit
	var ids []uuid.UUID
	for rows.Next() {
		var hit SearchHit
		st, err := scanStitch(extraRow{Row: rows, extra: []any{&hit.Matches}})
		if err != nil {
			return nil, fmt.Errorf("search stitches: %w", err)
		}
		hit.Stitch = *st
		out = append(out, hit)
		ids = append(ids, st.ThreadID)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search stitches: %w", translate(err))
	}
	if len(out) == 0 {
		return nil, nil
	}
	threads, err := q.threadsByID(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("search stitches: %w", err)
	}
	for i := range out {
		out[i].Thread = threads[out[i].Stitch.ThreadID]
	}
	return out, nil
}

// threadsByID loads threads by id.
func (q *Queries) threadsByID(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]thread.Thread, error) {
	rows, err := q.db.Query(ctx, `SELECT `+threadColumns+` FROM threads WHERE thread_id = ANY($1)`, ids)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := make(map[uuid.UUID]thread.Thread, len(ids))
	for rows.Next() {
		t, err := scanThread(rows)
		if err != nil {
			return nil, err
		}
		out[t.ID] = *t
	}
	return out, translate(rows.Err())
}

// extraRow scans a row that has columns after the ones a scanner knows:
// they go to extra.
type extraRow struct {
	pgx.Row
	extra []any
}

func (r extraRow) Scan(dest ...any) error { return r.Row.Scan(append(dest, r.extra...)...) }

// escapeLike makes q match literally inside a LIKE pattern.
func escapeLike(q string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(q)
}
