package slack_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"

	"github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/slack/slacktest"
	"github.com/weft-dev/weft/internal/thread"
)

type recorder struct{ got []slack.Event }

func (r *recorder) SlackEvent(_ context.Context, e slack.Event) (bool, error) {
	r.got = append(r.got, e)
	return true, nil
}

func envelope(t *testing.T, inner map[string]any) []byte {
	t.Helper()
	return teamEnvelope(t, slacktest.TeamID, inner)
}

func teamEnvelope(t *testing.T, team string, inner map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"type": "event_callback", "team_id": team, "event_id": "Ev1", "event_time": 1764100000, "event": inner})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestConversationsEvents: what each event becomes.
func TestConversationsEvents(t *testing.T) {
	bot := "<@" + slacktest.BotUserID + ">"
	msgID := func(ts string) string { return thread.SlackMessageID(slacktest.TeamID, "C1", ts) }
	tests := []struct {
		name   string
		inner  map[string]any
		action slack.Action
		open   bool
		answer bool
		ts     string // the Slack thread
		id     string // the stitch's external id
		text   string
	}{
		{name: "mention", inner: map[string]any{"type": "app_mention", "user": "U1", "text": bot + " hi &amp; bye", "ts": "1.000001", "channel": "C1"},
			action: slack.ActionMessage, open: true, answer: true, ts: "1.000001", id: msgID("1.000001"), text: "hi & bye"},
		{name: "the mention's message twin", inner: map[string]any{"type": "message", "user": "U1", "text": bot + " hi", "ts": "1.000001", "channel": "C1", "channel_type": "channel"},
			action: slack.ActionMessage, open: true, answer: true, ts: "1.000001", id: msgID("1.000001"), text: "hi"},
		{name: "mention in a thread", inner: map[string]any{"type": "app_mention", "user": "U1", "text": bot + " again", "ts": "2.000001", "thread_ts": "1.000001", "channel": "C1"},
			action: slack.ActionMessage, open: true, answer: true, ts: "1.000001", id: msgID("2.000001"), text: "again"},
		{name: "top-level chatter", inner: map[string]any{"type": "message", "user": "U1", "text": "lunch?", "ts": "3.000001", "channel": "C1", "channel_type": "channel"},
			action: slack.ActionIgnore},
		{name: "reply in a thread", inner: map[string]any{"type": "message", "user": "U1", "text": "more", "ts": "4.000001", "thread_ts": "1.000001", "channel": "C1", "channel_type": "channel"},
			action: slack.ActionMessage, answer: true, ts: "1.000001", id: msgID("4.000001"), text: "more"},
		{name: "weft's own post", inner: map[string]any{"type": "message", "user": slacktest.BotUserID, "bot_id": slacktest.BotID, "text": "answer", "ts": "5.000001", "thread_ts": "1.000001", "channel": "C1"},
			action: slack.ActionIgnore},
		{name: "weft's own broadcast", inner: map[string]any{"type": "message", "subtype": "thread_broadcast", "bot_id": slacktest.BotID, "text": "answer", "ts": "5.000002", "thread_ts": "1.000001", "channel": "C1"},
			action: slack.ActionIgnore},
		{name: "another bot", inner: map[string]any{"type": "message", "subtype": "bot_message", "bot_id": "B9", "text": "beep", "ts": "6.000001", "thread_ts": "1.000001", "channel": "C1"},
			action: slack.ActionMessage, answer: false, ts: "1.000001", id: msgID("6.000001"), text: "beep"},
		{name: "another bot mentioning weft", inner: map[string]any{"type": "message", "user": "U9", "bot_id": "B9", "text": bot + " beep", "ts": "7.000001", "thread_ts": "1.000001", "channel": "C1"},
			action: slack.ActionMessage, open: true, answer: true, ts: "1.000001", id: msgID("7.000001"), text: "beep"},
		{name: "direct message", inner: map[string]any{"type": "message", "user": "U1", "text": "psst", "ts": "8.000001", "channel": "D1", "channel_type": "im"},
			action: slack.ActionMessage, open: true, answer: true, ts: "8.000001", id: thread.SlackMessageID(slacktest.TeamID, "D1", "8.000001"), text: "psst"},
		{name: "edit", inner: map[string]any{"type": "message", "subtype": "message_changed", "channel": "C1", "ts": "9.000001",
			"message": map[string]any{"type": "message", "user": "U1", "text": "more, edited", "ts": "4.000001", "edited": map[string]any{"user": "U1", "ts": "9.000000"}}},
			action: slack.ActionEdit, id: msgID("4.000001"), text: "more, edited"},
		{name: "assistant thread titled", inner: map[string]any{"type": "message", "subtype": "message_changed", "channel": "D1", "ts": "9.000002",
			"message": map[string]any{"type": "message", "subtype": "assistant_app_thread", "text": "", "ts": "8.000001"}},
			action: slack.ActionIgnore},
		{name: "delete", inner: map[string]any{"type": "message", "subtype": "message_deleted", "channel": "C1", "ts": "9.000003", "deleted_ts": "4.000001"},
			action: slack.ActionDelete, id: msgID("4.000001")},
		{name: "channel join", inner: map[string]any{"type": "message", "subtype": "channel_join", "user": "U1", "text": "<@U1> has joined", "ts": "9.000004", "channel": "C1"},
			action: slack.ActionIgnore},
		{name: "assistant thread started", inner: map[string]any{"type": "assistant_thread_started", "assistant_thread": map[string]any{"user_id": "U1", "channel_id": "D1", "thread_ts": "8.000001"}},
			action: slack.ActionIgnore},
		{name: "unknown type", inner: map[string]any{"type": "reaction_added", "user": "U1", "reaction": "eyes"}, action: slack.ActionIgnore},
	}
	srv := slacktest.NewServer(t)
	c := newWorkspaces(t, srv)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			conv := slack.NewConversations(c, rec, slog.New(slog.DiscardHandler))
			if _, err := conv.Handle(t.Context(), envelope(t, tt.inner)); err != nil {
				t.Fatal(err)
			}
			if len(rec.got) != 1 {
				t.Fatalf("recorded %d events, want 1", len(rec.got))
			}
			e := rec.got[0]
			if e.EventID != "Ev1" || e.Action != tt.action || e.Open != tt.open || e.Answer != tt.answer ||
				e.Thread.ThreadTS != tt.ts || e.Message.ExternalID != tt.id || e.Message.Content != tt.text {
				t.Fatalf("event = %+v\nwant action %s open %v answer %v thread %s id %s text %q", e, tt.action, tt.open, tt.answer, tt.ts, tt.id, tt.text)
			}
		})
	}
}

