package apitest_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/api/apitest"
)

// recorder is a testing.TB that keeps what it is told to report.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// A documented thread, as GET /api/v1/threads/{id} answers it.
const threadJSON = `{"id":"0192f1d2-0000-7000-8000-000000000001","type":"autonomous","goal":"g","status":"pending",` +
	`"agent_name":"weft","stitch_count":1,"created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z",` +
	`"last_activity_at":"2026-01-01T00:00:00Z"}`

func TestHandlerFindsWhatTheDocumentDoesNotSay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		method string
		path   string
		status int
		header map[string]string
		body   string
		wants  string // "" for no report
	}{
		{"Documented", "GET", "/api/v1/threads/0192f1d2-0000-7000-8000-000000000001", 200, nil, threadJSON, ""},
		{"UndocumentedStatus", "GET", "/api/v1/threads/0192f1d2-0000-7000-8000-000000000001", 418, nil, `{"error":"x","code":"Internal"}`, "status is not supported"},
		{"UndocumentedField", "GET", "/api/v1/threads/0192f1d2-0000-7000-8000-000000000001", 200, nil,
			strings.Replace(threadJSON, `"goal":"g"`, `"goal":"g","colour":"red"`, 1), "colour"},
		{"MissingField", "GET", "/api/v1/threads/0192f1d2-0000-7000-8000-000000000001", 200, nil,
			strings.Replace(threadJSON, `"goal":"g",`, ``, 1), "goal"},
		{"UnknownCode", "GET", "/api/v1/threads/0192f1d2-0000-7000-8000-000000000001", 404, nil, `{"error":"x","code":"not_found"}`, "not_found"},
		{"CodeOfAnotherStatus", "GET", "/api/v1/threads/0192f1d2-0000-7000-8000-000000000001", 404, nil, `{"error":"x","code":"InvalidArgument"}`, "another status"},
		{"UnknownRouteAsText", "GET", "/nope", 404, map[string]string{"Content-Type": "text/plain"}, "404 page not found", "content type"},
		{"UnknownRouteAsJSON", "GET", "/nope", 404, nil, `{"error":"x","code":"NotFound"}`, ""},
		{"WrongMethodWithoutAllow", "DELETE", "/api/v1/threads", 405, nil, `{"error":"x","code":"MethodNotAllowed"}`, "Allow"},
		{"RefusedRequestAccepted", "GET", "/api/v1/threads?limit=1000", 200, nil, `{"threads":[],"has_more":false}`, "refuses the request"},
		{"BodyWhereNoneIsDocumented", "POST", "/mcp", 202, nil, `{"jsonrpc":"2.0"}`, "body where the document has none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			})
			rec := &recorder{TB: t}
			req := httptest.NewRequest(tt.method, tt.path, strings.NewReader(`{"jsonrpc":"2.0","method":"x"}`))
			req.Header.Set("Content-Type", "application/json")
			apitest.Handler(rec, h).ServeHTTP(httptest.NewRecorder(), req)
			if tt.wants == "" {
				require.Empty(t, rec.errors)
				return
			}
			require.NotEmpty(t, rec.errors)
			require.Contains(t, strings.Join(rec.errors, "\n"), tt.wants)
		})
	}
}
