package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/thread"
)

func TestErrorOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		code httpapi.Code
		msg  string
	}{
		{"APIError", fmt.Errorf("wrapped: %w", httpapi.Invalid("limit must be at most %d", 200)), httpapi.CodeInvalidArgument, "limit must be at most 200"},
		{"DomainErrorKeepsItsMessage", fmt.Errorf("start: %w", thread.ErrEmptyGoal), httpapi.CodeInvalidArgument, "thread goal is empty"},
		{"WrappedKindHidesTheStore", fmt.Errorf("db: thread 42: %w", thread.ErrNotFound), httpapi.CodeNotFound, "not found"},
		{"Transition", &thread.TransitionError{From: thread.StatusCompleted, To: thread.StatusRunning}, httpapi.CodeConflict, "thread status cannot go from completed to running"},
		{"Duplicate", thread.ErrDuplicateDelivery, httpapi.CodeConflict, "delivery already recorded"},
		{"Timeout", fmt.Errorf("query: %w", context.DeadlineExceeded), httpapi.CodeUnavailable, "the request timed out; try again later"},
		{"Unknown", errors.New("pq: connection reset at 10.0.0.7"), httpapi.CodeInternal, "internal error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := httpapi.ErrorOf(tt.err)
			require.Equal(t, tt.code, e.Code)
			require.Equal(t, tt.msg, e.Message)
		})
	}
}

func TestEveryCodeHasItsOwnStatus(t *testing.T) {
	t.Parallel()
	seen := map[int]httpapi.Code{}
	for _, c := range httpapi.Codes() {
		s := c.Status()
		require.GreaterOrEqual(t, s, 400, c)
		require.NotContains(t, seen, s, "%s and %s share a status", c, seen[s])
		seen[s] = c
	}
}

func TestDecodeSpeaksJSON(t *testing.T) {
	t.Parallel()
	type body struct {
		Goal  string   `json:"goal"`
		Count int      `json:"count"`
		Tags  []string `json:"tags"`
	}
	tests := []struct {
		name, body, msg string
	}{
		{"Empty", "", "the body is empty"},
		{"Syntax", `{"goal":}`, "the body is not valid JSON (at byte 9)"},
		{"Truncated", `{"goal":"x"`, "the body ends before its JSON value does"},
		{"WrongType", `{"count":"three"}`, `field "count" must be a JSON number`},
		{"WrongTypeArray", `{"tags":"a"}`, `field "tags" must be a JSON array`},
		{"NotAnObject", `[1]`, "the body must be a JSON object"},
		{"UnknownField", `{"colour":"red"}`, `unknown field "colour"`},
		{"Trailing", `{"goal":"x"} {}`, "the body has data after its JSON value"},
		{"TooLarge", `{"goal":"` + strings.Repeat("x", httpapi.MaxBodyBytes) + `"}`, "the body is larger than 1048576 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tt.body))
			_, err := httpapi.Decode[body](httptest.NewRecorder(), r)
			e := httpapi.ErrorOf(err)
			require.Equal(t, httpapi.CodeInvalidArgument, e.Code)
			require.Equal(t, tt.msg, e.Message)
		})
	}
}
