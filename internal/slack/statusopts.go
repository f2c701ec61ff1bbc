package slack

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/ttlcache"
)

// StatusOption configures a Status.
type StatusOption func(*Status)

// LoadingMessages are what Slack rotates through under a thread while a
// turn runs (assistant.threads.setStatus's loading_messages): no commas,
// since slack-go sends them joined by one.
var LoadingMessages = []string{"Reading the thread…", "Thinking…", "Writing an answer…"}

// WithLoading has the status show msgs in turn (at most 10; nil shows the
// status alone).
func WithLoading(msgs []string) StatusOption { return func(s *Status) { s.loading = msgs } }

// Goals tells a thread's goal, which titles its assistant thread;
// *db.Store is one.
type Goals interface {
	Thread(ctx context.Context, id uuid.UUID) (*thread.Thread, error)
}

// WithTitles titles a direct message's thread with its weft thread's goal
// (assistant.threads.setTitle) as its first turn starts there: the title
// the person sees in the app's history. Once per thread and process, for
// a day.
func WithTitles(goals Goals) StatusOption {
	return func(s *Status) { s.titles = &titles{goals: goals} }
}

type titles struct {
	goals Goals
	done  ttlcache.Cache[bool]
}

// titleTTL is how long a titled thread is remembered as titled;
// titleBudget bounds setting the title.
const (
	titleTTL    = 24 * time.Hour
	titleBudget = 5 * time.Second
)

// title sets the title of a direct message's thread once. A failure is
// logged at debug level and tried again on the next turn.
func (s *Status) title(ctx context.Context, c *Client, threadID uuid.UUID, t thread.SlackTarget) {
	if s.titles == nil || !strings.HasPrefix(t.ChannelID, "D") {
		return
	}
	key := threadID.String()
	if _, ok := s.titles.done.Get(key, time.Now()); ok {
		return
	}
	th, err := s.titles.goals.Thread(ctx, threadID)
	if err == nil {
		err = c.SetTitle(ctx, t.ChannelID, t.ThreadTS, th.Goal)
	}
	if err != nil {
		s.logger.DebugContext(ctx, "slack thread title", slog.String("thread_id", key), slog.Any("error", err))
		return
	}
	s.titles.done.Put(key, true, time.Now(), titleTTL)
}
