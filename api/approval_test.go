package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/thread"
)

type approvalJSON struct {
	ID         uuid.UUID `json:"id"`
	Status     string    `json:"status"`
	Server     string    `json:"server"`
	Tool       string    `json:"tool"`
	DecidedVia string    `json:"decided_via"`
	Reason     string    `json:"reason"`
}

// The first decision through the API is stored with its stitch and the
// turn that acts on it; a later one is a 409 saying who decided; bad
// input changes nothing.
func TestApprovalsAPI(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	th := dbtest.Thread(ctx, t, b.store, nil)
	a := dbtest.PendingApproval(ctx, t, b.store, th.ID)
	other := dbtest.Thread(ctx, t, b.store, nil)
	base := "/api/v1/threads/" + th.ID.String() + "/approvals"

	var list struct {
		Approvals []approvalJSON `json:"approvals"`
	}
	require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, base, "", &list))
	require.Len(t, list.Approvals, 1)
	require.Equal(t, approvalJSON{ID: a.ID, Status: "pending", Server: "files", Tool: "write_file"}, list.Approvals[0])
	require.Equal(t, http.StatusNotFound, b.do(t, http.MethodGet, "/api/v1/threads/"+uuid.NewString()+"/approvals", "", nil))

	var apiErr httpapi.ErrorBody
	for _, tc := range []struct {
		name, path, body string
		status           int
	}{
		{"BadDecision", base + "/" + a.ID.String(), `{"decision":"maybe"}`, http.StatusBadRequest},
		{"NoDecision", base + "/" + a.ID.String(), `{}`, http.StatusBadRequest},
		{"Truncated", base + "/" + a.ID.String(), `{"decision":"appr`, http.StatusBadRequest},
		{"Oversized", base + "/" + a.ID.String(), `{"decision":"deny","reason":"` + strings.Repeat("x", 2001) + `"}`, http.StatusBadRequest},
		{"BadID", base + "/nope", `{"decision":"approve"}`, http.StatusBadRequest},
		{"Unknown", base + "/" + uuid.NewString(), `{"decision":"approve"}`, http.StatusNotFound},
		{"OtherThread", "/api/v1/threads/" + other.ID.String() + "/approvals/" + a.ID.String(), `{"decision":"approve"}`, http.StatusNotFound},
	} {
		require.Equal(t, tc.status, b.do(t, http.MethodPost, tc.path, tc.body, &apiErr), tc.name)
	}
	got, err := b.store.Approval(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, thread.ApprovalPending, got.Status, "refused requests change nothing")

	var decided struct {
		Approval approvalJSON `json:"approval"`
	}
	path := base + "/" + a.ID.String()
	require.Equal(t, http.StatusOK, b.do(t, http.MethodPost, path, `{"decision":"approve","reason":"looks right"}`, &decided))
	require.Equal(t, "approved", decided.Approval.Status)
	require.Equal(t, "api", decided.Approval.DecidedVia)
	require.Equal(t, "looks right", decided.Approval.Reason)

	require.Equal(t, http.StatusConflict, b.do(t, http.MethodPost, path, `{"decision":"deny"}`, &apiErr))
	require.Contains(t, apiErr.Error, "already approved by the API")

	chain, err := b.store.Stitches(ctx, th.ID, db.StitchPage{})
	require.NoError(t, err)
	var decisions []thread.Stitch
	for _, s := range chain {
		if s.Type == thread.StitchApprovalDecision {
			decisions = append(decisions, s)
		}
	}
	require.Len(t, decisions, 1, "the second decision wrote nothing")
	require.Equal(t, thread.Approve, decisions[0].Meta().Decision)
	var turns int
	require.NoError(t, b.store.Pool().QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'weft_turn' AND args->>'thread_id' = $1`,
		th.ID.String()).Scan(&turns))
	require.Equal(t, 1, turns, "one turn acts on the decision")
}

// A thread that waits for a person takes an answer through the API; one
// that waits for nothing refuses it.
func TestThreadMessagesAPI(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	waiting := dbtest.Thread(ctx, t, b.store, nil)
	dbtest.PendingApproval(ctx, t, b.store, waiting.ID)
	pending := dbtest.Thread(ctx, t, b.store, nil)
	path := func(id uuid.UUID) string { return "/api/v1/threads/" + id.String() + "/messages" }

	var apiErr httpapi.ErrorBody
	require.Equal(t, http.StatusConflict, b.do(t, http.MethodPost, path(pending.ID), `{"text":"approve"}`, &apiErr))
	require.Equal(t, http.StatusBadRequest, b.do(t, http.MethodPost, path(waiting.ID), `{"text":"  "}`, &apiErr))
	require.Equal(t, http.StatusBadRequest, b.do(t, http.MethodPost, path(waiting.ID), `{"text":"appr`, &apiErr))
	require.Equal(t, http.StatusNotFound, b.do(t, http.MethodPost, path(uuid.New()), `{"text":"approve"}`, &apiErr))
	before, err := b.store.Thread(ctx, waiting.ID)
	require.NoError(t, err)

	var added struct {
		Stitch struct {
			Type    string `json:"type"`
			Content string `json:"content"`
		} `json:"stitch"`
	}
	require.Equal(t, http.StatusAccepted, b.do(t, http.MethodPost, path(waiting.ID), `{"text":"deny: wrong file"}`, &added))
	require.Equal(t, "initial_prompt", added.Stitch.Type)
	require.Equal(t, "deny: wrong file", added.Stitch.Content)
	after, err := b.store.Thread(ctx, waiting.ID)
	require.NoError(t, err)
	require.Equal(t, before.StitchCount+1, after.StitchCount, "the refused requests wrote nothing")
	var turns int
	require.NoError(t, b.store.Pool().QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'weft_turn' AND args->>'thread_id' = $1`,
		waiting.ID.String()).Scan(&turns))
	require.Equal(t, 1, turns)
}
