package linear_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/fakekit"
	"github.com/weft-dev/weft/internal/linear"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

// workspaces is an in-memory linear.Workspaces.
type workspaces map[uuid.UUID]*thread.LinearAttachment

func (w workspaces) LinearAttachment(_ context.Context, id uuid.UUID) (*thread.LinearAttachment, error) {
	if a, ok := w[id]; ok {
		return a, nil
	}
	return nil, thread.ErrNotFound
}

// orgTokens hands out the fake's token for its organization only, and
// records which organizations were asked for.
type orgTokens struct {
	mu   sync.Mutex
	orgs []string
}

func (o *orgTokens) Token(_ context.Context, org string) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.orgs = append(o.orgs, org)
	if org == lineartest.OrganizationID {
		return lineartest.AccessToken, nil
	}
	return "unknown-workspace-token", nil
}

type senderBundle struct {
	srv      *lineartest.Server
	sender   *linear.Sender
	tokens   *orgTokens
	threadID uuid.UUID
}

func setupSender(t *testing.T, retry ...linear.Retry) *senderBundle {
	t.Helper()
	srv := lineartest.NewServer(t)
	srv.AddSession(testSession, "")
	tokens := &orgTokens{}
	r := linear.Retry{MaxAttempts: 3, Backoff: time.Millisecond, MaxWait: 5 * time.Second}
	if len(retry) > 0 {
		r = retry[0]
	}
	client := linear.NewClient(linear.ClientDeps{Endpoint: srv.URL(), Tokens: tokens, Retry: r})
	threadID := thread.NewID()
	ws := workspaces{threadID: {ThreadID: threadID, SessionID: testSession, WorkspaceID: lineartest.OrganizationID}}
	return &senderBundle{srv: srv, sender: linear.NewSender(client, ws), tokens: tokens, threadID: threadID}
}

func (b *senderBundle) row(t *testing.T, kind thread.OutboxKind, body thread.OutboxBody, stitch uuid.UUID) thread.Outbox {
	t.Helper()
	raw, err := json.Marshal(body)
	require.NoError(t, err)
	return thread.Outbox{ID: thread.NewID(), ThreadID: b.threadID, StitchID: stitch, Platform: thread.PlatformLinear,
		Target: testSession, Kind: kind, Body: raw}
}

func TestSenderKinds(t *testing.T) {
	t.Parallel()
	stitch := thread.NewID()
	tests := []struct {
		name   string
		kind   thread.OutboxKind
		body   thread.OutboxBody
		stitch uuid.UUID
		want   lineartest.Activity
	}{
		{"AckThoughtIsEphemeral", thread.OutboxThought, thread.OutboxBody{Text: "Looking into it…"}, uuid.Nil,
			lineartest.Activity{Type: "thought", Body: "Looking into it…", Ephemeral: true}},
		{"StitchThoughtIsKept", thread.OutboxThought, thread.OutboxBody{Text: "The redirect drops the query"}, stitch,
			lineartest.Activity{Type: "thought", Body: "The redirect drops the query"}},
		{"NoticeIsAKeptThought", thread.OutboxNotice, thread.OutboxBody{Text: "The model is busy, retrying."}, stitch,
			lineartest.Activity{Type: "thought", Body: "The model is busy, retrying."}},
		{"RunningActionIsEphemeral", thread.OutboxAction, thread.OutboxBody{Action: "search", Parameter: "login redirect"}, stitch,
			lineartest.Activity{Type: "action", Action: "search", Parameter: "login redirect", Ephemeral: true}},
		{"FinishedAction", thread.OutboxAction, thread.OutboxBody{Action: "search", Parameter: "login redirect", Result: "3 hits"}, stitch,
			lineartest.Activity{Type: "action", Action: "search", Parameter: "login redirect", Result: "3 hits"}},
		{"Elicitation", thread.OutboxElicitation, thread.OutboxBody{Text: "Which branch?", Options: []string{"main", "dev"}}, stitch,
			lineartest.Activity{Type: "elicitation", Body: "Which branch?", Signal: "select", Options: []string{"main", "dev"}}},
		{"Response", thread.OutboxResponse, thread.OutboxBody{Text: "Fixed in #12"}, stitch,
			lineartest.Activity{Type: "response", Body: "Fixed in #12"}},
		{"Error", thread.OutboxError, thread.OutboxBody{Text: "The build tool failed"}, stitch,
			lineartest.Activity{Type: "error", Body: "The build tool failed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupSender(t)
			o := b.row(t, tt.kind, tt.body, tt.stitch)
			ext, err := b.sender.Send(t.Context(), o)
			require.NoError(t, err)
			require.Equal(t, linear.ActivityID(o.ID), ext)
			got := b.srv.Activities(testSession)
			require.Len(t, got, 1)
			tt.want.ID, tt.want.SessionID, tt.want.CreatedAt = ext, testSession, got[0].CreatedAt
			require.Equal(t, tt.want, got[0])
			require.Equal(t, []string{lineartest.OrganizationID}, b.tokens.orgs, "the thread's workspace picks the token")
		})
	}
}