func TestConversationsRejects(t *testing.T) {
	srv := slacktest.NewServer(t)
	c := newWorkspaces(t, srv)
	rec := &recorder{}
	conv := slack.NewConversations(c, rec, slog.New(slog.DiscardHandler))
	for _, body := range []string{
		`nope`, `{"type":"event_callback","team_id":"T1","event":{"type":"message"}}`,
		`{"type":"event_callback","event_id":"Ev1","event":{"type":"message"}}`,
		`{"type":"event_callback","event_id":"Ev1","team_id":"T1"}`,
		`{"type":"event_callback","event_id":"Ev1","team_id":"T0SLACKTEST","event":{"type":"app_mention","ts":7}}`,
		`{"type":"url_verification"}`, `{"type":"something_else"}`,
	} {
		if _, err := conv.Handle(t.Context(), []byte(body)); !errors.Is(err, slack.ErrMalformed) {
			t.Errorf("%s: err = %v, want ErrMalformed", body, err)
		}
	}
	if len(rec.got) != 0 {
		t.Fatalf("recorded %+v", rec.got)
	}
	ch, err := conv.Handle(t.Context(), []byte(`{"type":"url_verification","challenge":"abc","token":"x"}`))
	if err != nil || ch != "abc" {
		t.Fatalf("challenge = %q, %v", ch, err)
	}
}

