package replies_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/discord"
	"github.com/weft-dev/weft/internal/discord/discordtest"
	"github.com/weft-dev/weft/internal/fakekit"
	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/replies"
	"github.com/weft-dev/weft/internal/replies/repliestest"
	surfacediscord "github.com/weft-dev/weft/internal/surface/discord"
)

// discordThread is a Discord thread weft does not track, started from a
// message, on the fake.
type discordThread struct {
	fake     *discordtest.Server
	client   *discord.Client
	id       string
	starter  string
	messages []string // ids, oldest first
	edited   int      // index in messages
}

func newDiscordThread(t *testing.T, n int) *discordThread {
	t.Helper()
	ctx := context.Background()
	fake := discordtest.NewServer(t)
	client := newDiscordClient(t, fake)
	channel := fake.AddChannel(dbtest.Snowflake())
	bob := discordtest.User{ID: dbtest.Snowflake(), Name: "bob"}
	starter := fake.PostUserMessage(channel, bob, "what broke the build?")
	id, err := client.StartThread(ctx, channel, starter.ID, "build")
	require.NoError(t, err)
	d := &discordThread{fake: fake, client: client, id: id, starter: starter.ID, edited: n / 2}
	for i := range n {
		d.messages = append(d.messages, fake.PostUserMessage(id, bob, fmt.Sprintf("message %d", i)).ID)
	}
	fake.EditMessage(id, d.messages[d.edited], "message edited")
	return d
}

// newDiscordClient is a client of fake with its own rate limit state.
func newDiscordClient(t *testing.T, fake *discordtest.Server) *discord.Client {
	t.Helper()
	c, err := discord.New(discord.Config{Token: discordtest.Token, APIBaseURL: fake.URL(), Logger: logtest.New(t)})
	require.NoError(t, err)
	return c
}

func TestGetDiscordThread(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newDiscordThread(t, 120)
	svc, err := replies.New(replies.Config{Store: dbtest.NewStore(t), Discord: surfacediscord.NewReplies(d.client), Logger: logtest.New(t)})
	require.NoError(t, err)

	for _, order := range []replies.Order{replies.Oldest, replies.Newest} {
		t.Run(string(order), func(t *testing.T) {
			t.Parallel()
			got := repliestest.Walk(t, 50, func(cursor string) *replies.Response {
				resp, err := svc.Get(ctx, replies.Request{ThreadID: d.id, Order: order, Cursor: cursor})
				require.NoError(t, err)
				require.Equal(t, replies.SourceDiscord, resp.Source)
				require.Equal(t, d.starter, resp.Parent.ID)
				require.Equal(t, "what broke the build?", *resp.Parent.Text)
				raw, err := json.Marshal(resp)
				require.NoError(t, err)
				repliestest.CheckShape(t, raw)
				return resp
			})
			require.Len(t, got, len(d.messages))
			for i, m := range got {
				want := i
				if order == replies.Newest {
					want = len(d.messages) - 1 - i
				}
				require.Equal(t, d.messages[want], m.ID, "reply %d", i)
				require.Equal(t, want == d.edited, m.Edited)
				require.Equal(t, "bob", m.Author.Name)
				if want == d.edited {
					require.Equal(t, "message edited", *m.Text)
				}
			}
		})
	}
}

func TestGetDiscordFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	tests := []struct {
		name  string
		fault fakekit.Fault
		times int
		code  httpapi.Code // "" for success
		// GET /channels/{id} requests made: one per attempt, and one more
		// when the history is read (the client looks the thread up again).
		requests int
	}{
		{"ServerErrorThenSuccess", fakekit.Fail(http.StatusBadGateway), 2, "", 4},
		{"ServerErrorThreeTimes", fakekit.Fail(http.StatusInternalServerError), 3, httpapi.CodeUnavailable, 3},
		{"BadTokenIsNotRetried", fakekit.Fault{Status: http.StatusUnauthorized, Message: "401: Unauthorized"}, 3, httpapi.CodeAuthentication, 1},
		{"ForbiddenIsNotRetried", fakekit.Fault{Status: http.StatusForbidden, Code: "50001", Message: "Missing Access"}, 3, httpapi.CodeAuthorization, 1},
		{"RateLimitAtOnce", fakekit.RateLimited(time.Hour), 3, httpapi.CodeRateLimit, 1},
		{"UnknownChannel", fakekit.Fault{Status: http.StatusNotFound, Code: "10003", Message: "Unknown Channel"}, 3, httpapi.CodeNotFound, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := newDiscordThread(t, 3)
			path := "/channels/" + d.id
			d.fake.Fail("GET "+path, tt.times, tt.fault)
			reg := prometheus.NewRegistry()
			svc, err := replies.New(replies.Config{Store: dbtest.NewStore(t), Discord: surfacediscord.NewReplies(d.client), Registry: reg,
				Logger: logtest.New(t), RetryBase: time.Nanosecond})
			require.NoError(t, err)

			resp, err := svc.Get(ctx, replies.Request{ThreadID: d.id})
			require.Equal(t, tt.requests, countRequests(d.fake, path))
			require.Equal(t, 1.0, metricValue(t, reg, "weft_thread_replies_requests_total", "", ""))
			if tt.code == "" {
				require.NoError(t, err)
				require.Len(t, resp.Replies, 3)
				return
			}
			var e *httpapi.Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, tt.code, e.Code)
			require.Equal(t, 1.0, metricValue(t, reg, "weft_thread_replies_failures_total", "code", string(tt.code)))
			rateLimited := 0.0
			if tt.code == httpapi.CodeRateLimit {
				rateLimited = 1
				require.Positive(t, e.RetryAfter)
			}
			require.Equal(t, rateLimited, metricValue(t, reg, "weft_thread_replies_rate_limited_total", "", ""))
			require.Equal(t, 1.0, metricValue(t, reg, "weft_thread_replies_duration_seconds", "outcome", "failure"))
		})
	}

	t.Run("NotAThread", func(t *testing.T) {
		t.Parallel()
		fake := discordtest.NewServer(t)
		channel := fake.AddChannel(dbtest.Snowflake())
		svc, err := replies.New(replies.Config{Store: dbtest.NewStore(t), Discord: surfacediscord.NewReplies(newDiscordClient(t, fake)), Logger: logtest.New(t)})
		require.NoError(t, err)
		_, err = svc.Get(ctx, replies.Request{ThreadID: channel})
		var e *httpapi.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, httpapi.CodeInvalidArgument, e.Code)
	})
}

func countRequests(fake *discordtest.Server, path string) int {
	n := 0
	for _, r := range fake.Requests() {
		if r.Method == http.MethodGet && r.Path == path {
			n++
		}
	}
	return n
}
