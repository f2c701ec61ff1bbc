package slacktest

import (
	"cmp"
	"net/http"

	"github.com/weft-dev/weft/internal/fakekit"
)

// writeFault answers with a failing fault as Slack does: a rate limit is a
// 429 with Retry-After and error "ratelimited", an error code an ok:false
// body (HTTP 200 unless Status says otherwise), and a bare status what
// Slack's edge sends, without a body.
func writeFault(w http.ResponseWriter, f fakekit.Fault) {
	status, code := f.Status, f.Code
	if f.RetryAfter > 0 {
		w.Header().Set("Retry-After", f.RetryAfterSeconds())
		status = cmp.Or(status, http.StatusTooManyRequests)
		code = cmp.Or(code, "ratelimited")
	}
	switch {
	case code != "":
		writeJSON(w, cmp.Or(status, http.StatusOK), errBody(code))
	default:
		w.WriteHeader(cmp.Or(status, http.StatusInternalServerError))
	}
}
