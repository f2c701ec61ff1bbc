package githubtest

import (
	"cmp"
	"net/http"

	"github.com/weft-dev/weft/internal/fakekit"
)

// secondaryDocs is the documentation_url GitHub puts on a secondary rate
// limit's answer.
const secondaryDocs = "https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"

// writeFault answers with a failing fault as GitHub does: a rate limit is
// a secondary limit (403, or the Status given such as 429, with
// Retry-After), an error code a 422 with that message, and a bare status
// GitHub's error body for it.
func writeFault(w http.ResponseWriter, f fakekit.Fault) {
	switch {
	case f.RetryAfter > 0:
		w.Header().Set("Retry-After", f.RetryAfterSeconds())
		writeJSON(w, cmp.Or(f.Status, http.StatusForbidden), map[string]any{
			"message":           cmp.Or(f.Message, "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."),
			"documentation_url": secondaryDocs,
		})
	case f.Code != "":
		writeError(w, cmp.Or(f.Status, http.StatusUnprocessableEntity), cmp.Or(f.Message, f.Code))
	default:
		status := cmp.Or(f.Status, http.StatusInternalServerError)
		writeError(w, status, cmp.Or(f.Message, http.StatusText(status)))
	}
}
