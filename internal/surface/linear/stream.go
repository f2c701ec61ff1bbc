package linear

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/agent"
	linearapi "github.com/weft-dev/weft/internal/linear"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/throttle"
)

// DefaultThoughtInterval is the least time between two progress thoughts
// of one answer, and the wait before the first: Linear has no token
// streaming, so an answer being written shows as an ephemeral thought
// holding its text so far, replaced by the next one every few seconds and
// at last by the response. An answer written faster than this posts no
// thought at all; one written in 30 s posts ten, each one request of the
// workspace's hourly budget (WEFT_LINEAR_THOUGHT_INTERVAL).
const DefaultThoughtInterval = 3 * time.Second

// maxThoughtRunes bounds a progress thought: the newest part of a long
// answer is what shows progress, and its whole text follows as the
// response.
const maxThoughtRunes = 2000

var _ agent.Partials = (*Thoughts)(nil)

// Attachments finds a thread's Linear session. *db.Store implements it.
type Attachments interface {
	LinearAttachment(ctx context.Context, threadID uuid.UUID) (*thread.LinearAttachment, error)
}

// Thoughts posts the progress of answers being written into their Linear
// sessions, as ephemeral thoughts at most one per Interval, skipped (the
// next one carries the text all the same) while the workspace's request
// budget is low. It is the agent's partial answers for Linear (see
// Open); nothing it posts is recorded, and a thought that fails is not
// retried: the answer, sent through the outbox, is what counts.
type Thoughts struct {
	client      *linearapi.Client
	budget      *linearapi.Budget
	attachments Attachments
	interval    time.Duration
	// oneToken is LINEAR_ACCESS_TOKEN's mode: every workspace is the one
	// token's, counted under "" as the sender counts it.
	oneToken bool
	logger   *slog.Logger
	// counts are the outcomes of progress thoughts, for metrics.
	counts thoughtCounts

	mu sync.Mutex
	// live are the answers streaming now, by session, so that the
	// session's response waits for a thought in flight (Settle).
	live map[string]map[*answer]bool
	// settled is when each session's answer was last sent: an answer
	// opened before it posts no more.
	settled map[string]time.Time
}

// thoughtCounts counts progress thoughts by outcome.
type thoughtCounts struct {
	mu                     sync.Mutex
	posted, folded, failed uint64
}

func (c *thoughtCounts) add(n *uint64) {
	c.mu.Lock()
	*n++
	c.mu.Unlock()
}

// snapshot returns the counts: posted, folded, failed.
func (c *thoughtCounts) snapshot() (uint64, uint64, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.posted, c.folded, c.failed
}

// ThoughtsDeps is what Thoughts are made of.
type ThoughtsDeps struct {
	// Client posts the thoughts, best tried once; its Budget is the one
	// whose lowness folds them.
	Client      *linearapi.Client
	Attachments Attachments
	// Interval is DefaultThoughtInterval when 0.
	Interval time.Duration
	// OneToken is LINEAR_ACCESS_TOKEN's mode (see Thoughts.oneToken).
	OneToken bool
	Logger   *slog.Logger
}

// NewThoughts returns Thoughts posting through d.Client.
func NewThoughts(d ThoughtsDeps) *Thoughts {
	return &Thoughts{client: d.Client, budget: d.Client.Budget(), attachments: d.Attachments,
		interval: cmp.Or(d.Interval, DefaultThoughtInterval), oneToken: d.OneToken, logger: d.Logger}
}

// Counts returns how many progress thoughts were posted, folded while the
// budget was low, and failed.
func (t *Thoughts) Counts() (posted, folded, failed uint64) { return t.counts.snapshot() }

// Open starts the progress of one model call's answer on th; Text and
// Close are the agent's PartialAnswer. A thread without an active Linear
// session gets nothing posted (the lookup happens off the turn, on the
// answer's own goroutine, at its first thought).
func (t *Thoughts) Open(ctx context.Context, th *thread.Thread, _ int64) agent.PartialAnswer {
	a := &answer{t: t, ctx: ctx, threadID: th.ID, opened: time.Now()}
	a.Latest = throttle.New(a.run)
	return a
}

