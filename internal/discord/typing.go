package discord

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/thread"
)

// TypingInterval is how often the typing indicator is refreshed while a
// turn runs: Discord shows it for about 10 seconds, or until the bot posts.
const TypingInterval = 8 * time.Second

// TypingDelay is how long a turn runs before the indicator first shows. A
// reply that comes sooner needs no indicator, and every typing call spends
// the bot's 50 requests/s: at a busy moment, an indicator for a turn that
// is already done would only delay the replies queued behind it.
const TypingDelay = 500 * time.Millisecond

// Surfaces finds the Discord thread a thread answers in now, failing with
// thread.ErrNotFound when its answer goes elsewhere. *db.Store implements it.
type Surfaces interface {
	DiscordSurface(ctx context.Context, threadID uuid.UUID) (string, error)
}

// Typist shows "weft is typing…" in a Discord thread while a turn works on
// it. The processor calls Typing as a turn starts and the func it returns
// as the turn ends.
type Typist struct {
	c        *Client
	surfaces Surfaces
	interval time.Duration
	delay    time.Duration
	quiet    func(channelID string) bool
	logger   *slog.Logger
}

// TypistDeps is what a Typist is built from.
type TypistDeps struct {
	Client   *Client
	Surfaces Surfaces
	// Interval is how often the indicator is refreshed (0: TypingInterval).
	Interval time.Duration
	// Quiet, when set, holds the indicator back in a channel while it
	// reports true: an answer is being written there (streamed), which
	// shows weft at work better than "typing".
	Quiet  func(channelID string) bool
	Logger *slog.Logger
}

// NewTypist returns a Typist refreshing every d.Interval once a turn has
// run for TypingDelay.
func NewTypist(d TypistDeps) *Typist {
	c, surfaces, interval, logger := d.Client, d.Surfaces, d.Interval, d.Logger
	delay := TypingDelay
	if interval <= 0 {
		interval = TypingInterval
	}
	if interval < delay {
		delay = interval // a fast refresh (tests) starts as fast
	}
	quiet := d.Quiet
	if quiet == nil {
		quiet = func(string) bool { return false }
	}
	return &Typist{c: c, surfaces: surfaces, interval: interval, delay: delay, quiet: quiet, logger: logger.With("component", "discord_typing")}
}

// Typing starts the indicator in the thread's Discord thread, if its answer
// goes there, and keeps it up until ctx ends or the returned stop is called;
// stop waits for the refresher to exit. Typing is a courtesy: its failures
// are logged at debug level and never affect the turn.
func (t *Typist) Typing(ctx context.Context, threadID uuid.UUID) (stop func()) {
	channelID, err := t.surfaces.DiscordSurface(ctx, threadID)
	if err != nil {
		if !errors.Is(err, thread.ErrNotFound) {
			t.logger.DebugContext(ctx, "discord typing: no surface", slog.String("thread_id", threadID.String()), slog.Any("error", err))
		}
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		wait := time.NewTimer(t.delay)
		defer wait.Stop()
		select {
		case <-ctx.Done():
			return
		case <-wait.C:
		}
		tick := time.NewTicker(t.interval)
		defer tick.Stop()
		for {
			// While the answer shows as it is written, no indicator.
			if !t.quiet(channelID) {
				if err := t.c.Typing(ctx, channelID); err != nil && ctx.Err() == nil {
					t.logger.DebugContext(ctx, "discord typing failed", slog.String("thread_id", threadID.String()), slog.Any("error", err))
				}
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
	}
}
