package console_test

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/approval"
	"github.com/weft-dev/weft/internal/console"
	"github.com/weft-dev/weft/internal/ingest"
	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/thread"
)

// token is the test servers' WEFT_API_TOKEN.
const token = "console-test-token"

// rig is a console on a fresh database, served over HTTP, with the real
// store and an ingester whose jobs are written but never worked.
type rig struct {
	store *db.Store
	srv   *httptest.Server
}

func newRig(t *testing.T) *rig {
	t.Helper()
	pool := dbtest.NewPool(t)
	logger := logtest.New(t)
	store := db.New(pool, logger)
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)
	c := console.New(console.Deps{
		Logger: logger, Token: token, Store: store, Aborter: ingest.New(ingest.Deps{Store: store, Jobs: rc, Logger: logger}),
		Approvals: &approval.Decider{Store: store, Jobs: rc, Logger: logger},
		Listen:    console.Connector(pool),
		Agent: console.Agent{Model: "openai/gpt-4o", FastModel: "openai/gpt-4o-mini", Persona: "You are weft.",
			Servers: func(org string) []string {
				if org == "acme" {
					return []string{"deploys", "shared"}
				}
				return []string{"shared"}
			}},
	})
	srv := httptest.NewServer(c)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return &rig{store: store, srv: srv}
}

// thread makes a thread with goal, attached to Discord, Linear or Slack when
// platform says so, moved to status (through running when it must).
func (g *rig) thread(t *testing.T, goal string, platform thread.Platform, status thread.Status) *thread.Thread {
	t.Helper()
	ctx := context.Background()
	opts := &dbtest.ThreadOpts{Goal: &goal}
	switch platform {
	case thread.PlatformDiscord:
		opts.Discord = dbtest.DiscordAttachment()
	case thread.PlatformLinear:
		opts.Linear = dbtest.LinearAttachment()
	case thread.PlatformSlack:
		opts.Slack = &thread.SlackAttachment{TeamID: "T1", ChannelID: "C1", ThreadTS: "1700000000.000100", ChannelType: "channel", CreatedBy: "U1"}
	}
	th := dbtest.Thread(ctx, t, g.store, opts)
	if status == thread.StatusPending {
		return th
	}
	th, err := g.store.SetStatus(ctx, th.ID, thread.StatusChange{To: thread.StatusRunning})
	require.NoError(t, err)
	if status == thread.StatusRunning {
		return th
	}
	c := thread.StatusChange{To: status}
	switch status {
	case thread.StatusWaiting:
		c.WaitingReason = thread.WaitingClarification
	case thread.StatusFailed:
		c.Error = "the model gave up"
	case thread.StatusCompleted:
		c.Result = []byte(`{"ok":true}`)
	}
	th, err = g.store.SetStatus(ctx, th.ID, c)
	require.NoError(t, err)
	return th
}

// client is an HTTP client that keeps cookies and does not follow
// redirects, so tests see each answer.
func client(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
