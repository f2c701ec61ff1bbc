package slack_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/fakekit"
	"github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/slack/slacktest"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

func outboxRow(t *testing.T, target, text string, attempts int) thread.Outbox {
	t.Helper()
	return thread.Outbox{ID: uuid.New(), Platform: thread.PlatformSlack, Target: target, Kind: thread.OutboxResponse,
		Body: thread.OutboxBody{Text: text}.JSON(), Attempts: attempts, CreatedAt: time.Now()}
}

// TestSenderResumesParts: a long answer goes out in parts; after a part
// whose answer was lost, the retry posts only the parts Slack does not
// have.
func TestSenderResumesParts(t *testing.T) {
	srv := slacktest.NewServer(t)
	srv.AddChannel("C1", "channel")
	parent := srv.Post(slacktest.User{ID: "U1"}, "C1", "", "question")
	s := slack.NewSender(newWorkspaces(t, srv))
	para := strings.Repeat("word ", 700) // 3,500 characters
	o := outboxRow(t, thread.SlackTarget{TeamID: slacktest.TeamID, ChannelID: "C1", ThreadTS: parent.TS}.String(), para+"\n\n"+para+"\n\n"+para, 1)

	first, err := s.Send(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.BotMessages("C1"); len(got) != 3 || got[0].TS != first {
		t.Fatalf("posted %d parts, first %s", len(got), first)
	}

	o2 := outboxRow(t, o.Target, para+"\n\n"+para+"\n\n"+para, 1)
	// Part 0 is made, but its answer is lost.
	srv.Fail("chat.postMessage", 1, fakekit.LostResponse())
	_, err = s.Send(t.Context(), o2)
	if err == nil || errors.Is(err, thread.ErrInvalid) || !surface.Ambiguous(err) {
		t.Fatalf("lost answer: %v, want an ambiguous, retryable failure", err)
	}
	if n := len(srv.BotMessages("C1")); n != 4 {
		t.Fatalf("%d bot messages after the failed part, want 4 (the part was applied)", n)
	}
	o2.Attempts = 2
	if _, err := s.Send(t.Context(), o2); err != nil {
		t.Fatal(err)
	}
	var parts []int
	for _, m := range srv.BotMessages("C1")[3:] {
		if m.Metadata == nil || m.Metadata.EventPayload["outbox_id"] != o2.ID.String() {
			t.Fatalf("part without its outbox id: %+v", m)
		}
		parts = append(parts, int(m.Metadata.EventPayload["part"].(float64)))
	}
	if len(parts) != 3 || parts[0] != 0 || parts[1] != 1 || parts[2] != 2 {
		t.Fatalf("parts posted %v, want 0, 1, 2 once each", parts)
	}
}

func TestSenderErrors(t *testing.T) {
	tests := []struct {
		name    string
		target  string
		fault   *fakekit.Fault
		invalid bool
	}{
		{"bad target", "C1", nil, true},
		{"unknown channel", thread.SlackTarget{TeamID: slacktest.TeamID, ChannelID: "C404", ThreadTS: "1.1"}.String(), nil, true},
		{"workspace not installed", thread.SlackTarget{TeamID: "T0ELSEWHERE", ChannelID: "C1", ThreadTS: "1.1"}.String(), nil, true},
		{"not in channel", "", ptr(fakekit.ErrorCode("not_in_channel")), true},
		{"revoked", "", ptr(fakekit.ErrorCode("token_revoked")), true},
		{"429", "", ptr(fakekit.RateLimited(time.Second)), false},
		{"503", "", ptr(fakekit.Fail(http.StatusServiceUnavailable)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := slacktest.NewServer(t)
			srv.AddChannel("C1", "channel")
			target := tt.target
			if target == "" {
				target = thread.SlackTarget{TeamID: slacktest.TeamID, ChannelID: "C1", ThreadTS: "1.1"}.String()
			}
			if tt.fault != nil {
				srv.Fail("chat.postMessage", 1, *tt.fault)
			}
			_, err := slack.NewSender(newWorkspaces(t, srv)).Send(t.Context(), outboxRow(t, target, "hi", 1))
			if err == nil || errors.Is(err, thread.ErrInvalid) != tt.invalid {
				t.Fatalf("err = %v, want invalid %v", err, tt.invalid)
			}
		})
	}
}

func TestRender(t *testing.T) {
	if got := slack.Render(thread.OutboxElicitation, thread.OutboxBody{Text: "Pick <one>", Options: []string{"a & b", "@here"}}); got != "Pick &lt;one&gt;\n\n1. a &amp; b\n2. @\u2060here" {
		t.Fatalf("elicitation = %q", got)
	}
	if got := slack.Render(thread.OutboxError, thread.OutboxBody{}); got != ":warning: *Error:* Something went wrong." {
		t.Fatalf("error = %q", got)
	}
}

func TestVerify(t *testing.T) {
	body := []byte(`{"type":"event_callback"}`)
	now := time.Now()
	tests := []struct {
		name   string
		h      http.Header
		secret string
		ok     bool
	}{
		{"signed", slacktest.Sign(body, now), slacktest.SigningSecret, true},
		{"4 min old", slacktest.Sign(body, now.Add(-4*time.Minute)), slacktest.SigningSecret, true},
		{"6 min old", slacktest.Sign(body, now.Add(-6*time.Minute)), slacktest.SigningSecret, false},
		{"6 min ahead", slacktest.Sign(body, now.Add(6*time.Minute)), slacktest.SigningSecret, false},
		{"other secret", slacktest.SignWith("x", body, now), slacktest.SigningSecret, false},
		{"no headers", http.Header{}, slacktest.SigningSecret, false},
		{"no secret configured", slacktest.Sign(body, now), "", false},
	}
	for _, tt := range tests {
		err := slack.Verify(tt.h, body, tt.secret)
		if (err == nil) != tt.ok || err != nil && !errors.Is(err, slack.ErrUnauthorized) {
			t.Errorf("%s: err = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
	bad := slacktest.Sign(body, now)
	bad.Set("X-Slack-Signature", "v0=00")
	if err := slack.Verify(bad, body, slacktest.SigningSecret); !errors.Is(err, slack.ErrUnauthorized) {
		t.Errorf("short signature: %v", err)
	}
}
