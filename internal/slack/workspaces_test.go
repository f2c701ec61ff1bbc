package slack_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/slack/slacktest"
	"github.com/weft-dev/weft/internal/surface"
)

// installs is a TokenSource over a map, its tokens replaced as a rotation
// replaces them.
type installs struct {
	mu     sync.Mutex
	tokens map[string]string
}

func (i *installs) Token(_ context.Context, team string) (string, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if tok, ok := i.tokens[team]; ok {
		return tok, nil
	}
	return "", fmt.Errorf("installs: %w", slack.ErrNotInstalled)
}

func (i *installs) set(team, token string) {
	i.mu.Lock()
	i.tokens[team] = token
	i.mu.Unlock()
}

// TestWorkspaces: each workspace is called with its own token: its
// installation's (the newest, after a rotation), else SLACK_BOT_TOKEN's for
// that token's workspace; any other is not installed. A token does not
// reach another workspace's channels.
func TestWorkspaces(t *testing.T) {
	srv := slacktest.NewServer(t)
	srv.AddChannel("C1", "channel")
	alpha := slacktest.Team{ID: "T0ALPHA", Name: "alpha", BotUserID: "U0ALPHABOT", BotID: "B0ALPHABOT"}
	srv.AddTeam(alpha)
	srv.AddTeamChannel(alpha.ID, "CA", "channel")
	srv.AddToken(alpha.ID, "xoxb-alpha-1")
	srv.AddToken(alpha.ID, "xoxb-alpha-2")
	src := &installs{tokens: map[string]string{alpha.ID: "xoxb-alpha-1"}}
	ws, err := slack.NewWorkspaces(slack.Config{Token: slacktest.BotToken, APIURL: srv.APIURL()}, src)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	post := func(team, channel string) error {
		c, err := ws.Client(ctx, team)
		if err != nil {
			return err
		}
		_, err = c.PostMessage(ctx, slack.Post{Channel: channel, Text: "hi"})
		return err
	}
	lastToken := func() string {
		calls := srv.Calls("chat.postMessage")
		return calls[len(calls)-1].Token
	}

	if err := post(slacktest.TeamID, "C1"); err != nil || lastToken() != slacktest.BotToken {
		t.Fatalf("SLACK_BOT_TOKEN's workspace: %v, token %s", err, lastToken())
	}
	if err := post(alpha.ID, "CA"); err != nil || lastToken() != "xoxb-alpha-1" {
		t.Fatalf("installed workspace: %v, token %s", err, lastToken())
	}
	src.set(alpha.ID, "xoxb-alpha-2")
	if err := post(alpha.ID, "CA"); err != nil || lastToken() != "xoxb-alpha-2" {
		t.Fatalf("after rotation: %v, token %s", err, lastToken())
	}
	id, err := ws.Identity(ctx, alpha.ID)
	if err != nil || id.UserID != alpha.BotUserID || id.TeamID != alpha.ID {
		t.Fatalf("alpha's bot = %+v, %v", id, err)
	}
	if err := post(alpha.ID, "C1"); !surface.IsKind(err, surface.KindNotFound) {
		t.Fatalf("alpha's token on another workspace's channel: %v, want channel_not_found", err)
	}
	if _, err := ws.Client(ctx, "T0NONE"); !errors.Is(err, slack.ErrNotInstalled) {
		t.Fatalf("unknown workspace: %v, want ErrNotInstalled", err)
	}
	// An installation wins over SLACK_BOT_TOKEN in its own workspace.
	srv.AddToken(slacktest.TeamID, "xoxb-installed")
	src.set(slacktest.TeamID, "xoxb-installed")
	if err := post(slacktest.TeamID, "C1"); err != nil || lastToken() != "xoxb-installed" {
		t.Fatalf("installed over SLACK_BOT_TOKEN: %v, token %s", err, lastToken())
	}

	oauthOnly, err := slack.NewWorkspaces(slack.Config{APIURL: srv.APIURL()}, src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oauthOnly.DefaultTeam(ctx); !errors.Is(err, slack.ErrNotInstalled) {
		t.Fatalf("default team without SLACK_BOT_TOKEN: %v", err)
	}
	if _, err := slack.NewWorkspaces(slack.Config{APIURL: srv.APIURL()}, nil); err == nil {
		t.Fatal("no token and no installations: want an error")
	}
}