func TestActivityID(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 1000 {
		id := thread.NewID()
		got, err := uuid.Parse(linear.ActivityID(id))
		require.NoError(t, err)
		require.Equal(t, uuid.Version(4), got.Version())
		require.Equal(t, uuid.RFC4122, got.Variant())
		require.Equal(t, linear.ActivityID(id), linear.ActivityID(id))
		require.False(t, seen[got.String()])
		seen[got.String()] = true
	}
}

func TestSenderSessionUpdate(t *testing.T) {
	t.Parallel()
	b := setupSender(t)
	o := b.row(t, thread.OutboxSessionUpdate, thread.OutboxBody{ExternalURL: "https://weft.example/t/1", ExternalURLLabel: "weft"}, uuid.Nil)
	ext, err := b.sender.Send(t.Context(), o)
	require.NoError(t, err)
	require.Equal(t, testSession, ext)
	require.Equal(t, []lineartest.SessionUpdate{{SessionID: testSession,
		ExternalURLs: []lineartest.ExternalURL{{Label: "weft", URL: "https://weft.example/t/1"}}}}, b.srv.SessionUpdates())
}

func TestSenderRetriesPostOnce(t *testing.T) {
	t.Parallel()

	t.Run("LostResponseInsideOneSend", func(t *testing.T) {
		t.Parallel()
		b := setupSender(t)
		b.srv.Fail("agentActivityCreate", 1, fakekit.Fail(http.StatusBadGateway).AfterApplying())
		o := b.row(t, thread.OutboxResponse, thread.OutboxBody{Text: "Done"}, uuid.Nil)
		ext, err := b.sender.Send(t.Context(), o)
		require.NoError(t, err, "the retry's conflict means the first attempt got through")
		require.Equal(t, linear.ActivityID(o.ID), ext)
		require.Len(t, b.srv.Activities(testSession), 1)
	})

	t.Run("LostResponseAcrossSends", func(t *testing.T) {
		t.Parallel()
		// One attempt per Send: the processor's retry is what sends again.
		b := setupSender(t, linear.Retry{MaxAttempts: 1, Backoff: time.Millisecond, MaxWait: time.Second})
		b.srv.Fail("agentActivityCreate", 1, fakekit.Fail(http.StatusBadGateway).AfterApplying())
		o := b.row(t, thread.OutboxResponse, thread.OutboxBody{Text: "Done"}, uuid.Nil)
		_, err := b.sender.Send(t.Context(), o)
		require.Error(t, err)
		require.NotErrorIs(t, err, thread.ErrInvalid, "a lost answer is worth retrying")
		ext, err := b.sender.Send(t.Context(), o)
		require.NoError(t, err)
		require.Equal(t, linear.ActivityID(o.ID), ext)
		require.Len(t, b.srv.Activities(testSession), 1)
	})
}

func TestSenderErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		prepare   func(b *senderBundle, o *thread.Outbox)
		invalid   bool
		retryable bool
	}{
		{"RateLimitedIsRetried", func(b *senderBundle, _ *thread.Outbox) {
			b.srv.Fail("agentActivityCreate", 1, fakekit.RateLimited(time.Minute))
		}, false, true},
		{"ServerErrorIsRetried", func(b *senderBundle, _ *thread.Outbox) {
			b.srv.Fail("agentActivityCreate", 1, fakekit.Fail(http.StatusServiceUnavailable))
		}, false, true},
		{"UnknownSessionGivesUp", func(_ *senderBundle, o *thread.Outbox) { o.Target = uuid.NewString() }, true, false},
		{"AuthFailureGivesUp", func(b *senderBundle, _ *thread.Outbox) { b.srv.RevokeToken(lineartest.AccessToken) }, true, false},
		{"NoAttachmentGivesUp", func(_ *senderBundle, o *thread.Outbox) { o.ThreadID = thread.NewID() }, true, false},
		{"DiscordKindGivesUp", func(_ *senderBundle, o *thread.Outbox) { o.Kind = thread.OutboxMessage }, true, false},
		{"BadBodyGivesUp", func(_ *senderBundle, o *thread.Outbox) { o.Body = []byte(`[`) }, true, false},
		{"EmptyTextGivesUp", func(_ *senderBundle, o *thread.Outbox) { o.Body = []byte(`{}`) }, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupSender(t, linear.Retry{MaxAttempts: 1, Backoff: time.Millisecond, MaxWait: time.Second})
			o := b.row(t, thread.OutboxResponse, thread.OutboxBody{Text: "Done"}, uuid.Nil)
			tt.prepare(b, &o)
			_, err := b.sender.Send(t.Context(), o)
			require.Error(t, err)
			require.Equal(t, tt.invalid, errors.Is(err, thread.ErrInvalid), "error: %v", err)
			if tt.retryable {
				var e *surface.Error
				require.ErrorAs(t, err, &e)
				require.True(t, e.Retryable())
			}
			require.Empty(t, b.srv.Activities(testSession))
		})
	}
}

func TestSenderStartIssue(t *testing.T) {
	t.Parallel()
	b := setupSender(t)
	b.srv.AddTeam(lineartest.Team{ID: "team-1", Key: "ENG", Name: "Engineering", States: []lineartest.State{
		{ID: "backlog", Name: "Backlog", Type: "backlog", Position: 0},
		{ID: "review", Name: "In Review", Type: "started", Position: 2},
		{ID: "progress", Name: "In Progress", Type: "started", Position: 1},
	}})
	b.srv.AddIssue(lineartest.Issue{ID: "issue-1", Identifier: "ENG-1", Title: "t", TeamID: "team-1", StateID: "backlog"})
	moved, err := b.sender.StartIssue(t.Context(), lineartest.OrganizationID, "issue-1")
	require.NoError(t, err)
	require.True(t, moved)
	require.Equal(t, []lineartest.IssueUpdate{{IssueID: "issue-1", StateID: "progress"}}, b.srv.IssueUpdates())
	require.Contains(t, b.tokens.orgs, lineartest.OrganizationID)
}

// countingWorkspaces is a linear.Workspaces that counts lookups per thread
// and finds only the attachments it has been given so far.
type countingWorkspaces struct {
	mu    sync.Mutex
	atts  map[uuid.UUID]*thread.LinearAttachment
	calls map[uuid.UUID]int
}

func newCountingWorkspaces() *countingWorkspaces {
	return &countingWorkspaces{atts: map[uuid.UUID]*thread.LinearAttachment{}, calls: map[uuid.UUID]int{}}
}

func (w *countingWorkspaces) add(threadID uuid.UUID, session string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.atts[threadID] = &thread.LinearAttachment{ThreadID: threadID, SessionID: session, WorkspaceID: lineartest.OrganizationID}
}

func (w *countingWorkspaces) count(threadID uuid.UUID) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.calls[threadID]
}

func (w *countingWorkspaces) LinearAttachment(_ context.Context, id uuid.UUID) (*thread.LinearAttachment, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls[id]++
	if a, ok := w.atts[id]; ok {
		cp := *a
		return &cp, nil
	}
	return nil, fmt.Errorf("linear attachment: %w", thread.ErrNotFound)
}

