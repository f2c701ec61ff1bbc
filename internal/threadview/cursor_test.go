package threadview_test

import (
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/threadview"
)

func TestPageLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want int
		invalid  bool
	}{
		{0, threadview.DefaultLimit, false},
		{1, 1, false},
		{threadview.MaxLimit, threadview.MaxLimit, false},
		{threadview.MaxLimit + 1, 0, true},
		{-1, 0, true},
	}
	for _, tt := range tests {
		got, err := threadview.PageLimit(tt.in)
		if tt.invalid {
			require.ErrorIs(t, err, thread.ErrInvalid, tt.in)
			continue
		}
		require.NoError(t, err, tt.in)
		require.Equal(t, tt.want, got, tt.in)
	}
}

func TestCursor(t *testing.T) {
	t.Parallel()
	type pos struct {
		Seq int64 `json:"s"`
	}
	c := threadview.EncodeCursor(threadview.CursorStitches, "thread-a", pos{Seq: 7})
	tests := []struct {
		name, cursor, kind, scope string
		ok                        bool
	}{
		{"SameEndpointAndScope", c, threadview.CursorStitches, "thread-a", true},
		{"AnotherScope", c, threadview.CursorStitches, "thread-b", false},
		{"AnotherEndpoint", c, threadview.CursorReplies, "thread-a", false},
		{"NotBase64", "not a cursor!", threadview.CursorStitches, "thread-a", false},
		{"NotJSON", base64.RawURLEncoding.EncodeToString([]byte("seven")), threadview.CursorStitches, "thread-a", false},
		{"NoKind", base64.RawURLEncoding.EncodeToString([]byte(`{"p":{"s":7}}`)), threadview.CursorStitches, "", false},
		{"PositionOfAnotherShape", threadview.EncodeCursor(threadview.CursorStitches, "thread-a", "7"), threadview.CursorStitches, "thread-a", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got pos
			err := threadview.DecodeCursor(tt.cursor, tt.kind, tt.scope, &got)
			if !tt.ok {
				var e *httpapi.Error
				require.ErrorAs(t, err, &e)
				require.Equal(t, httpapi.CodeInvalidArgument, e.Code)
				return
			}
			require.NoError(t, err)
			require.Equal(t, pos{Seq: 7}, got)
		})
	}
}
