package api

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/threadview"
)

// handleThreadList lists threads, newest updated first, filtered by status,
// type, platform and updated_since, a page at a time.
func handleThreadList(logger *slog.Logger, store threadview.Lister) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		query := threadview.Query{
			Status: thread.Status(q.Get("status")), Type: thread.Type(q.Get("type")),
			Platform: thread.Platform(q.Get("platform")), Cursor: q.Get("cursor"),
		}
		var err error
		if query.Limit, err = intParam(r, "limit"); err != nil {
			httpapi.WriteError(w, r, logger, err)
			return
		}
		if v := q.Get("updated_since"); v != "" {
			if query.UpdatedSince, err = time.Parse(time.RFC3339Nano, v); err != nil {
				httpapi.WriteError(w, r, logger, httpapi.Invalid("updated_since must be an RFC 3339 time"))
				return
			}
		}
		list, err := threadview.List(r.Context(), store, query)
		if err != nil {
			httpapi.WriteError(w, r, logger, err)
			return
		}
		httpapi.Encode(w, http.StatusOK, list)
	})
}

// handleThreadGet returns a thread with its platform attachments.
func handleThreadGet(logger *slog.Logger, store threadview.Reader) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := threadID(r)
		if err != nil {
			httpapi.WriteError(w, r, logger, err)
			return
		}
		detail, err := threadview.Get(r.Context(), store, id)
		if err != nil {
			httpapi.WriteError(w, r, logger, err)
			return
		}
		httpapi.Encode(w, http.StatusOK, detail)
	})
}

// createThreadRequest is POST /api/v1/threads' body.
type createThreadRequest struct {
	Goal string `json:"goal"`
	// Prompt is the first input; the goal when empty.
	Prompt string `json:"prompt"`
	// Agent names the persona and memory; the default agent when empty.
	Agent string `json:"agent"`
}

// handleThreadCreate starts an autonomous thread, its first turn enqueued
// in the same transaction.
func handleThreadCreate(logger *slog.Logger, in Ingester) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := httpapi.Decode[createThreadRequest](w, r)
		if err != nil {
			httpapi.WriteError(w, r, logger, err)
			return
		}
		if strings.TrimSpace(req.Goal) == "" {
			httpapi.WriteError(w, r, logger, thread.ErrEmptyGoal)
			return
		}
		if err := refuseNUL(req.Goal, req.Prompt, req.Agent); err != nil {
			httpapi.WriteError(w, r, logger, err)
			return
		}
		prompt := req.Prompt
		if prompt == "" {
			prompt = req.Goal
		}
		b := in.Builder().WithGoal(req.Goal).Autonomous().
			WithInitialPrompt(thread.Stitch{Content: prompt, Source: thread.PlatformAPI})
		if req.Agent != "" {
			b = b.WithAgent(req.Agent)
		}
		th, err := in.StartThread(r.Context(), b)
		if err != nil {
			httpapi.WriteError(w, r, logger, err)
			return
		}
		httpapi.Encode(w, http.StatusCreated, threadview.Of(th))
	})
}

// abortRequest is POST /api/v1/threads/{id}/abort's optional body.
type abortRequest struct {
	// Reason is said on the thread's surface; a default when empty.
	Reason string `json:"reason"`
}

// abortResponse says whether the abort changed anything, and the thread
// after it.
type abortResponse struct {
	Aborted bool              `json:"aborted"`
	Thread  threadview.Thread `json:"thread"`
}

// defaultAbortText confirms an abort on the thread's surface.
const defaultAbortText = "Stopped through weft's API."

// handleThreadAbort stops a thread. A finished thread is left as it is
// (aborted false).
func handleThreadAbort(logger *slog.Logger, in Ingester, store threadview.Reader) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := threadID(r)
		if err != nil {
			httpapi.WriteError(w, r, logger, err)
			return
		}
		// The body is optional: none, or an empty chunked one, is no reason.
		req, err := httpapi.Decode[abortRequest](w, r)
		if err == nil {
			err = refuseNUL(req.Reason)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			httpapi.WriteError(w, r, logger, err)
			return
		}
		text := strings.TrimSpace(req.Reason)
		if text == "" {
			text = defaultAbortText
		}
		aborted, err := in.Abort(r.Context(), id, text)
		if err != nil {
			httpapi.WriteError(w, r, logger, err)
			return
		}
		th, err := store.Thread(r.Context(), id)
		if err != nil {
			httpapi.WriteError(w, r, logger, err)
			return
		}
		httpapi.Encode(w, http.StatusOK, abortResponse{Aborted: aborted, Thread: threadview.Of(th)})
	})
}

// refuseNUL refuses text Postgres cannot store: JSON may carry a NUL
// character as \u0000.
func refuseNUL(texts ...string) error {
	for _, s := range texts {
		if strings.ContainsRune(s, 0) {
			return httpapi.Invalid("text must not contain NUL characters")
		}
	}
	return nil
}

// threadID reads the {id} path parameter as a weft thread id.
func threadID(r *http.Request) (uuid.UUID, error) {
	id, err := uuid.Parse(chi.URLParam(r, "id"))
	if err != nil {
		return uuid.Nil, httpapi.Invalid("thread id is not a UUID")
	}
	return id, nil
}

// intParam reads an optional non-negative integer query parameter.
func intParam(r *http.Request, name string) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, httpapi.Invalid("%s must be a non-negative integer", name)
	}
	return n, nil
}