// TestConversationsOtherWorkspaces: weft's own post is told apart by the
// bot user of its workspace, and an event of a workspace weft has no token
// for is acknowledged and dropped: it could not be answered.
func TestConversationsOtherWorkspaces(t *testing.T) {
	srv := slacktest.NewServer(t)
	other := slacktest.Team{ID: "T0OTHER", Name: "other", BotUserID: "U0OTHERBOT", BotID: "B0OTHERBOT"}
	srv.AddTeam(other)
	srv.AddToken(other.ID, "xoxb-other")
	ws, err := slack.NewWorkspaces(slack.Config{Token: "xoxb-other", APIURL: srv.APIURL()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	conv := slack.NewConversations(ws, rec, slog.New(slog.DiscardHandler))
	own := map[string]any{"type": "message", "user": other.BotUserID, "bot_id": other.BotID, "text": "an answer", "ts": "1.000002", "thread_ts": "1.000001", "channel": "C1"}
	if _, err := conv.Handle(t.Context(), teamEnvelope(t, other.ID, own)); err != nil {
		t.Fatal(err)
	}
	// The first workspace's bot user is a stranger here: another bot,
	// stored but not answered.
	stranger := map[string]any{"type": "message", "user": slacktest.BotUserID, "bot_id": slacktest.BotID, "text": "hello", "ts": "1.000003", "thread_ts": "1.000001", "channel": "C1"}
	if _, err := conv.Handle(t.Context(), teamEnvelope(t, other.ID, stranger)); err != nil {
		t.Fatal(err)
	}
	if len(rec.got) != 2 || rec.got[0].Action != slack.ActionIgnore || rec.got[1].Action != slack.ActionMessage || rec.got[1].Answer {
		t.Fatalf("recorded %+v, want its own post ignored and the other bot's stored unanswered", rec.got)
	}
	mention := map[string]any{"type": "app_mention", "user": "U1", "text": "<@" + slacktest.BotUserID + "> hi", "ts": "1.000004", "channel": "C1"}
	if _, err := conv.Handle(t.Context(), teamEnvelope(t, slacktest.TeamID, mention)); err != nil {
		t.Fatalf("event of a workspace without a token: %v, want it acknowledged", err)
	}
	if len(rec.got) != 2 {
		t.Fatalf("recorded %+v for a workspace without a token", rec.got[2:])
	}
}

type revoker struct{ teams []string }

func (r *revoker) Revoke(_ context.Context, teamID string) error {
	r.teams = append(r.teams, teamID)
	return nil
}

// TestConversationsRevoke: an uninstall, or the bot's token revoked,
// revokes the workspace's installation before anything asks its dead
// token who the bot is; a user's token revoked leaves it. Each is
// recorded once in the ledger.
func TestConversationsRevoke(t *testing.T) {
	tests := []struct {
		name    string
		inner   map[string]any
		revoked bool
	}{
		{"AppUninstalled", map[string]any{"type": "app_uninstalled"}, true},
		{"BotTokenRevoked", map[string]any{"type": "tokens_revoked", "tokens": map[string]any{"oauth": []string{"U1"}, "bot": []string{"U0BOT"}}}, true},
		{"UserTokenRevoked", map[string]any{"type": "tokens_revoked", "tokens": map[string]any{"oauth": []string{"U1"}}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A workspace weft has no token for: the event must not need one.
			srv := slacktest.NewServer(t)
			ws, err := slack.NewWorkspaces(slack.Config{Token: "xoxb-unknown", APIURL: srv.APIURL()}, nil)
			if err != nil {
				t.Fatal(err)
			}
			rec, rev := &recorder{}, &revoker{}
			conv := slack.NewConversations(ws, rec, slog.New(slog.DiscardHandler), slack.WithRevoker(rev))
			if _, err := conv.Handle(t.Context(), teamEnvelope(t, "T0GONE", tc.inner)); err != nil {
				t.Fatal(err)
			}
			if got := len(rev.teams) == 1 && rev.teams[0] == "T0GONE"; got != tc.revoked || len(rev.teams) > 1 {
				t.Fatalf("revoked %v, want T0GONE revoked: %v", rev.teams, tc.revoked)
			}
			if len(rec.got) != 1 || rec.got[0].Action != slack.ActionIgnore || rec.got[0].EventType != tc.inner["type"] {
				t.Fatalf("recorded %+v, want the event in the ledger only", rec.got)
			}
		})
	}
	rec := &recorder{}
	conv := slack.NewConversations(newWorkspaces(t, slacktest.NewServer(t)), rec, slog.New(slog.DiscardHandler), slack.WithRevoker(&revoker{}))
	if _, err := conv.Handle(t.Context(), envelope(t, map[string]any{"type": "tokens_revoked", "tokens": "all"})); !errors.Is(err, slack.ErrMalformed) {
		t.Fatalf("malformed tokens_revoked: %v, want ErrMalformed", err)
	}
}
