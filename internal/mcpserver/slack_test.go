package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/fakekit"
	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/mcpserver"
	"github.com/weft-dev/weft/internal/replies"
	"github.com/weft-dev/weft/internal/retry"
	"github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/slack/slacktest"
	surfaceslack "github.com/weft-dev/weft/internal/surface/slack"
	"github.com/weft-dev/weft/internal/thread"
)

// newSlackServer is the MCP server with Slack read through weft's Slack
// client pointed at the fake.
func newSlackServer(t *testing.T, fake *slacktest.Server) *mcpserver.Deps {
	t.Helper()
	store := dbtest.NewStore(t)
	ws, err := slack.NewWorkspaces(slack.Config{Token: slacktest.BotToken, APIURL: fake.APIURL(), Logger: logtest.New(t),
		Backoff: retry.Backoff{Base: time.Millisecond}}, nil)
	require.NoError(t, err)
	svc, err := replies.New(replies.Config{Store: store, Slack: surfaceslack.NewReplies(ws, store), Registry: prometheus.NewRegistry(),
		Logger: logtest.New(t)})
	require.NoError(t, err)
	return &mcpserver.Deps{Store: store, Replies: svc, Logger: logtest.New(t)}
}

// TestSlackReplies is get-thread-replies over MCP for a Slack thread named
// as get-thread-replies.md names it: its shape, its pages and its errors.
func TestSlackReplies(t *testing.T) {
	t.Parallel()
	const channel = "C0123ABCD"
	fake := slacktest.NewServer(t)
	fake.AddChannel(channel, "channel")
	alice, bob := slacktest.User{ID: "U1", Name: "alice"}, slacktest.User{ID: "U2", Name: "bob"}
	other := slacktest.User{ID: "U3", Name: "ci", BotID: "B1", AppID: "A1"}
	parentTS := fake.Post(alice, channel, "", "deploy is stuck").TS
	var ts []string
	for i := 1; i <= 6; i++ {
		u := bob
		if i == 4 {
			u = other
		}
		ts = append(ts, fake.Post(u, channel, parentTS, fmt.Sprintf("reply %d", i)).TS)
	}
	_, ok := fake.Edit(channel, ts[1], "reply 2")
	require.True(t, ok)
	_, ok = fake.Delete(channel, ts[5])
	require.True(t, ok)
	goneTS := fake.Post(alice, channel, "", "wrong channel, sorry").TS
	fake.Post(bob, channel, goneTS, "still here")
	fake.Delete(channel, goneTS)
	f := fakeCalls{fake}
	cs := connectInMemory(t, mcpserver.New(*newSlackServer(t, fake)))
	args := func(kv ...any) map[string]any {
		m := map[string]any{"channelId": channel, "threadTs": parentTS}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}

	t.Run("Shape", func(t *testing.T) {
		res := call(t, cs, "get-thread-replies", args(), nil)
		require.False(t, res.IsError)
		raw, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		require.JSONEq(t, fmt.Sprintf(`{
			"parent": {"ts": %q, "user": "U1", "text": "deploy is stuck", "edited": false, "deleted": false, "subtype": null},
			"replies": [
				{"ts": %q, "user": "U2", "text": "reply 1", "edited": false, "deleted": false, "subtype": null},
				{"ts": %q, "user": "U2", "text": "reply 2", "edited": true, "deleted": false, "subtype": null},
				{"ts": %q, "user": "U2", "text": "reply 3", "edited": false, "deleted": false, "subtype": null},
				{"ts": %q, "user": "U3", "text": "reply 4", "edited": false, "deleted": false, "subtype": null},
				{"ts": %q, "user": "U2", "text": "reply 5", "edited": false, "deleted": false, "subtype": null}
			],
			"nextCursor": null,
			"hasMore": false
		}`, parentTS, ts[0], ts[1], ts[2], ts[3], ts[4]), string(raw))
	})

	t.Run("DeletedParent", func(t *testing.T) {
		var got replies.SlackResponse
		call(t, cs, "get-thread-replies", map[string]any{"channelId": channel, "threadTs": goneTS}, &got)
		require.True(t, got.Parent.Deleted)
		require.Nil(t, got.Parent.Text)
		require.Len(t, got.Replies, 1)
	})

	pages := func(t *testing.T, order string) []string {
		var seen []string
		cursor := ""
		for range 10 {
			a := args("limit", 2, "order", order)
			if cursor != "" {
				a["cursor"] = cursor
			}
			var got replies.SlackResponse
			res := call(t, cs, "get-thread-replies", a, &got)
			require.False(t, res.IsError, "%v", res.Content)
			require.Equal(t, parentTS, got.Parent.TS, "every page carries the parent")
			for _, m := range got.Replies {
				seen = append(seen, *m.Text)
			}
			if !got.HasMore {
				require.Nil(t, got.NextCursor)
				return seen
			}
			require.NotNil(t, got.NextCursor)
			cursor = *got.NextCursor
		}
		t.Fatal("pages never ended")
		return nil
	}
	t.Run("PagesOldest", func(t *testing.T) {
		require.Equal(t, []string{"reply 1", "reply 2", "reply 3", "reply 4", "reply 5"}, pages(t, "oldest"))
	})
	t.Run("PagesNewest", func(t *testing.T) {
		require.Equal(t, []string{"reply 5", "reply 4", "reply 3", "reply 2", "reply 1"}, pages(t, "newest"))
	})

	errs := []struct {
		name  string
		fault *fakekit.Fault
		args  map[string]any
		code  httpapi.Code
		calls int
	}{
		{"UnknownThread", nil, args("threadTs", "1700000000.999999"), httpapi.CodeNotFound, 1},
		{"UnknownChannel", nil, args("channelId", "C9999"), httpapi.CodeNotFound, 1},
		{"InvalidAuthNotRetried", fault(fakekit.ErrorCode("invalid_auth")), args(), httpapi.CodeAuthentication, 1},
		{"TokenRevokedNotRetried", fault(fakekit.ErrorCode("token_revoked")), args(), httpapi.CodeAuthentication, 1},
		{"Unauthorized", fault(fakekit.Fail(401)), args(), httpapi.CodeAuthentication, 1},
		{"NotInChannel", fault(fakekit.ErrorCode("not_in_channel")), args(), httpapi.CodeAuthorization, 1},
		{"MissingScope", fault(fakekit.ErrorCode("missing_scope")), args(), httpapi.CodeAuthorization, 1},
		{"RateLimitAtOnce", fault(fakekit.RateLimited(30 * time.Second)), args(), httpapi.CodeRateLimit, 1},
		{"RateLimitWithoutRetryAfter", fault(fakekit.Fail(429)), args(), httpapi.CodeRateLimit, 1},
		{"ServerErrorsRetriedThrice", fault(fakekit.Fail(503)), args(), httpapi.CodeUnavailable, 4},
		{"InternalErrorRetriedThrice", fault(fakekit.ErrorCode("internal_error")), args(), httpapi.CodeUnavailable, 4},
		{"BadChannelID", nil, args("channelId", "general"), httpapi.CodeInvalidArgument, 0},
		{"BadTS", nil, args("threadTs", "yesterday"), httpapi.CodeInvalidArgument, 0},
		{"BothForms", nil, args("thread_id", "0192f1d2-0000-7000-8000-000000000001"), httpapi.CodeInvalidArgument, 0},
		{"TSWithoutChannel", nil, map[string]any{"threadTs": parentTS}, httpapi.CodeInvalidArgument, 0},
		{"NeitherForm", nil, map[string]any{}, httpapi.CodeInvalidArgument, 0},
		{"CursorOfAnotherThread", nil, args("cursor", "eyJrIjoicmVwbGllcyIsInAiOiIzIn0"), httpapi.CodeInvalidArgument, 0},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			before := f.calls()
			if tt.fault != nil {
				fake.Fail("conversations.replies", 0, *tt.fault)
				defer fake.Heal("conversations.replies")
			}
			require.Equal(t, tt.code, toolError(t, call(t, cs, "get-thread-replies", tt.args, nil)))
			require.Equal(t, tt.calls, f.calls()-before)
		})
	}

	t.Run("TransientFailureRecovers", func(t *testing.T) {
		before := f.calls()
		fake.Fail("conversations.replies", 2, fakekit.Fail(502))
		var got replies.SlackResponse
		res := call(t, cs, "get-thread-replies", args(), &got)
		require.False(t, res.IsError)
		require.Len(t, got.Replies, 5)
		require.Equal(t, 3, f.calls()-before)
	})
}

