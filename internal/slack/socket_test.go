package slack_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/slack/slacktest"
)

// records hands each log record to a channel.
type records chan slog.Record

func (r records) Enabled(context.Context, slog.Level) bool { return true }
func (r records) Handle(_ context.Context, rec slog.Record) error {
	select {
	case r <- rec.Clone():
	default: // a test that stopped reading does not block the socket
	}
	return nil
}
func (r records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r records) WithGroup(string) slog.Handler      { return r }

// TestSocketLogsConnectionFailures: a connection Slack refuses for a
// reason other than auth is retried, and each failure is logged at warn
// with Slack's error, so an operator sees why Socket Mode is not up.
func TestSocketLogsConnectionFailures(t *testing.T) {
	t.Parallel()
	srv := slacktest.NewServer(t) // Socket Mode off: apps.connections.open answers not_allowed_token_type
	logs := make(records, 64)
	s := slack.NewSocket(slack.Config{AppToken: slacktest.AppToken, APIURL: srv.APIURL()}, nil, slog.New(logs))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	stopped := false
	defer func() {
		cancel()
		if !stopped {
			<-done
		}
	}()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case rec := <-logs:
			var text string
			rec.Attrs(func(a slog.Attr) bool {
				if a.Key == "error" {
					text = a.Value.String()
				}
				return true
			})
			if rec.Level == slog.LevelWarn && strings.Contains(text, "not_allowed_token_type") {
				return
			}
		case err := <-done:
			stopped = true
			t.Fatalf("socket stopped: %v", err)
		case <-deadline:
			t.Fatal("no connection failure was logged")
		}
	}
}
