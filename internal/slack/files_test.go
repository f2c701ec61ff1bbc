package slack_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/slack/slacktest"
	"github.com/weft-dev/weft/internal/thread"
)

type eventsChan chan slack.Event

func (c eventsChan) SlackEvent(_ context.Context, e slack.Event) (bool, error) {
	c <- e
	return true, nil
}

// TestFilesReachTheStitch: a mention sharing files (both of its
// deliveries, app_mention and message.file_share) carries each file's name,
// type, size, url_private and workspace into the stitch's metadata, and
// Workspaces.Download fetches url_private with the workspace's bot token;
// a token of another workspace gets Slack's sign-in page, an error.
func TestFilesReachTheStitch(t *testing.T) {
	srv := slacktest.NewServer(t)
	ws := newWorkspaces(t, srv)
	got := make(eventsChan, 4)
	conv := slack.NewConversations(ws, got, slog.New(slog.DiscardHandler))
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if _, err := conv.Handle(r.Context(), body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	}))
	t.Cleanup(hook.Close)
	srv.DeliverTo(hook.URL)
	srv.AddChannel("C1", "channel")

	png := []byte("\x89PNG\r\n\x1a\nimage")
	srv.PostFiles(slacktest.User{ID: "U1", Name: "ann"}, "C1", "", "<@"+slacktest.BotUserID+"> what is this?",
		slacktest.File{Name: "shot.png", Mimetype: "image/png", Content: png},
		slacktest.File{Name: "notes.txt", Mimetype: "text/plain", Content: []byte("hello")})

	seen := map[string]bool{}
	for len(seen) < 2 {
		var e slack.Event
		select {
		case e = <-got:
		case <-time.After(30 * time.Second):
			t.Fatalf("delivered %v, want app_mention and message.file_share", seen)
		}
		typ := e.EventType
		seen[typ] = true
		require.Contains(t, []string{"app_mention", "message.file_share"}, typ)
		require.Equal(t, slack.ActionMessage, e.Action)
		files := e.Message.Meta().Files
		require.Len(t, files, 2, typ)
		require.Equal(t, thread.File{Name: "shot.png", MediaType: "image/png", Size: int64(len(png)), URL: files[0].URL, Workspace: slacktest.TeamID}, files[0])
		require.Equal(t, "notes.txt", files[1].Name)

		var buf bytes.Buffer
		require.NoError(t, ws.Download(t.Context(), files[0], &buf))
		require.Equal(t, png, buf.Bytes())
	}
	downloads := srv.FileDownloads()
	require.NotEmpty(t, downloads)
	require.Equal(t, slacktest.BotToken, downloads[0].Token, "url_private is fetched with the bot token as a Bearer")

	// A token of another workspace is sent to the sign-in page.
	srv.AddToken("T0OTHER", "xoxb-other")
	other, err := slack.NewWorkspaces(slack.Config{Token: "xoxb-other", APIURL: srv.APIURL()}, nil)
	require.NoError(t, err)
	f := thread.File{Name: "shot.png", URL: srv.URL() + "/files-pri/" + slacktest.TeamID + "-F1/shot.png", Workspace: "T0OTHER"}
	var buf bytes.Buffer
	require.ErrorContains(t, other.Download(t.Context(), f, &buf), "sign-in")
	require.Empty(t, buf.Bytes())
}