func fault(f fakekit.Fault) *fakekit.Fault { return &f }

// fakeCalls counts the fake's conversations.replies calls.
type fakeCalls struct{ s *slacktest.Server }

func (f fakeCalls) calls() int { return len(f.s.Calls("conversations.replies")) }

// TestSlackRepliesRequester: get-thread-replies.md's requester. weft's
// token reads the thread; a requester who is not a member of the channel
// is refused with AuthorizationError (not NotFound), before the thread is
// read.
func TestSlackRepliesRequester(t *testing.T) {
	t.Parallel()
	const channel = "C0PRIVATE"
	fake := slacktest.NewServer(t)
	fake.AddChannel(channel, "group")
	alice := slacktest.User{ID: "U0ALICE", Name: "alice"}
	parentTS := fake.Post(alice, channel, "", "salaries for 2027").TS
	fake.AddMember(channel, "U0BOB")
	cs := connectInMemory(t, mcpserver.New(*newSlackServer(t, fake)))
	ask := func(requester map[string]any) *mcp.CallToolResult {
		return call(t, cs, "get-thread-replies", map[string]any{"channelId": channel, "threadTs": parentTS, "requester": requester}, nil)
	}

	for _, member := range []string{"U0ALICE", "U0BOB"} {
		res := ask(map[string]any{"userId": member})
		require.False(t, res.IsError, member)
	}
	reads := len(fake.Calls("conversations.replies"))
	require.Equal(t, httpapi.CodeAuthorization, toolError(t, ask(map[string]any{"userId": "U0MALLORY"})))
	require.Len(t, fake.Calls("conversations.replies"), reads, "the thread is not read for a requester refused")
	require.Equal(t, httpapi.CodeInvalidArgument, toolError(t, ask(map[string]any{"userId": "mallory"})))
	require.Equal(t, httpapi.CodeInvalidArgument, toolError(t, ask(map[string]any{"userId": "U0BOB", "token": "xoxp-1"})), "no person's token")
	require.Equal(t, httpapi.CodeInvalidArgument, toolError(t, call(t, cs, "get-thread-replies",
		map[string]any{"thread_id": "0192f1d2-0000-7000-8000-000000000001", "requester": map[string]any{"userId": "U0BOB"}}, nil)))
}

