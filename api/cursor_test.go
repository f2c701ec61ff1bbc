package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/replies/repliestest"
)

// page is the part of any listing a cursor test reads: next_cursor, or
// nextCursor in get-thread-replies' shape.
type page struct {
	NextCursor string  `json:"next_cursor"`
	Next       *string `json:"nextCursor"`
}

func TestCursorsAreBoundToTheirEndpoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	conv := repliestest.NewConversation(ctx, t, b.store, 5)
	other := dbtest.Thread(ctx, t, b.store, nil)
	a := conv.Thread.ID.String()

	// One cursor of each endpoint, for thread a, oldest first, no filter.
	first := func(path string) string {
		t.Helper()
		var p page
		require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, path, "", &p), path)
		if p.Next != nil {
			p.NextCursor = *p.Next
		}
		require.NotEmpty(t, p.NextCursor, path)
		return url.QueryEscape(p.NextCursor)
	}
	repliesCursor := first("/api/v1/threads/" + a + "/replies?limit=1")
	stitchesCursor := first("/api/v1/threads/" + a + "/stitches?limit=1")
	threadsCursor := first("/api/v1/threads?limit=1")

	tests := []struct {
		name string
		path string
	}{
		{"RepliesOfAnotherThread", "/api/v1/threads/" + other.ID.String() + "/replies?cursor=" + repliesCursor},
		{"RepliesOfAnotherOrder", "/api/v1/threads/" + a + "/replies?order=newest&cursor=" + repliesCursor},
		{"StitchesOfAnotherThread", "/api/v1/threads/" + other.ID.String() + "/stitches?cursor=" + stitchesCursor},
		{"ThreadsWithOtherFilters", "/api/v1/threads?type=autonomous&cursor=" + threadsCursor},
		{"RepliesCursorForStitches", "/api/v1/threads/" + a + "/stitches?cursor=" + repliesCursor},
		{"StitchesCursorForReplies", "/api/v1/threads/" + a + "/replies?cursor=" + stitchesCursor},
		{"StitchesCursorForThreads", "/api/v1/threads?cursor=" + stitchesCursor},
		{"ThreadsCursorForStitches", "/api/v1/threads/" + a + "/stitches?cursor=" + threadsCursor},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var body httpapi.ErrorBody
			require.Equal(t, http.StatusBadRequest, b.do(t, http.MethodGet, tt.path, "", &body))
			require.Equal(t, httpapi.CodeInvalidArgument, body.Code)
		})
	}
	t.Run("SameEndpointReadsOn", func(t *testing.T) {
		t.Parallel()
		for _, path := range []string{
			"/api/v1/threads/" + a + "/replies?limit=1&cursor=" + repliesCursor,
			"/api/v1/threads/" + a + "/stitches?limit=1&cursor=" + stitchesCursor,
			"/api/v1/threads?limit=1&cursor=" + threadsCursor,
		} {
			require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, path, "", nil), path)
		}
	})
}

func TestBodiesMustBeJSON(t *testing.T) {
	t.Parallel()
	b := setup(t)
	th := dbtest.Thread(context.Background(), t, b.store, nil)
	tests := []struct {
		name, path, contentType, body string
		status                        int
	}{
		{"CreateAsText", "/api/v1/threads", "text/plain", `{"goal":"x"}`, http.StatusUnsupportedMediaType},
		{"CreateAsForm", "/api/v1/threads", "application/x-www-form-urlencoded", "goal=x", http.StatusUnsupportedMediaType},
		{"CreateWithoutType", "/api/v1/threads", "", `{"goal":"x"}`, http.StatusUnsupportedMediaType},
		{"CreateWithCharset", "/api/v1/threads", "application/json; charset=utf-8", `{"goal":"x"}`, http.StatusCreated},
		{"AbortAsText", "/api/v1/threads/" + th.ID.String() + "/abort", "text/plain", `{"reason":"x"}`, http.StatusUnsupportedMediaType},
		{"AbortWithoutBodyNeedsNoType", "/api/v1/threads/" + th.ID.String() + "/abort", "", "", http.StatusOK},
		{"MCPAsText", "/mcp", "text/plain", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, http.StatusUnsupportedMediaType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(http.MethodPost, tt.path, strings.NewReader(tt.body))
			req.Header.Set("Authorization", "Bearer "+token)
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			rec := httptest.NewRecorder()
			b.handler.ServeHTTP(rec, req)
			require.Equal(t, tt.status, rec.Code, rec.Body.String())
			if tt.status == http.StatusUnsupportedMediaType {
				require.Contains(t, rec.Body.String(), `"code":"UnsupportedMediaType"`)
			}
		})
	}
}
