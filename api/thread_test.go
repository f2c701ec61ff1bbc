package api_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/threadview"
)

type threadList struct {
	Threads    []threadview.Thread `json:"threads"`
	NextCursor string              `json:"next_cursor"`
	HasMore    bool                `json:"has_more"`
}

func TestThreadsAPI(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("CreateGetAbort", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		var created threadview.Thread
		require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/threads",
			`{"goal":"summarize the incident","prompt":"read the postmortem first"}`, &created))
		require.Equal(t, thread.TypeAutonomous, created.Type)
		require.Equal(t, thread.StatusPending, created.Status)

		var got threadview.Detail
		require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, "/api/v1/threads/"+created.ID.String(), "", &got))
		require.Equal(t, "summarize the incident", got.Goal)
		require.Nil(t, got.Discord)

		prompt, err := b.store.ThreadParent(ctx, created.ID)
		require.NoError(t, err)
		require.Equal(t, "read the postmortem first", prompt.Content)
		require.Equal(t, thread.PlatformAPI, prompt.Source)

		var aborted struct {
			Aborted bool              `json:"aborted"`
			Thread  threadview.Thread `json:"thread"`
		}
		path := "/api/v1/threads/" + created.ID.String() + "/abort"
		require.Equal(t, http.StatusOK, b.do(t, http.MethodPost, path, `{"reason":"not needed"}`, &aborted))
		require.True(t, aborted.Aborted)
		require.Equal(t, thread.StatusAborted, aborted.Thread.Status)
		// Aborting again changes nothing; an empty body is fine.
		require.Equal(t, http.StatusOK, b.do(t, http.MethodPost, path, "", &aborted))
		require.False(t, aborted.Aborted)
		// So is an empty body of unknown length (chunked).
		req := httptest.NewRequest(http.MethodPost, path, io.MultiReader())
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		b.handler.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	})

	t.Run("GetWithAttachments", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		att, lin := dbtest.DiscordAttachment(), dbtest.LinearAttachment()
		th := dbtest.Thread(ctx, t, b.store, &dbtest.ThreadOpts{Discord: att, Linear: lin})
		var got threadview.Detail
		require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, "/api/v1/threads/"+th.ID.String(), "", &got))
		require.Equal(t, thread.TypeInteractive, got.Type)
		require.Equal(t, att.DiscordThreadID, got.Discord.DiscordThreadID)
		require.Equal(t, lin.SessionID, got.Linear.SessionID)
		require.Equal(t, thread.SessionPending, got.Linear.SessionStatus)
	})

	t.Run("ListSlack", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		slack := dbtest.Thread(ctx, t, b.store, &dbtest.ThreadOpts{Slack: slackAttachment()})
		dbtest.Thread(ctx, t, b.store, &dbtest.ThreadOpts{Discord: dbtest.DiscordAttachment()})
		var list threadList
		require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, "/api/v1/threads?platform=slack", "", &list))
		require.Len(t, list.Threads, 1)
		require.Equal(t, slack.ID, list.Threads[0].ID)
	})

	t.Run("ListGitHub", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		gh, err := thread.NewBuilder(nil).WithGoal("acme/api#3").InteractiveGitHub(&thread.GitHubAttachment{InstallationID: 1, AccountID: 2,
			RepoID: 3, Owner: "acme", Repo: "api", Number: 3, CreatedBy: "bob"}).Build(ctx, b.store)
		require.NoError(t, err)
		dbtest.Thread(ctx, t, b.store, &dbtest.ThreadOpts{Slack: slackAttachment()})
		var list threadList
		require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, "/api/v1/threads?platform=github", "", &list))
		require.Len(t, list.Threads, 1)
		require.Equal(t, gh.ID, list.Threads[0].ID)
		var got threadview.Detail
		require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, "/api/v1/threads/"+gh.ID.String(), "", &got))
		require.Equal(t, &threadview.GitHub{InstallationID: 1, Owner: "acme", Repo: "api", Number: 3, Active: true}, got.GitHub)
	})

	t.Run("GetWithSlack", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		att := slackAttachment()
		th := dbtest.Thread(ctx, t, b.store, &dbtest.ThreadOpts{Slack: att})
		var got struct {
			Slack map[string]any `json:"slack"`
		}
		require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, "/api/v1/threads/"+th.ID.String(), "", &got))
		require.Equal(t, map[string]any{"team_id": att.TeamID, "channel_id": att.ChannelID, "thread_ts": att.ThreadTS,
			"channel_type": att.ChannelType, "active": true}, got.Slack)
	})

	t.Run("Errors", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		tests := []struct {
			method, path, body string
			status             int
			code               httpapi.Code
		}{
			{http.MethodGet, "/api/v1/threads/" + thread.NewID().String(), "", http.StatusNotFound, httpapi.CodeNotFound},
			{http.MethodGet, "/api/v1/threads/nope", "", http.StatusBadRequest, httpapi.CodeInvalidArgument},
			{http.MethodGet, "/api/v1/threads/" + thread.NewID().String() + "/stitches", "", http.StatusNotFound, httpapi.CodeNotFound},
			{http.MethodPost, "/api/v1/threads/" + thread.NewID().String() + "/abort", "", http.StatusNotFound, httpapi.CodeNotFound},
			{http.MethodPost, "/api/v1/threads", `{"goal":"  "}`, http.StatusBadRequest, httpapi.CodeInvalidArgument},
			{http.MethodPost, "/api/v1/threads", `{"goal":"x","colour":"red"}`, http.StatusBadRequest, httpapi.CodeInvalidArgument},
			{http.MethodPost, "/api/v1/threads", `{"goal":"a\u0000b"}`, http.StatusBadRequest, httpapi.CodeInvalidArgument},
			{http.MethodPost, "/api/v1/threads", `{"goal":"x","agent":"\u0000"}`, http.StatusBadRequest, httpapi.CodeInvalidArgument},
			{http.MethodPost, "/api/v1/threads", `{"goal":"x"} and more`, http.StatusBadRequest, httpapi.CodeInvalidArgument},
			{http.MethodPost, "/api/v1/threads", `{"goal":"x"}{"goal":"y"}`, http.StatusBadRequest, httpapi.CodeInvalidArgument},
			{http.MethodPost, "/api/v1/threads", `{"goal":"x"`, http.StatusBadRequest, httpapi.CodeInvalidArgument},
			{http.MethodPost, "/api/v1/threads/" + thread.NewID().String() + "/abort", `{"reason":"\u0000"}`, http.StatusBadRequest, httpapi.CodeInvalidArgument},
			{http.MethodGet, "/api/v1/threads?status=sleeping", "", http.StatusBadRequest, httpapi.CodeInvalidArgument},
			{http.MethodGet, "/api/v1/threads?platform=api", "", http.StatusBadRequest, httpapi.CodeInvalidArgument},
			{http.MethodGet, "/api/v1/threads?updated_since=yesterday", "", http.StatusBadRequest, httpapi.CodeInvalidArgument},
			{http.MethodGet, "/api/v1/threads?limit=-1", "", http.StatusBadRequest, httpapi.CodeInvalidArgument},
			{http.MethodGet, "/api/v1/threads?cursor=zzz", "", http.StatusBadRequest, httpapi.CodeInvalidArgument},
			{http.MethodGet, "/api/v1/threads?limit=201", "", http.StatusBadRequest, httpapi.CodeInvalidArgument},
			{http.MethodGet, "/api/v1/threads/" + thread.NewID().String() + "/stitches?limit=201", "", http.StatusBadRequest, httpapi.CodeInvalidArgument},
			{http.MethodPost, "/api/v1/threads", `{"goal":7}`, http.StatusBadRequest, httpapi.CodeInvalidArgument},
			{http.MethodPost, "/api/v1/threads", `[]`, http.StatusBadRequest, httpapi.CodeInvalidArgument},
			{http.MethodGet, "/api/v1/nope", "", http.StatusNotFound, httpapi.CodeNotFound},
			{http.MethodDelete, "/api/v1/threads", "", http.StatusMethodNotAllowed, httpapi.CodeMethodNotAllowed},
			{http.MethodGet, "/api/v1/threads/" + thread.NewID().String() + "/abort", "", http.StatusMethodNotAllowed, httpapi.CodeMethodNotAllowed},
			{http.MethodGet, "/mcp", "", http.StatusMethodNotAllowed, httpapi.CodeMethodNotAllowed},
			{http.MethodDelete, "/mcp", "", http.StatusMethodNotAllowed, httpapi.CodeMethodNotAllowed},
		}
		for _, tt := range tests {
			var body httpapi.ErrorBody
			require.Equal(t, tt.status, b.do(t, tt.method, tt.path, tt.body, &body), "%s %s", tt.method, tt.path)
			require.Equal(t, tt.code, body.Code, "%s %s", tt.method, tt.path)
			require.NotEmpty(t, body.RequestID)
			// Messages speak JSON and the API, not Go.
			for _, internal := range []string{"Go ", "struct", "json:", "api.", "thread."} {
				require.NotContains(t, body.Error, internal, "%s %s", tt.method, tt.path)
			}
		}
	})

	t.Run("ListFiltersAndPages", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		var discord, autonomous []string
		for i := range 7 {
			th := dbtest.Thread(ctx, t, b.store, &dbtest.ThreadOpts{Goal: new(fmt.Sprintf("autonomous %d", i))})
			autonomous = append(autonomous, th.ID.String())
			th = dbtest.Thread(ctx, t, b.store, &dbtest.ThreadOpts{Discord: dbtest.DiscordAttachment()})
			discord = append(discord, th.ID.String())
		}
		tests := []struct {
			name  string
			query url.Values
			want  []string
		}{
			{"All", url.Values{}, append(append([]string{}, autonomous...), discord...)},
			{"Platform", url.Values{"platform": {"discord"}}, discord},
			{"Type", url.Values{"type": {"autonomous"}}, autonomous},
			{"Status", url.Values{"status": {"pending"}, "type": {"interactive"}}, discord},
			{"UpdatedSinceFuture", url.Values{"updated_since": {time.Now().Add(time.Hour).Format(time.RFC3339)}}, nil},
		}
		for _, tt := range tests {
			var got []string
			cursor := ""
			for {
				q := url.Values{"limit": {"3"}}
				for k, v := range tt.query {
					q[k] = v
				}
				if cursor != "" {
					q.Set("cursor", cursor)
				}
				var page threadList
				require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, "/api/v1/threads?"+q.Encode(), "", &page), tt.name)
				for _, th := range page.Threads {
					got = append(got, th.ID.String())
				}
				if !page.HasMore {
					break
				}
				require.Len(t, page.Threads, 3)
				cursor = page.NextCursor
			}
			require.ElementsMatch(t, tt.want, got, tt.name)
			require.Len(t, got, len(tt.want), "%s: no repeats", tt.name)
		}
	})

	t.Run("StitchesPage", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		th := dbtest.Thread(ctx, t, b.store, nil)
		for i := range 9 {
			_, err := b.store.AppendStitch(ctx, thread.Stitch{ThreadID: th.ID, Type: thread.StitchAgentThought, Content: fmt.Sprint(i)})
			require.NoError(t, err)
		}
		var seqs []int64
		cursor := ""
		for {
			var page struct {
				Stitches   []threadview.Stitch `json:"stitches"`
				NextCursor string              `json:"next_cursor"`
				HasMore    bool                `json:"has_more"`
			}
			path := "/api/v1/threads/" + th.ID.String() + "/stitches?limit=4&cursor=" + cursor
			require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, path, "", &page))
			for _, s := range page.Stitches {
				seqs = append(seqs, s.Seq)
			}
			if !page.HasMore {
				break
			}
			cursor = page.NextCursor
		}
		require.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, seqs)
	})
}

func slackAttachment() *thread.SlackAttachment {
	return &thread.SlackAttachment{TeamID: "T1", ChannelID: "C1", ThreadTS: "1700000000.000100", ChannelType: "channel", CreatedBy: "U1"}
}
