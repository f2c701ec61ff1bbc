package api

import (
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/replies"
)

// replyStatuses maps get-thread-replies' error codes to HTTP. A platform
// refusing weft's own credentials is a 502: the caller's token was fine,
// and a 401 would tell it otherwise.
var replyStatuses = map[replies.Code]int{
	replies.CodeNotFound:       http.StatusNotFound,
	replies.CodeInvalid:        http.StatusBadRequest,
	replies.CodeAuthentication: http.StatusBadGateway,
	replies.CodeAuthorization:  http.StatusForbidden,
	replies.CodeRateLimit:      http.StatusTooManyRequests,
	replies.CodeUnavailable:    http.StatusServiceUnavailable,
}

// handleReplies is get-thread-replies: {id} is a weft thread id or a
// Discord thread id; limit, cursor and order are query parameters.
func handleReplies(logger *slog.Logger, svc RepliesGetter) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit, err := intParam(r, "limit")
		if err != nil {
			httpapi.WriteError(w, r, logger, err)
			return
		}
		q := r.URL.Query()
		resp, err := svc.Get(r.Context(), replies.Request{
			ThreadID: chi.URLParam(r, "id"), Limit: limit, Cursor: q.Get("cursor"), Order: replies.Order(q.Get("order")),
		})
		var e *replies.Error
		switch {
		case err == nil:
			httpapi.Encode(w, http.StatusOK, resp)
		case errors.As(err, &e):
			// The service logged the cause; the client gets the code and
			// the safe message.
			if e.Code == replies.CodeRateLimit && e.RetryAfter > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
			}
			httpapi.Encode(w, replyStatuses[e.Code], httpapi.ErrorBody{
				Error: e.Message, Code: string(e.Code), RequestID: httpapi.RequestID(r.Context()),
			})
		default:
			httpapi.WriteError(w, r, logger, err)
		}
	})
}
