package db

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db/internal/dbsqlc"
	"github.com/weft-dev/weft/internal/thread"
)

// StitchSearch is a text search over the conversations: the messages (see
// ThreadReplies) whose text contains Query, case-insensitively.
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
	rows, err := q.gen.SearchStitches(ctx, dbsqlc.SearchStitchesParams{
		Pattern: "%" + escapeLike(s.Query) + "%", MaxRows: int32(s.Limit),
	})
	if err != nil {
		return nil, fmt.Errorf("search stitches: %w", translate(err))
	}
	if len(rows) == 0 {
		return nil, nil
	}
	out := make([]SearchHit, len(rows))
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		st, _ := stitchOf(r.Stitch, nil)
		out[i] = SearchHit{Stitch: *st, Matches: int(r.Matches)}
		ids[i] = st.ThreadID
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
	rows, err := q.gen.ThreadsByID(ctx, ids)
	threads, err := mapAll(rows, err, threadOf)
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID]thread.Thread, len(threads))
	for _, t := range threads {
		out[t.ID] = t
	}
	return out, nil
}

// escapeLike makes q match literally inside a LIKE pattern.
func escapeLike(q string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(q)
}
