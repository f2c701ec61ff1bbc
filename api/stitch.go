package api

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/threadview"
)

// stitchReader reads a thread's chain.
type stitchReader interface {
	Thread(ctx context.Context, id uuid.UUID) (*thread.Thread, error)
	Stitches(ctx context.Context, threadID uuid.UUID, p db.StitchPage) ([]thread.Stitch, error)
}

// stitchCursor is where a page of stitches ended.
type stitchCursor struct {
	Seq int64 `json:"s"`
}

// stitchList is a page of a thread's stitches, in chain order.
type stitchList struct {
	Stitches   []threadview.Stitch `json:"stitches"`
	NextCursor string              `json:"next_cursor,omitempty"`
	HasMore    bool                `json:"has_more"`
}

// handleStitchList returns a thread's stitches in chain order, a page at a
// time.
func handleStitchList(logger *slog.Logger, store stitchReader) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := threadID(r)
		if err != nil {
			httpapi.WriteError(w, r, logger, err)
			return
		}
		limit, err := intParam(r, "limit")
		if err == nil {
			limit, err = threadview.PageLimit(limit)
		}
		if err != nil {
			httpapi.WriteError(w, r, logger, err)
			return
		}
		var after stitchCursor
		if c := r.URL.Query().Get("cursor"); c != "" {
			if err := threadview.DecodeCursor(c, threadview.CursorStitches, id.String(), &after); err != nil {
				httpapi.WriteError(w, r, logger, err)
				return
			}
		}
		// An unknown thread is a 404, not an empty list.
		if _, err := store.Thread(r.Context(), id); err != nil {
			httpapi.WriteError(w, r, logger, err)
			return
		}
		stitches, err := store.Stitches(r.Context(), id, db.StitchPage{After: after.Seq, Limit: limit + 1})
		if err != nil {
			httpapi.WriteError(w, r, logger, err)
			return
		}
		out := stitchList{Stitches: make([]threadview.Stitch, 0, min(len(stitches), limit))}
		if len(stitches) > limit {
			stitches = stitches[:limit]
			out.HasMore, out.NextCursor = true, threadview.EncodeCursor(threadview.CursorStitches, id.String(), stitchCursor{Seq: stitches[limit-1].Seq})
		}
		for i := range stitches {
			out.Stitches = append(out.Stitches, threadview.OfStitch(&stitches[i]))
		}
		httpapi.Encode(w, http.StatusOK, out)
	})
}