// TestSlackRepliesDeletedLive: Slack no longer returns a deleted reply;
// weft, which recorded its message_deleted, shows it in its place,
// deleted and without text, on the page it belongs to, in both orders.
func TestSlackRepliesDeletedLive(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	const channel = "C0DELETE"
	fake := slacktest.NewServer(t)
	fake.AddChannel(channel, "channel")
	alice, bob := slacktest.User{ID: "U0ALICE", Name: "alice"}, slacktest.User{ID: "U0BOB", Name: "bob"}
	parent := fake.Post(alice, channel, "", "<@"+slacktest.BotUserID+"> deploy is stuck")
	deps := newSlackServer(t, fake)
	store := deps.Store.(*db.Store)
	th, err := thread.NewBuilder(nil).WithGoal("deploy is stuck").
		InteractiveSlack(&thread.SlackAttachment{TeamID: slacktest.TeamID, ChannelID: channel, ThreadTS: parent.TS, ChannelType: "channel", CreatedBy: alice.ID}).
		WithInitialPrompt(thread.Stitch{Content: "deploy is stuck", Source: thread.PlatformSlack,
			ExternalID: thread.SlackMessageID(slacktest.TeamID, channel, parent.TS), Author: &thread.Author{ID: alice.ID, Name: "alice"}}).
		Build(ctx, store)
	require.NoError(t, err)
	var ts []string
	for i := 1; i <= 3; i++ {
		m := fake.Post(bob, channel, parent.TS, fmt.Sprintf("reply %d", i))
		ts = append(ts, m.TS)
		_, err := store.AppendStitch(ctx, thread.Stitch{ThreadID: th.ID, Type: thread.StitchSlackMessage, Source: thread.PlatformSlack,
			Content: m.Text, ExternalID: thread.SlackMessageID(slacktest.TeamID, channel, m.TS), Author: &thread.Author{ID: bob.ID, Name: "bob"}})
		require.NoError(t, err)
	}
	_, ok := fake.Delete(channel, ts[1])
	require.True(t, ok)
	_, err = store.EditStitch(ctx, thread.PlatformSlack, thread.SlackMessageID(slacktest.TeamID, channel, ts[1]), db.StitchEdit{DeletedAt: time.Now()})
	require.NoError(t, err)
	cs := connectInMemory(t, mcpserver.New(*deps))

	walk := func(order string) []replies.SlackMessage {
		var all []replies.SlackMessage
		cursor := ""
		for range 10 {
			a := map[string]any{"channelId": channel, "threadTs": parent.TS, "limit": 1, "order": order}
			if cursor != "" {
				a["cursor"] = cursor
			}
			var got replies.SlackResponse
			res := call(t, cs, "get-thread-replies", a, &got)
			require.False(t, res.IsError)
			all = append(all, got.Replies...)
			if !got.HasMore {
				return all
			}
			cursor = *got.NextCursor
		}
		t.Fatal("never reached the last page")
		return nil
	}
	text := func(s string) *string { return &s }
	want := []replies.SlackMessage{
		{TS: ts[0], User: bob.ID, Text: text("reply 1")},
		{TS: ts[1], User: bob.ID, Deleted: true},
		{TS: ts[2], User: bob.ID, Text: text("reply 3")},
	}
	require.Equal(t, want, walk("oldest"))
	require.Equal(t, []replies.SlackMessage{want[2], want[1], want[0]}, walk("newest"))
}
