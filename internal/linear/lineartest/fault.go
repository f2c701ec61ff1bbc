package lineartest

import (
	"cmp"
	"net/http"
	"strconv"
	"time"

	"github.com/weft-dev/weft/internal/fakekit"
)

// writeFault answers with a failing fault as Linear would: a rate limit is
// RATELIMITED with the X-RateLimit-* headers, a code is a GraphQL error,
// a 500 is Linear's INTERNAL_SERVER_ERROR, and any other status an HTML
// page from the gateway in front of it.
func writeFault(w http.ResponseWriter, f fakekit.Fault) {
	switch {
	case f.RetryAfter > 0:
		reset := time.Now().Add(f.RetryAfter).UnixMilli()
		h := w.Header()
		h.Set("X-RateLimit-Requests-Limit", "5000")
		h.Set("X-RateLimit-Requests-Remaining", "0")
		h.Set("X-RateLimit-Requests-Reset", strconv.FormatInt(reset, 10))
		h.Set("X-RateLimit-Complexity-Limit", "2000000")
		h.Set("X-RateLimit-Complexity-Remaining", "1999000")
		// A complexity reset far away: the client must pick the exhausted
		// bucket's reset, not the latest one.
		h.Set("X-RateLimit-Complexity-Reset", strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10))
		// Linear answers 400, with the HTTP meaning in statusCode.
		writeErrors(w, cmp.Or(f.Status, http.StatusBadRequest), gqlError{
			Message: "Rate limit exceeded",
			Extensions: map[string]any{
				"code": "RATELIMITED", "type": "ratelimited", "statusCode": 429,
				"userPresentableMessage": "Rate limit exceeded.",
			},
		})
	case f.Code != "":
		writeErrors(w, cmp.Or(f.Status, http.StatusOK), gqlError{
			Message: cmp.Or(f.Message, "injected error"), Extensions: map[string]any{"code": f.Code},
		})
	case cmp.Or(f.Status, http.StatusInternalServerError) == http.StatusInternalServerError:
		writeErrors(w, http.StatusInternalServerError, gqlError{
			Message: "Internal server error", Extensions: map[string]any{"code": "INTERNAL_SERVER_ERROR"},
		})
	default:
		// Gateways answer in HTML, not GraphQL.
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(f.Status)
		_, _ = w.Write([]byte("<html><body>" + http.StatusText(f.Status) + "</body></html>"))
	}
}
