package slack_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/slack/slacktest"
	"github.com/weft-dev/weft/internal/thread"
)

// TestParsePrompts: WEFT_SLACK_SUGGESTED_PROMPTS' forms, and its limit.
func TestParsePrompts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []slack.Prompt
		err  bool
	}{
		{in: "", want: nil},
		{in: "Help=What can you do?", want: []slack.Prompt{{Title: "Help", Message: "What can you do?"}}},
		{in: "Summarize this channel | Catch me up=What did I miss?",
			want: []slack.Prompt{{Title: "Summarize this channel", Message: "Summarize this channel"}, {Title: "Catch me up", Message: "What did I miss?"}}},
		{in: "a|b|c|d", want: []slack.Prompt{{"a", "a"}, {"b", "b"}, {"c", "c"}, {"d", "d"}}},
		{in: "a|b|c|d|e", err: true},
		{in: "=message", err: true},
	}
	for _, tt := range tests {
		got, err := slack.ParsePrompts(tt.in)
		if (err != nil) != tt.err {
			t.Fatalf("%q: error %v, want error %v", tt.in, err, tt.err)
		}
		if !tt.err && len(got) != len(tt.want) {
			t.Fatalf("%q: %v, want %v", tt.in, got, tt.want)
		}
		for i := range tt.want {
			if got[i] != tt.want[i] {
				t.Fatalf("%q: %v, want %v", tt.in, got, tt.want)
			}
		}
	}
}

// fresh records events, each event id new the first time only.
type fresh struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (f *fresh) SlackEvent(_ context.Context, e slack.Event) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seen == nil {
		f.seen = map[string]bool{}
	}
	if f.seen[e.EventID] {
		return false, nil
	}
	f.seen[e.EventID] = true
	return true, nil
}

// TestGreeterSuggestsPrompts: opening an assistant thread, or the app's
// messages tab, offers the configured prompts through slack-go (in the
// thread, or in the tab without one); the home tab, a redelivery and
// app_context_changed offer nothing.
func TestGreeterSuggestsPrompts(t *testing.T) {
	t.Parallel()
	srv := slacktest.NewServer(t)
	srv.AddChannel("D1", "im")
	ws := newWorkspaces(t, srv)
	prompts := []slack.Prompt{{Title: "Help", Message: "What can you do?"}, {Title: "Catch up", Message: "What did I miss?"}}
	conv := slack.NewConversations(ws, &fresh{}, logtest.New(t), slack.WithGreeter(slack.NewGreeter(ws, "Try", prompts, logtest.New(t))))
	handle := func(id string, inner map[string]any) {
		t.Helper()
		b, err := json.Marshal(map[string]any{"type": "event_callback", "team_id": slacktest.TeamID, "event_id": id, "event_time": 1764100000, "event": inner})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conv.Handle(t.Context(), b); err != nil {
			t.Fatal(err)
		}
	}
	handle("Ev1", map[string]any{"type": "assistant_thread_started", "assistant_thread": map[string]any{"user_id": "U1", "channel_id": "D1", "thread_ts": "8.000001"}})
	handle("Ev1", map[string]any{"type": "assistant_thread_started", "assistant_thread": map[string]any{"user_id": "U1", "channel_id": "D1", "thread_ts": "8.000001"}})
	handle("Ev2", map[string]any{"type": "app_home_opened", "user": "U1", "channel": "D1", "tab": "home"})
	handle("Ev3", map[string]any{"type": "app_home_opened", "user": "U1", "channel": "D1", "tab": "messages"})
	handle("Ev4", map[string]any{"type": "app_context_changed", "user": "U1", "channel": "D1",
		"context": map[string]any{"entities": []map[string]any{{"type": "slack#/types/channel_id", "value": "C1"}}}})
	want := []slacktest.Prompt{{Title: "Help", Message: "What can you do?"}, {Title: "Catch up", Message: "What did I miss?"}}
	got := srv.SuggestedPrompts()
	if len(got) != 2 {
		t.Fatalf("%d setSuggestedPrompts calls, want 2: %+v", len(got), got)
	}
	for i, ts := range []string{"8.000001", ""} {
		if got[i].Channel != "D1" || got[i].ThreadTS != ts || got[i].Title != "Try" || len(got[i].Prompts) != 2 ||
			got[i].Prompts[0] != want[0] || got[i].Prompts[1] != want[1] {
			t.Fatalf("call %d: %+v", i, got[i])
		}
	}
}

// surfacesOf answers each thread's Slack target.
type surfacesOf map[uuid.UUID]string

func (s surfacesOf) InputSurface(_ context.Context, id uuid.UUID) (thread.Platform, string, error) {
	if t, ok := s[id]; ok {
		return thread.PlatformSlack, t, nil
	}
	return "", "", errors.New("no such thread")
}

// threadGoals answers each thread's goal.
type threadGoals map[uuid.UUID]string

func (g threadGoals) Thread(_ context.Context, id uuid.UUID) (*thread.Thread, error) {
	return &thread.Thread{ID: id, Goal: g[id]}, nil
}

// TestStatusLoadingAndTitle: a turn in a direct message's thread shows
// the status with its loading messages and titles the thread with its
// goal once; in a channel nothing is titled; the end clears the status.
func TestStatusLoadingAndTitle(t *testing.T) {
	t.Parallel()
	srv := slacktest.NewServer(t)
	srv.AddChannel("D1", "im")
	srv.AddChannel("C1", "channel")
	ws := newWorkspaces(t, srv)
	dm, ch := thread.NewID(), thread.NewID()
	st := surfacesOf{
		dm: thread.SlackTarget{TeamID: slacktest.TeamID, ChannelID: "D1", ThreadTS: "8.000001"}.String(),
		ch: thread.SlackTarget{TeamID: slacktest.TeamID, ChannelID: "C1", ThreadTS: "9.000001"}.String(),
	}
	gs := threadGoals{dm: "Fix the flaky deploy", ch: "A channel question"}
	s := slack.NewStatus(ws, st, logtest.New(t), slack.WithLoading(slack.LoadingMessages), slack.WithTitles(gs))
	thinking := func() int {
		n := 0
		for _, x := range srv.Statuses() {
			if x.Status == slack.Thinking {
				n++
			}
		}
		return n
	}
	for i, id := range []uuid.UUID{dm, dm, ch} {
		stop := s.Thinking(t.Context(), id)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		err := srv.Wait(ctx, func() bool { return thinking() > i && (i != 0 || len(srv.Titles()) > 0) })
		cancel()
		if err != nil {
			t.Fatalf("the status was never set: %v", err)
		}
		stop()
	}
	titles := srv.Titles()
	if len(titles) != 1 || titles[0] != (slacktest.Title{Channel: "D1", ThreadTS: "8.000001", Title: "Fix the flaky deploy"}) {
		t.Fatalf("titles %+v, want the DM's once", titles)
	}
	var set, cleared int
	for _, x := range srv.Statuses() {
		switch x.Status {
		case slack.Thinking:
			set++
			if strings.Join(x.LoadingMessages, "|") != strings.Join(slack.LoadingMessages, "|") {
				t.Fatalf("loading messages %q", x.LoadingMessages)
			}
		case "":
			cleared++
			if len(x.LoadingMessages) != 0 {
				t.Fatalf("a cleared status with loading messages %q", x.LoadingMessages)
			}
		}
	}
	if set != 3 || cleared != 3 {
		t.Fatalf("%d statuses set and %d cleared, want 3 and 3", set, cleared)
	}
}
