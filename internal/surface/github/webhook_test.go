package github_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	githubapi "github.com/weft-dev/weft/internal/github"
	"github.com/weft-dev/weft/internal/github/githubtest"
	"github.com/weft-dev/weft/internal/surface"
	surfacegithub "github.com/weft-dev/weft/internal/surface/github"
	"github.com/weft-dev/weft/internal/thread"
)

// recorder keeps what the door records.
type recorder struct {
	mu     sync.Mutex
	events []surface.Event
}

func (r *recorder) Record(_ context.Context, ev surface.Event) (surface.Recorded, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
	return surface.Recorded{}, nil
}

func (r *recorder) all() []surface.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]surface.Event(nil), r.events...)
}

type rig struct {
	gh   *githubtest.Server
	rec  *recorder
	door http.Handler
	inst int64
	bob  githubtest.User
}

func newRig(t *testing.T) *rig {
	t.Helper()
	gh := githubtest.NewServer(t)
	c, err := githubapi.New(githubapi.Deps{AppID: githubtest.AppID, PrivateKey: gh.PrivateKeyPEM(), WebhookSecret: []byte(githubtest.WebhookSecret),
		Slug: githubtest.AppSlug, APIURL: gh.URL()})
	require.NoError(t, err)
	rec := &recorder{}
	r := &rig{gh: gh, rec: rec, bob: githubtest.User{ID: 501, Login: "bob", Type: "User"},
		door: surfacegithub.Door{Client: c, Recorder: rec, Logger: slog.New(slog.DiscardHandler)}}
	r.inst = gh.Install(githubtest.User{ID: 77, Login: "acme", Type: "Organization"}, "acme/api")
	return r
}

func (r *rig) send(t *testing.T, event string, payload any) int {
	t.Helper()
	body, err := json.Marshal(payload)
	require.NoError(t, err)
	return r.serve(r.gh.Sign(event, body).Request("/webhooks/github"))
}

func (r *rig) serve(req *http.Request) int {
	w := httptest.NewRecorder()
	r.door.ServeHTTP(w, req)
	return w.Code
}

// TestDoorMapsDeliveries: each kind of delivery becomes the event the
// seam records.
func TestDoorMapsDeliveries(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	n := r.gh.AddIssue("acme/api", r.bob, "Flaky test", "It fails on Tuesdays", false)
	pr := r.gh.AddIssue("acme/api", r.bob, "Fix it", "", true)
	mention := r.gh.AddComment("acme/api", n, r.bob, "@weft-test why?")
	plain := r.gh.AddComment("acme/api", n, r.bob, "no idea")
	own := r.gh.AddComment("acme/api", n, githubtest.Bot, "@weft-test said so")
	review := r.gh.AddReviewComment("acme/api", pr, r.bob, "main.go", "@weft-test is this right?", 0)
	reply := r.gh.AddReviewComment("acme/api", pr, r.bob, "main.go", "@weft-test and this?", review.ID)
	bot := githubtest.Bot

	tests := []struct {
		name    string
		event   string
		payload any
		check   func(t *testing.T, ev surface.Event)
	}{
		{"mention opens the issue's conversation", githubapi.EventIssueComment, r.gh.CommentPayload(r.inst, "created", "acme/api", n, mention),
			func(t *testing.T, ev surface.Event) {
				require.Equal(t, surface.Open, ev.Kind)
				att := ev.Conversation.(*thread.GitHubAttachment)
				require.Equal(t, n, att.Number)
				require.Zero(t, att.ReviewRoot)
				require.Equal(t, r.inst, att.InstallationID)
				require.True(t, ev.Answer)
				require.Equal(t, thread.GitHubCommentID(false, mention.ID), ev.Prompt.ExternalID)
				require.NotNil(t, ev.Ack)
				require.Contains(t, string(ev.Ack.Body), surfacegithub.AckAction)
				require.Equal(t, att.Target(), ev.Ack.Target)
			}},
		{"a comment without a mention is kept, not answered", githubapi.EventIssueComment, r.gh.CommentPayload(r.inst, "created", "acme/api", n, plain),
			func(t *testing.T, ev surface.Event) {
				require.Equal(t, surface.Message, ev.Kind)
				require.False(t, ev.Answer)
				require.False(t, ev.Opens)
				require.Equal(t, thread.StitchGitHubMessage, ev.Messages[0].Type)
			}},
		{"edited", githubapi.EventIssueComment, r.gh.CommentPayload(r.inst, "edited", "acme/api", n, plain),
			func(t *testing.T, ev surface.Event) {
				require.Equal(t, surface.Edit, ev.Kind)
				require.Equal(t, thread.GitHubCommentID(false, plain.ID), ev.Messages[0].ExternalID)
			}},
		{"deleted", githubapi.EventIssueComment, r.gh.CommentPayload(r.inst, "deleted", "acme/api", n, plain),
			func(t *testing.T, ev surface.Event) { require.Equal(t, surface.Delete, ev.Kind) }},
		{"the app's own comment is ignored", githubapi.EventIssueComment, r.gh.CommentPayload(r.inst, "created", "acme/api", n, own),
			func(t *testing.T, ev surface.Event) { require.Equal(t, surface.Ignore, ev.Kind) }},
		{"a review reply is its thread's conversation", githubapi.EventReviewComment, r.gh.ReviewCommentPayload(r.inst, "created", "acme/api", pr, reply),
			func(t *testing.T, ev surface.Event) {
				require.Equal(t, surface.Open, ev.Kind)
				att := ev.Conversation.(*thread.GitHubAttachment)
				require.Equal(t, review.ID, att.ReviewRoot)
				require.True(t, att.PullRequest)
				require.Equal(t, thread.GitHubCommentID(true, reply.ID), ev.Prompt.ExternalID)
			}},
		{"assigned to the app is a delegation", githubapi.EventIssues, r.gh.IssuesPayload(r.inst, "assigned", "acme/api", n, r.bob, &bot),
			func(t *testing.T, ev surface.Event) {
				require.Equal(t, surface.Open, ev.Kind)
				require.True(t, ev.Answer)
				require.Contains(t, ev.Prompt.Content, "It fails on Tuesdays")
				require.NotNil(t, ev.Ack)
			}},
		{"assigned to someone else is ignored", githubapi.EventIssues, r.gh.IssuesPayload(r.inst, "assigned", "acme/api", n, r.bob, &r.bob),
			func(t *testing.T, ev surface.Event) { require.Equal(t, surface.Ignore, ev.Kind) }},
		{"uninstall revokes the account", githubapi.EventInstallation, r.gh.InstallationPayload(r.inst, "deleted", r.bob),
			func(t *testing.T, ev surface.Event) {
				require.Equal(t, surface.Revoke, ev.Kind)
				require.Equal(t, thread.GitHubTenant(77), ev.Tenant)
			}},
		{"an event weft does not handle is ignored", "star", map[string]any{"action": "created"},
			func(t *testing.T, ev surface.Event) { require.Equal(t, surface.Ignore, ev.Kind) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(r.rec.all())
			require.Equal(t, http.StatusOK, r.send(t, tt.event, tt.payload))
			evs := r.rec.all()
			require.Len(t, evs, before+1)
			ev := evs[before]
			require.Equal(t, thread.PlatformGitHub, ev.Inbound.Platform)
			require.NotEmpty(t, ev.Inbound.DeliveryID)
			tt.check(t, ev)
		})
	}
}

