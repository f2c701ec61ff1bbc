package api

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/threadview"
)

// Replier adds a person's input to a thread and enqueues the turn that
// answers it. *ingest.Ingester implements it.
type Replier interface {
	AddInput(ctx context.Context, threadID uuid.UUID, s thread.Stitch) (*thread.Stitch, error)
}

// messageRequest is POST /api/v1/threads/{id}/messages's body.
type messageRequest struct {
	Text string `json:"text"`
}

type messageResponse struct {
	Stitch threadview.Stitch `json:"stitch"`
}

// maxMessage bounds a message's text.
const maxMessage = 32 << 10

// handleThreadMessage answers a thread that waits for a person: its
// question (ask_user), or a request for approval ("approve", "deny: why").
// A thread that waits for nothing is a 409.
func handleThreadMessage(logger *slog.Logger, in Replier, store Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := threadID(r)
		if err != nil {
			httpapi.WriteError(w, r, logger, err)
			return
		}
		req, err := httpapi.Decode[messageRequest](w, r)
		if err == nil {
			err = refuseNUL(req.Text)
		}
		text := strings.TrimSpace(req.Text)
		switch {
		case err != nil:
		case text == "":
			err = httpapi.Invalid("text is required")
		case len(text) > maxMessage:
			err = httpapi.Invalid("text is longer than %d bytes", maxMessage)
		}
		if err != nil {
			httpapi.WriteError(w, r, logger, err)
			return
		}
		th, err := store.Thread(r.Context(), id)
		if err == nil && (th.Status != thread.StatusWaiting || th.WaitingReason == thread.WaitingIdle) {
			err = &httpapi.Error{Code: httpapi.CodeConflict, Message: "the thread is not waiting for an answer (it is " + string(th.Status) + ")"}
		}
		if err != nil {
			httpapi.WriteError(w, r, logger, err)
			return
		}
		s, err := in.AddInput(r.Context(), id, thread.Stitch{Type: thread.StitchInitialPrompt, Content: text, Source: thread.PlatformAPI})
		if err != nil {
			httpapi.WriteError(w, r, logger, err)
			return
		}
		httpapi.Encode(w, http.StatusAccepted, messageResponse{Stitch: threadview.OfStitch(s)})
	})
}