func TestSenderCachesWorkspace(t *testing.T) {
	t.Parallel()
	row := func(threadID uuid.UUID, session, text string) thread.Outbox {
		return thread.Outbox{ID: thread.NewID(), ThreadID: threadID, StitchID: thread.NewID(), Platform: thread.PlatformLinear,
			Target: session, Kind: thread.OutboxResponse, Body: thread.OutboxBody{Text: text}.JSON()}
	}
	setup := func(t *testing.T) (*lineartest.Server, *orgTokens, *countingWorkspaces, *linear.Sender) {
		t.Helper()
		srv := lineartest.NewServer(t)
		tokens := &orgTokens{}
		client := linear.NewClient(linear.ClientDeps{Endpoint: srv.URL(), Tokens: tokens, Retry: linear.Retry{MaxAttempts: 1, Backoff: time.Millisecond, MaxWait: time.Second}})
		ws := newCountingWorkspaces()
		return srv, tokens, ws, linear.NewSender(client, ws)
	}

	t.Run("OneLookupPerThread", func(t *testing.T) {
		t.Parallel()
		srv, tokens, ws, sender := setup(t)
		otherSession := uuid.NewString()
		srv.AddSession(testSession, "")
		srv.AddSession(otherSession, "")
		first, second := thread.NewID(), thread.NewID()
		ws.add(first, testSession)
		ws.add(second, otherSession)

		rows := []thread.Outbox{
			row(first, testSession, "one"),
			row(second, otherSession, "elsewhere"),
			row(first, testSession, "two"),
		}
		for _, o := range rows {
			ext, err := sender.Send(t.Context(), o)
			require.NoError(t, err)
			require.Equal(t, linear.ActivityID(o.ID), ext)
		}

		require.Equal(t, 1, ws.count(first), "the first thread's workspace is looked up once")
		require.Equal(t, 1, ws.count(second), "the second thread's workspace is looked up once")

		got := srv.Activities(testSession)
		require.Len(t, got, 2)
		require.Equal(t, []string{linear.ActivityID(rows[0].ID), linear.ActivityID(rows[2].ID)}, []string{got[0].ID, got[1].ID})
		require.Equal(t, []string{"one", "two"}, []string{got[0].Body, got[1].Body})
		other := srv.Activities(otherSession)
		require.Len(t, other, 1)
		require.Equal(t, linear.ActivityID(rows[1].ID), other[0].ID)
		require.Equal(t, "elsewhere", other[0].Body)
		for _, org := range tokens.orgs {
			require.Equal(t, lineartest.OrganizationID, org, "every send uses the cached workspace's token")
		}
	})

	t.Run("OneTokenForEveryWorkspaceLooksNothingUp", func(t *testing.T) {
		t.Parallel()
		srv := lineartest.NewServer(t)
		srv.AddSession(testSession, "")
		sender := linear.NewSender(linear.NewClient(linear.ClientDeps{Endpoint: srv.URL(), Tokens: linear.StaticToken(lineartest.AccessToken)}), nil)
		o := row(thread.NewID(), testSession, "no lookup")
		ext, err := sender.Send(t.Context(), o)
		require.NoError(t, err)
		require.Equal(t, linear.ActivityID(o.ID), ext)
		require.Len(t, srv.Activities(testSession), 1)
	})

	t.Run("NotFoundIsNotCached", func(t *testing.T) {
		t.Parallel()
		srv, _, ws, sender := setup(t)
		srv.AddSession(testSession, "")
		id := thread.NewID()

		_, err := sender.Send(t.Context(), row(id, testSession, "too early"))
		require.ErrorIs(t, err, thread.ErrInvalid, "a thread without a session is not worth retrying as is")
		require.Equal(t, 1, ws.count(id))
		require.Empty(t, srv.Activities(testSession))

		// The attachment appears (its transaction committed): the next send
		// looks again and finds it.
		ws.add(id, testSession)
		o := row(id, testSession, "now")
		ext, err := sender.Send(t.Context(), o)
		require.NoError(t, err)
		require.Equal(t, linear.ActivityID(o.ID), ext)
		require.Equal(t, 2, ws.count(id), "the failed lookup was not cached")

		_, err = sender.Send(t.Context(), row(id, testSession, "again"))
		require.NoError(t, err)
		require.Equal(t, 2, ws.count(id), "the successful lookup was")
		require.Len(t, srv.Activities(testSession), 2)
	})
}
