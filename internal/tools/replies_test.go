package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/replies"
	"github.com/weft-dev/weft/internal/replies/repliestest"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

func TestRepliesTool(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	conv := repliestest.NewConversation(ctx, t, store, 250)
	svc, err := replies.New(replies.Config{Store: store, Logger: logtest.New(t)})
	require.NoError(t, err)
	tool := tools.Replies(svc, &tools.Reach{Store: store})
	reg, err := tools.NewRegistry(tool)
	require.NoError(t, err)
	_, ok := reg.Get("get_thread_replies")
	require.True(t, ok)

	call := func(t *testing.T, args map[string]any) (*replies.Response, error) {
		raw, err := json.Marshal(args)
		require.NoError(t, err)
		out, err := tool.Handler(ctx, tools.Call{ThreadID: conv.Thread.ID, Arguments: raw})
		if err != nil {
			return nil, err
		}
		var resp replies.Response
		require.NoError(t, json.Unmarshal([]byte(out), &resp))
		return &resp, nil
	}

	for _, order := range []string{"oldest", "newest"} {
		t.Run("PagesThisThread/"+order, func(t *testing.T) {
			t.Parallel()
			got := repliestest.Walk(t, 40, func(cursor string) *replies.Response {
				resp, err := call(t, map[string]any{"limit": 40, "order": order, "cursor": cursor})
				require.NoError(t, err)
				return resp
			})
			conv.Check(t, got, order == "newest")
		})
	}

	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"UnknownThread", map[string]any{"thread_id": thread.NewID().String()}, "NotFound: no such thread"},
		{"BadOrder", map[string]any{"order": "sideways"}, "InvalidArgument: order must be oldest or newest"},
		{"BadCursor", map[string]any{"cursor": "%%%"}, "InvalidArgument: cursor is not one this API returned"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := call(t, tt.args)
			require.EqualError(t, err, tt.want)
		})
	}

	t.Run("AnotherServersThread", func(t *testing.T) {
		t.Parallel()
		other := repliestest.NewConversation(ctx, t, store, 3) // in a server of its own
		for _, id := range []string{other.Thread.ID.String(), other.DiscordThreadID} {
			_, err := call(t, map[string]any{"thread_id": id})
			require.EqualError(t, err, "AuthorizationError: "+tools.ErrOutOfReach.Error())
		}
	})

	t.Run("ByDiscordThreadID", func(t *testing.T) {
		t.Parallel()
		resp, err := call(t, map[string]any{"thread_id": conv.DiscordThreadID, "limit": 3})
		require.NoError(t, err)
		require.Equal(t, conv.DiscordThreadID, resp.ThreadID)
		require.Equal(t, conv.Replies[:3], texts(resp.Replies))
	})
}

func texts(ms []replies.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = fmt.Sprint(*m.Text)
	}
	return out
}

// TestRepliesToolSchema pins what the model is told of get_thread_replies'
// arguments: none required, each described, order an enum, limit bounded.
func TestRepliesToolSchema(t *testing.T) {
	t.Parallel()
	tool := tools.Replies(nil, nil)
	require.JSONEq(t, `{
		"type": "object",
		"properties": {
			"thread_id": {"type": "string", "description": "weft thread id (UUID) or Discord thread id; default: this thread"},
			"limit": {"type": "integer", "description": "replies per page (default 50)", "minimum": 1, "maximum": 200},
			"cursor": {"type": "string", "description": "next_cursor of the previous page"},
			"order": {"type": "string", "description": "default oldest", "enum": ["oldest", "newest"]}
		},
		"additionalProperties": false
	}`, string(tool.Schema))
}
