package api

import (
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/replies"
)

// handleReplies is get-thread-replies: {id} is a weft thread id or a
// platform's thread id, as replies.Service reads them; limit, cursor and
// order are query parameters. The service logged a failure's cause; the
// client gets the code and the safe message.
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
		if err != nil {
			httpapi.WriteError(w, r, logger, err)
			return
		}
		httpapi.Encode(w, http.StatusOK, resp)
	})
}

// handleSlackReplies is get-thread-replies for a Slack thread, named and
// answered as get-thread-replies.md says: {channel} and {ts} are its
// channelId and threadTs; teamId (the workspace, when weft cannot tell it
// from the channel), limit, cursor and order are query parameters.
func handleSlackReplies(logger *slog.Logger, svc RepliesGetter) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit, err := intParam(r, "limit")
		if err != nil {
			httpapi.WriteError(w, r, logger, err)
			return
		}
		q := r.URL.Query()
		resp, err := svc.GetSlack(r.Context(), replies.SlackRequest{
			TeamID: q.Get("teamId"), ChannelID: chi.URLParam(r, "channel"), ThreadTS: chi.URLParam(r, "ts"),
			Limit: limit, Cursor: q.Get("cursor"), Order: replies.Order(q.Get("order")),
		})
		if err != nil {
			httpapi.WriteError(w, r, logger, err)
			return
		}
		httpapi.Encode(w, http.StatusOK, resp)
	})
}