// Settle is called before a session's closing activity (its response,
// elicitation or error) is sent: it waits for a progress thought in
// flight on this replica and stops those of every answer opened before
// now, so that no thought lands after the answer and takes its place at
// the end of the session.
func (t *Thoughts) Settle(sessionID string) {
	now := time.Now()
	t.mu.Lock()
	if t.settled == nil {
		t.settled = map[string]time.Time{}
	}
	if len(t.settled) >= maxSettled {
		for id, at := range t.settled {
			if now.Sub(at) > time.Hour {
				delete(t.settled, id)
			}
		}
	}
	t.settled[sessionID] = now
	answers := make([]*answer, 0, len(t.live[sessionID]))
	for a := range t.live[sessionID] {
		answers = append(answers, a)
	}
	t.mu.Unlock()
	for _, a := range answers {
		// Taking the lock waits for the post in flight; the next ones
		// see the session settled.
		a.waitPost()
	}
}

// waitPost waits for the thought being posted, if any: the next ones see
// the session settled.
func (a *answer) waitPost() {
	a.post.Lock()
	defer a.post.Unlock()
	_ = a.opened // nothing to do under the lock: taking it was the wait
}

// maxSettled bounds the sessions Settle remembers; past it, those settled
// more than an hour ago are forgotten (no model call lasts that long).
const maxSettled = 1000

// settledSince reports that the session's answer went out after opened.
func (t *Thoughts) settledSince(sessionID string, opened time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	at, ok := t.settled[sessionID]
	return ok && !at.Before(opened)
}

func (t *Thoughts) join(sessionID string, a *answer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.live == nil {
		t.live = map[string]map[*answer]bool{}
	}
	if t.live[sessionID] == nil {
		t.live[sessionID] = map[*answer]bool{}
	}
	t.live[sessionID][a] = true
}

func (t *Thoughts) leave(sessionID string, a *answer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.live[sessionID], a)
	if len(t.live[sessionID]) == 0 {
		delete(t.live, sessionID)
	}
}

// answer is one model call's progress in its session. Its goroutine,
// started by the first Text, posts the newest text once Interval has
// passed since the call began, and again each Interval while it changes.
type answer struct {
	*throttle.Latest
	t        *Thoughts
	ctx      context.Context
	threadID uuid.UUID
	opened   time.Time

	// post is held while a thought is posted, for Settle to wait on.
	post sync.Mutex
}

func (a *answer) run() {
	att, err := a.t.attachments.LinearAttachment(a.ctx, a.threadID)
	if err != nil {
		if !errors.Is(err, thread.ErrNotFound) && a.ctx.Err() == nil {
			a.t.logger.WarnContext(a.ctx, "linear progress: find session", slog.String("thread_id", a.threadID.String()), slog.Any("error", err))
		}
		return
	}
	if !att.Active || att.SessionID == "" {
		return
	}
	a.t.join(att.SessionID, a)
	defer a.t.leave(att.SessionID, a)
	org := att.WorkspaceID
	if a.t.oneToken {
		org = "" // the sender's key for the one token: its budget is one
	}
	ctx := linearapi.WithOrganization(a.ctx, org)
	next := a.opened.Add(a.t.interval)
	for a.Pause(time.Until(next)) && a.Wait() {
		a.think(ctx, org, att.SessionID)
		next = time.Now().Add(a.t.interval)
	}
}

// think posts the newest text as an ephemeral thought, unless it posted
// it already, the session's answer is on its way, or the workspace's
// budget is low: then the thought is folded into the next one, or into
// the response.
func (a *answer) think(ctx context.Context, org, sessionID string) {
	text, dirty := a.Take()
	if !dirty || strings.TrimSpace(text) == "" {
		return
	}
	a.post.Lock()
	defer a.post.Unlock()
	if a.t.settledSince(sessionID, a.opened) {
		return
	}
	if a.t.budget.Low(org) {
		a.t.counts.add(&a.t.counts.folded)
		a.Again() // still unposted: the next one may go
		return
	}
	_, err := a.t.client.CreateActivity(ctx, sessionID, linearapi.Activity{
		Type: linearapi.ActivityThought, Body: progressBody(text), Ephemeral: true,
	})
	if err != nil {
		a.t.counts.add(&a.t.counts.failed)
		if a.ctx.Err() == nil {
			a.t.logger.WarnContext(ctx, "linear progress: post thought", slog.String("session_id", sessionID), slog.Any("error", err))
		}
		return
	}
	a.t.counts.add(&a.t.counts.posted)
}

// progressBody is the thought showing text: its last maxThoughtRunes
// runes, marked as cut when longer.
func progressBody(text string) string {
	if utf8.RuneCountInString(text) <= maxThoughtRunes {
		return text
	}
	runes := []rune(text)
	return "…" + string(runes[len(runes)-maxThoughtRunes:])
}

// Partials streams answers being written into their Linear sessions as
// progress thoughts; nil with Linear off.
func (a *App) Partials() agent.Partials {
	if a.thoughts == nil {
		return nil
	}
	return a.thoughts
}
