package dbtest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/thread"
)

// PendingApproval makes threadID wait for a person's approval of a call
// of mcp__files__write_file: its approval_request stitch and row, and the
// thread waiting with reason approval. It returns the request.
func PendingApproval(ctx context.Context, t testing.TB, store *db.Store, threadID uuid.UUID) *thread.Approval {
	t.Helper()
	th, err := store.Thread(ctx, threadID)
	require.NoError(t, err)
	if th.Status != thread.StatusRunning {
		_, err = store.Write(ctx, db.Write{ThreadID: threadID, Status: &thread.StatusChange{To: thread.StatusRunning}})
		require.NoError(t, err)
	}
	id, callID := thread.NewID(), "call-"+uuid.NewString()[:8]
	args := json.RawMessage(`{"path":"notes.txt","content":"hello"}`)
	_, err = store.Write(ctx, db.Write{ThreadID: threadID,
		Stitches: []thread.Stitch{{ID: id, Type: thread.StitchApprovalRequest, Content: "weft wants to call write_file",
			ToolName: "mcp__files__write_file", ToolInput: args, Metadata: thread.Meta{ApprovalFor: callID}.JSON()}},
		Approvals: []thread.Approval{{ID: id, ToolCallID: callID, ToolName: "mcp__files__write_file", Server: "files",
			Tool: "write_file", Arguments: args, ExpiresAt: time.Now().Add(time.Hour)}},
		Status: &thread.StatusChange{To: thread.StatusWaiting, WaitingReason: thread.WaitingApproval}})
	require.NoError(t, err)
	a, err := store.Approval(ctx, id)
	require.NoError(t, err)
	return a
}
