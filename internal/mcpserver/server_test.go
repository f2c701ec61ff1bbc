package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/replies"
	"github.com/weft-dev/weft/internal/replies/repliestest"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/threadview"
)

func TestRepliesOverBothTransports(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, store := newServer(t)
	conv := repliestest.NewConversation(ctx, t, store, 250)
	srv := serveHTTP(t, s)

	transports := map[string]func(t *testing.T) *mcp.ClientSession{
		"InMemory":       func(t *testing.T) *mcp.ClientSession { return connectInMemory(t, s) },
		"StreamableHTTP": func(t *testing.T) *mcp.ClientSession { return connect(t, httpTransport(srv, token)) },
	}
	for name, open := range transports {
		for _, order := range []string{"oldest", "newest"} {
			t.Run(name+"/"+order, func(t *testing.T) {
				t.Parallel()
				cs := open(t)
				got := repliestest.Walk(t, 45, func(cursor string) *replies.Response {
					var raw json.RawMessage
					args := map[string]any{"thread_id": conv.Thread.ID.String(), "limit": 45, "order": order}
					if cursor != "" {
						args["cursor"] = cursor
					}
					res := call(t, cs, "get-thread-replies", args, &raw)
					require.False(t, res.IsError)
					repliestest.CheckShape(t, raw)
					var resp replies.Response
					require.NoError(t, json.Unmarshal(raw, &resp))
					return &resp
				})
				conv.Check(t, got, order == "newest")
			})
		}
	}
}

func TestHTTPNeedsTheToken(t *testing.T) {
	t.Parallel()
	s, _ := newServer(t)
	srv := serveHTTP(t, s)
	for _, tok := range []string{"", "wrong"} {
		client := mcp.NewClient(&mcp.Implementation{Name: "weft-test", Version: "1"}, nil)
		_, err := client.Connect(context.Background(), httpTransport(srv, tok), nil)
		require.Error(t, err, "token %q", tok)
		require.Contains(t, err.Error(), http.StatusText(http.StatusUnauthorized))
	}
}

func TestTools(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, store := newServer(t)
	cs := connectInMemory(t, s)
	att := dbtest.DiscordAttachment()
	discordThread := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Goal: new("why is the deploy stuck?"), Discord: att})
	other := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Goal: new("rotate the keys")})

	t.Run("ListsFourReadOnlyTools", func(t *testing.T) {
		t.Parallel()
		var names []string
		for tool, err := range cs.Tools(ctx, nil) {
			require.NoError(t, err)
			names = append(names, tool.Name)
			require.True(t, tool.Annotations.ReadOnlyHint, tool.Name)
		}
		require.ElementsMatch(t, []string{"get-thread-replies", "list-threads", "get-thread", "search-threads"}, names)
	})

	t.Run("ListThreads", func(t *testing.T) {
		t.Parallel()
		var list threadview.Page
		call(t, cs, "list-threads", map[string]any{"platform": "discord"}, &list)
		require.Len(t, list.Threads, 1)
		require.Equal(t, discordThread.ID, list.Threads[0].ID)
		call(t, cs, "list-threads", map[string]any{"limit": 1}, &list)
		require.Len(t, list.Threads, 1)
		require.True(t, list.HasMore)
		call(t, cs, "list-threads", map[string]any{"limit": 1, "cursor": list.NextCursor}, &list)
		require.False(t, list.HasMore)
	})

	t.Run("GetThread", func(t *testing.T) {
		t.Parallel()
		var detail threadview.Detail
		call(t, cs, "get-thread", map[string]any{"thread_id": discordThread.ID.String()}, &detail)
		require.Equal(t, "why is the deploy stuck?", detail.Goal)
		require.Equal(t, att.DiscordThreadID, detail.Discord.DiscordThreadID)
	})

	t.Run("SearchThreads", func(t *testing.T) {
		t.Parallel()
		var result struct {
			Results []struct {
				Thread threadview.Thread `json:"thread"`
				Match  struct {
					Text string `json:"text"`
				} `json:"match"`
			} `json:"results"`
		}
		call(t, cs, "search-threads", map[string]any{"query": "ROTATE"}, &result)
		require.Len(t, result.Results, 1)
		require.Equal(t, other.ID, result.Results[0].Thread.ID)
		require.Equal(t, "rotate the keys", result.Results[0].Match.Text)
	})

	tests := []struct {
		name string
		tool string
		args map[string]any
		code httpapi.Code
	}{
		{"RepliesUnknownThread", "get-thread-replies", map[string]any{"thread_id": thread.NewID().String()}, httpapi.CodeNotFound},
		{"RepliesBadOrder", "get-thread-replies", map[string]any{"thread_id": other.ID.String(), "order": "up"}, httpapi.CodeInvalidArgument},
		{"GetUnknownThread", "get-thread", map[string]any{"thread_id": thread.NewID().String()}, httpapi.CodeNotFound},
		{"GetNotAUUID", "get-thread", map[string]any{"thread_id": "general"}, httpapi.CodeInvalidArgument},
		{"ListBadStatus", "list-threads", map[string]any{"status": "asleep"}, httpapi.CodeInvalidArgument},
		{"ListBadTime", "list-threads", map[string]any{"updated_since": "yesterday"}, httpapi.CodeInvalidArgument},
		{"SearchEmpty", "search-threads", map[string]any{"query": " "}, httpapi.CodeInvalidArgument},
		{"RepliesLimitNotANumber", "get-thread-replies", map[string]any{"thread_id": other.ID.String(), "limit": "many"}, httpapi.CodeInvalidArgument},
		{"RepliesUnknownArgument", "get-thread-replies", map[string]any{"thread_id": other.ID.String(), "colour": "red"}, httpapi.CodeInvalidArgument},
		{"SearchLimitAboveMaximum", "search-threads", map[string]any{"query": "x", "limit": 101}, httpapi.CodeInvalidArgument},
		{"RepliesLimitAboveMaximum", "get-thread-replies", map[string]any{"thread_id": other.ID.String(), "limit": 201}, httpapi.CodeInvalidArgument},
		{"ListLimitAboveMaximum", "list-threads", map[string]any{"limit": 201}, httpapi.CodeInvalidArgument},
		{"ListCursorOfReplies", "list-threads", map[string]any{"cursor": threadview.EncodeCursor(threadview.CursorReplies, "", "1")}, httpapi.CodeInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.code, toolError(t, call(t, cs, tt.tool, tt.args, nil)))
		})
	}
}
