package slack

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/thread"
)

// Thinking is the status shown under a thread while a turn works on it.
const Thinking = "is thinking…"

// statusRefresh re-sets the status before Slack drops it (after two
// minutes without a post).
const statusRefresh = 90 * time.Second

// Surfaces finds where a thread answers now. *db.Store implements it.
type Surfaces interface {
	InputSurface(ctx context.Context, threadID uuid.UUID) (thread.Platform, string, error)
}

// Status shows "is thinking…" (assistant.threads.setStatus) under the Slack
// thread a turn answers in, while it runs. The processor calls Thinking as
// a turn starts and the func it returns as the turn ends.
type Status struct {
	ws       *Workspaces
	surfaces Surfaces
	logger   *slog.Logger
	// loading are the messages Slack rotates through under the status
	// (WithLoading); titles names assistant threads (WithTitles).
	loading []string
	titles  *titles
}

// NewStatus returns a Status setting statuses with each workspace's token.
func NewStatus(ws *Workspaces, surfaces Surfaces, logger *slog.Logger, opts ...StatusOption) *Status {
	s := &Status{ws: ws, surfaces: surfaces, logger: logger.With("component", "slack_status")}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Thinking sets the status if the thread answers in Slack, refreshes it
// until stop, which clears it. The status is a courtesy: its failures are
// logged at debug level and never affect the turn.
func (s *Status) Thinking(ctx context.Context, threadID uuid.UUID) (stop func()) {
	p, target, err := s.surfaces.InputSurface(ctx, threadID)
	if err != nil || p != thread.PlatformSlack {
		return func() {}
	}
	t, err := thread.ParseSlackTarget(target)
	if err != nil {
		return func() {}
	}
	c, err := s.ws.Client(ctx, t.TeamID)
	if err != nil {
		s.logger.DebugContext(ctx, "slack status", slog.String("thread_id", threadID.String()), slog.Any("error", err))
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	set := func(ctx context.Context, status string) {
		var loading []string
		if status != "" {
			loading = s.loading
		}
		if err := c.SetStatusLoading(ctx, t.ChannelID, t.ThreadTS, status, loading); err != nil && ctx.Err() == nil {
			s.logger.DebugContext(ctx, "slack status", slog.String("thread_id", threadID.String()), slog.Any("error", err))
		}
	}
	go func() {
		defer close(done)
		tick := time.NewTicker(statusRefresh)
		defer tick.Stop()
		for first := true; ; first = false {
			set(ctx, Thinking)
			if first {
				// After the status, so that the person sees weft at work
				// at once; never before the turn, which it would delay.
				// A turn that ends meanwhile waits for it (within
				// titleBudget) rather than leave the thread untitled.
				tctx, tcancel := context.WithTimeout(context.WithoutCancel(ctx), titleBudget)
				s.title(tctx, c, threadID, t)
				tcancel()
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		cancel()
		<-done
		// A posted answer clears the status too; clearing covers a turn
		// that ends without one.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		set(cctx, "")
	}
}
