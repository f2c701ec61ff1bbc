package slack_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weft-dev/weft/internal/fakekit"
	"github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/slack/slacktest"
	"github.com/weft-dev/weft/internal/surface"
)

// sleeps records the waits between retries instead of sleeping.
type sleeps struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func newClient(t *testing.T, srv *slacktest.Server, token string) (*slack.Client, *sleeps) {
	t.Helper()
	sl := &sleeps{}
	c, err := slack.New(slack.Config{Token: token, APIURL: srv.APIURL(), PostInterval: time.Nanosecond, Sleep: sl.sleep})
	if err != nil {
		t.Fatal(err)
	}
	return c, sl
}

// newWorkspaces is the clients of SLACK_BOT_TOKEN's workspace alone.
func newWorkspaces(t *testing.T, srv *slacktest.Server) *slack.Workspaces {
	t.Helper()
	ws, err := slack.NewWorkspaces(slack.Config{Token: slacktest.BotToken, APIURL: srv.APIURL(), PostInterval: time.Nanosecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func TestAuthTest(t *testing.T) {
	srv := slacktest.NewServer(t)
	c, _ := newClient(t, srv, slacktest.BotToken)
	id, err := c.Identity(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := slack.Identity{TeamID: slacktest.TeamID, Team: slacktest.TeamName, UserID: slacktest.BotUserID, BotID: slacktest.BotID, URL: "https://slacktest.slack.com/"}
	if id != want {
		t.Fatalf("identity = %+v, want %+v", id, want)
	}
	if _, err := c.Identity(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Calls("auth.test")); n != 1 {
		t.Fatalf("auth.test called %d times, want 1 (remembered)", n)
	}
}

// TestReadErrors: each failure is typed, rate limits and auth errors come
// back at once, server failures are retried up to 3 times.
func TestReadErrors(t *testing.T) {
	tests := []struct {
		name       string
		token      string
		fault      *fakekit.Fault
		faults     int
		kind       surface.Kind
		code       string
		calls      int
		retryAfter time.Duration
		ok         bool
	}{
		{name: "bad token", token: "xoxb-wrong", kind: surface.KindAuth, code: "invalid_auth", calls: 1},
		{name: "not authed", fault: ptr(fakekit.ErrorCode("not_authed")), kind: surface.KindAuth, code: "not_authed", calls: 1},
		{name: "revoked", fault: ptr(fakekit.ErrorCode("token_revoked")), kind: surface.KindAuth, code: "token_revoked", calls: 1},
		{name: "429 once", fault: ptr(fakekit.RateLimited(7 * time.Second)), faults: 1, kind: surface.KindRateLimited, code: "", calls: 1, retryAfter: 7 * time.Second},
		{name: "ratelimited body", fault: ptr(fakekit.ErrorCode("ratelimited")), kind: surface.KindRateLimited, code: "ratelimited", calls: 1, retryAfter: time.Second},
		{name: "missing scope", fault: ptr(fakekit.ErrorCode("missing_scope")), kind: surface.KindForbidden, code: "missing_scope", calls: 1},
		{name: "not in channel", fault: ptr(fakekit.ErrorCode("not_in_channel")), kind: surface.KindForbidden, code: "not_in_channel", calls: 1},
		{name: "thread not found", fault: ptr(fakekit.ErrorCode("thread_not_found")), kind: surface.KindNotFound, code: "thread_not_found", calls: 1},
		{name: "invalid", fault: ptr(fakekit.ErrorCode("invalid_arguments")), kind: surface.KindInvalid, code: "invalid_arguments", calls: 1},
		{name: "500 for good", fault: ptr(fakekit.Fail(http.StatusInternalServerError)), kind: surface.KindServer, calls: 4},
		{name: "internal_error for good", fault: ptr(fakekit.ErrorCode("internal_error")), kind: surface.KindServer, code: "internal_error", calls: 4},
		{name: "503 twice then ok", fault: ptr(fakekit.Fail(http.StatusServiceUnavailable)), faults: 2, calls: 3, ok: true},
		{name: "dropped twice then ok", fault: ptr(fakekit.Dropped()), faults: 2, calls: 3, ok: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := slacktest.NewServer(t)
			srv.AddChannel("C1", "channel")
			parent := srv.Post(slacktest.User{ID: "U1"}, "C1", "", "hello")
			token := slacktest.BotToken
			if tt.token != "" {
				token = tt.token
			}
			if tt.fault != nil {
				srv.Fail("conversations.replies", tt.faults, *tt.fault)
			}
			c, sl := newClient(t, srv, token)
			_, err := c.Replies(t.Context(), "C1", parent.TS, slack.ReadOptions{})
			if n := len(srv.Calls("conversations.replies")); n != tt.calls {
				t.Errorf("calls = %d, want %d", n, tt.calls)
			}
			if len(sl.waits) != tt.calls-1 {
				t.Errorf("waits = %v, want %d", sl.waits, tt.calls-1)
			}
			// get-thread-replies.md: exponential backoff from 1000 ms.
			for i, w := range sl.waits {
				if lo := time.Second << i; w < lo || w > lo*3/2 {
					t.Errorf("retry %d waited %v, want %v plus at most half again", i+1, w, lo)
				}
			}
			if tt.ok {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var e *surface.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *surface.Error", err)
			}
			if e.Kind != tt.kind || e.Code != tt.code || e.RetryAfter != tt.retryAfter {
				t.Fatalf("err = %+v, want kind %s code %q retry after %s", e, tt.kind, tt.code, tt.retryAfter)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestRepliesPages reads a thread page by page with its cursor.
func TestRepliesPages(t *testing.T) {
	srv := slacktest.NewServer(t)
	srv.AddChannel("C1", "channel")
	u := slacktest.User{ID: "U1"}
	parent := srv.Post(u, "C1", "", "parent")
	for i := range 6 {
		srv.Post(u, "C1", parent.TS, fmt.Sprintf("reply %d", i))
	}
	gone := srv.Post(u, "C1", parent.TS, "deleted")
	srv.Delete("C1", gone.TS)
	srv.Post(u, "C1", "", "elsewhere")
	c, _ := newClient(t, srv, slacktest.BotToken)

	var texts []string
	o := slack.ReadOptions{Limit: 3}
	pages := 0
	for {
		p, err := c.Replies(t.Context(), "C1", parent.TS, o)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, m := range p.Messages {
			texts = append(texts, m.Text)
		}
		if p.HasMore != (p.NextCursor != "") {
			t.Fatalf("has_more %v with cursor %q", p.HasMore, p.NextCursor)
		}
		if p.NextCursor == "" {
			break
		}
		o.Cursor = p.NextCursor
	}
	want := "parent,reply 0,reply 1,reply 2,reply 3,reply 4,reply 5"
	if got := strings.Join(texts, ","); got != want || pages != 3 {
		t.Fatalf("read %q in %d pages, want %q in 3", got, pages, want)
	}

	srv.SetPageCap(2)
	p, err := c.Replies(t.Context(), "C1", parent.TS, slack.ReadOptions{Limit: 100})
	if err != nil || len(p.Messages) != 2 || !p.HasMore {
		t.Fatalf("capped page = %+v, %v; want 2 messages and more", p, err)
	}
	_, err = c.Replies(t.Context(), "C1", parent.TS, slack.ReadOptions{Cursor: "not-a-cursor"})
	if !surface.IsKind(err, surface.KindInvalid) {
		t.Fatalf("bad cursor: %v, want surface.KindInvalid", err)
	}
	_, err = c.Replies(t.Context(), "C1", "1.000001", slack.ReadOptions{})
	if !surface.IsKind(err, surface.KindNotFound) {
		t.Fatalf("unknown thread: %v, want surface.KindNotFound", err)
	}
}

func TestHistory(t *testing.T) {
	srv := slacktest.NewServer(t)
	srv.AddChannel("C1", "channel")
	u := slacktest.User{ID: "U1"}
	a := srv.Post(u, "C1", "", "a")
	srv.Post(u, "C1", a.TS, "reply")
	srv.Post(u, "C1", "", "b")
	c, _ := newClient(t, srv, slacktest.BotToken)
	p, err := c.History(t.Context(), "C1", slack.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Messages) != 2 || p.Messages[0].Text != "b" || p.Messages[1].Text != "a" || p.Messages[1].ReplyCount != 1 {
		t.Fatalf("history = %+v, want b then a (1 reply)", p.Messages)
	}
}

// TestPostAndFind: a post carries its outbox id; after a post Slack applied
// but whose answer was lost, FindPosted finds it.
func TestPostAndFind(t *testing.T) {
	srv := slacktest.NewServer(t)
	srv.AddChannel("C1", "channel")
	parent := srv.Post(slacktest.User{ID: "U1"}, "C1", "", "question")
	c, _ := newClient(t, srv, slacktest.BotToken)
	since := time.Now().Add(-time.Second)

	ts, err := c.PostMessage(t.Context(), slack.Post{Channel: "C1", ThreadTS: parent.TS, Text: "part zero", OutboxID: "row-1", Part: 0})
	if err != nil {
		t.Fatal(err)
	}
	srv.Fail("chat.postMessage", 1, fakekit.LostResponse())
	_, err = c.PostMessage(t.Context(), slack.Post{Channel: "C1", ThreadTS: parent.TS, Text: "part one", OutboxID: "row-1", Part: 1})
	if err == nil || !surface.Ambiguous(err) {
		t.Fatalf("dropped post: err = %v, want an ambiguous failure", err)
	}
	if n := len(srv.Calls("chat.postMessage")); n != 2 {
		t.Fatalf("chat.postMessage called %d times, want 2 (posts are never retried blindly)", n)
	}
	found, err := c.FindPosted(t.Context(), "C1", parent.TS, "row-1", since)
	if err != nil {
		t.Fatal(err)
	}
	bot := srv.BotMessages("C1")
	if len(bot) != 2 || found[0] != ts || found[1] != bot[1].TS || len(found) != 2 {
		t.Fatalf("found %v, want parts 0 and 1 of %+v", found, bot)
	}
	other, err := c.FindPosted(t.Context(), "C1", parent.TS, "row-2", since)
	if err != nil || len(other) != 0 {
		t.Fatalf("other row found %v, %v", other, err)
	}
	// A plain read shows only the metadata's type, as Slack does.
	p, err := c.Replies(t.Context(), "C1", parent.TS, slack.ReadOptions{})
	if err != nil || p.Messages[1].OutboxID != "" {
		t.Fatalf("read without metadata: %+v, %v", p.Messages, err)
	}
}

func TestPostErrors(t *testing.T) {
	tests := []struct {
		name      string
		fault     fakekit.Fault
		kind      surface.Kind
		ambiguous bool
	}{
		{"429", fakekit.RateLimited(3 * time.Second), surface.KindRateLimited, false},
		{"not in channel", fakekit.ErrorCode("not_in_channel"), surface.KindForbidden, false},
		{"archived", fakekit.ErrorCode("is_archived"), surface.KindForbidden, false},
		{"msg too long", fakekit.ErrorCode("msg_too_long"), surface.KindInvalid, false},
		{"fatal", fakekit.ErrorCode("fatal_error"), surface.KindServer, true},
		{"502", fakekit.Fail(http.StatusBadGateway), surface.KindServer, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := slacktest.NewServer(t)
			srv.AddChannel("C1", "channel")
			srv.Fail("chat.postMessage", 1, tt.fault)
			c, _ := newClient(t, srv, slacktest.BotToken)
			_, err := c.PostMessage(t.Context(), slack.Post{Channel: "C1", Text: "hi"})
			if !surface.IsKind(err, tt.kind) || surface.Ambiguous(err) != tt.ambiguous {
				t.Fatalf("err = %v, want kind %s, ambiguous %v", err, tt.kind, tt.ambiguous)
			}
			if n := len(srv.Calls("chat.postMessage")); n != 1 {
				t.Fatalf("called %d times, want 1", n)
			}
		})
	}
	srv := slacktest.NewServer(t)
	c, _ := newClient(t, srv, slacktest.BotToken)
	if _, err := c.PostMessage(t.Context(), slack.Post{Channel: "C404", Text: "hi"}); !surface.IsKind(err, surface.KindNotFound) {
		t.Fatalf("unknown channel: %v", err)
	}
}

func TestSetStatus(t *testing.T) {
	srv := slacktest.NewServer(t)
	srv.AddChannel("D1", "im")
	c, _ := newClient(t, srv, slacktest.BotToken)
	if err := c.SetStatus(t.Context(), "D1", "1.000001", "is thinking…"); err != nil {
		t.Fatal(err)
	}
	if err := c.SetStatus(t.Context(), "D1", "1.000001", ""); err != nil {
		t.Fatal(err)
	}
	want := []slacktest.Status{{Channel: "D1", ThreadTS: "1.000001", Status: "is thinking…"}, {Channel: "D1", ThreadTS: "1.000001"}}
	if got := srv.Statuses(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("statuses = %v, want %v", got, want)
	}
}

func TestTS(t *testing.T) {
	at := time.Unix(1764100000, 123456000)
	if s := slack.FormatTS(at); s != "1764100000.123456" {
		t.Fatalf("FormatTS = %s", s)
	}
	if got := slack.ParseTS("1764100000.123456"); !got.Equal(at) {
		t.Fatalf("ParseTS = %v", got)
	}
	if !slack.ParseTS("x.1").IsZero() {
		t.Fatal("ParseTS of garbage is not zero")
	}
}

// TestHistoryPacing: conversations.history and .replies share one budget
// per workspace client; a call that would have to wait past its deadline
// is refused at once as rate limited, without reaching Slack.
func TestHistoryPacing(t *testing.T) {
	srv := slacktest.NewServer(t)
	srv.AddChannel("C1", "channel")
	parent := srv.Post(slacktest.User{ID: "U1"}, "C1", "", "parent")
	c, err := slack.New(slack.Config{Token: slacktest.BotToken, APIURL: srv.APIURL(), HistoryPerMinute: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Replies(t.Context(), "C1", parent.TS, slack.ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.History(t.Context(), "C1", slack.ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	_, err = c.Replies(ctx, "C1", parent.TS, slack.ReadOptions{})
	var se *surface.Error
	if !errors.As(err, &se) || se.Kind != surface.KindRateLimited || se.RetryAfter < 20*time.Second {
		t.Fatalf("third read in a minute of two: %v, want rate limited for about 30 s", err)
	}
	if n := len(srv.Calls("conversations.replies")) + len(srv.Calls("conversations.history")); n != 2 {
		t.Fatalf("Slack saw %d history calls, want 2", n)
	}
}