// TestDoorRefuses: forged, unsigned, truncated, oversized and headless
// deliveries get a 4xx, and nothing is recorded.
func TestDoorRefuses(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	n := r.gh.AddIssue("acme/api", r.bob, "t", "", false)
	body, err := json.Marshal(r.gh.CommentPayload(r.inst, "created", "acme/api", n, r.gh.AddComment("acme/api", n, r.bob, "@weft-test hi")))
	require.NoError(t, err)
	good := r.gh.Sign(githubapi.EventIssueComment, body)
	big := bytes.Repeat([]byte("x"), githubapi.MaxPayload+1)

	tests := []struct {
		name   string
		req    func() *http.Request
		status int
	}{
		{"forged", func() *http.Request {
			return githubtest.SignWith("not-the-secret", good.ID, good.Event, body).Request("/webhooks/github")
		}, http.StatusUnauthorized},
		{"unsigned", func() *http.Request {
			req := good.Request("/webhooks/github")
			req.Header.Del("X-Hub-Signature-256")
			return req
		}, http.StatusUnauthorized},
		{"truncated", func() *http.Request {
			d := good
			d.Body = body[:len(body)/2]
			return d.Request("/webhooks/github")
		}, http.StatusUnauthorized},
		{"signed but truncated", func() *http.Request {
			return r.gh.Sign(githubapi.EventIssueComment, body[:len(body)/2]).Request("/webhooks/github")
		}, http.StatusBadRequest},
		{"no delivery id", func() *http.Request {
			req := good.Request("/webhooks/github")
			req.Header.Del("X-GitHub-Delivery")
			return req
		}, http.StatusBadRequest},
		{"oversized", func() *http.Request {
			return r.gh.Sign(githubapi.EventIssueComment, big).Request("/webhooks/github")
		}, http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.status, r.serve(tt.req()))
		})
	}
	require.Empty(t, r.rec.all())

	// Genuine, but larger than weft parses: acknowledged, recorded as
	// ignored under its headers' event and delivery id.
	large := r.gh.Sign(githubapi.EventIssueComment, append(bytes.Repeat([]byte(" "), githubapi.MaxParsed), body...))
	require.Equal(t, http.StatusOK, r.serve(large.Request("/webhooks/github")))
	got := r.rec.all()
	require.Len(t, got, 1)
	require.Equal(t, surface.Event{Kind: surface.Ignore, Inbound: thread.Inbound{Platform: thread.PlatformGitHub,
		DeliveryID: large.ID, EventType: githubapi.EventIssueComment}}, got[0])
}
