package slack

import (
	"context"
	"errors"
	"log/slog"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/thread"
)

// SlackThreads finds the thread attached to a Slack thread; *db.Store
// implements it.
type SlackThreads interface {
	ThreadBySlackThread(ctx context.Context, teamID, channelID, threadTS string) (*thread.Thread, error)
}

// Aborter stops a thread as the API's abort does; *ingest.Ingester
// implements it.
type Aborter interface {
	Abort(ctx context.Context, threadID uuid.UUID, text string) (bool, error)
}

// slackStopUsage answers /weft stop without a thread's link: a slash
// command carries no thread, so the caller names it.
const slackStopUsage = "Usage: `/weft stop <link>` stops my work in a thread: use *Copy link* on any of its messages."

// slackStop is /weft stop <link>: the thread of the command's workspace
// that the link names is stopped, its stop confirmed in the thread.
func slackStop(threads SlackThreads, ab Aborter, logger *slog.Logger) CommandHandler {
	return func(ctx context.Context, cmd Command) (string, error) {
		channel, ts, ok := threadLink(cmd.Text)
		if !ok {
			return slackStopUsage, nil
		}
		ctx, cancel := context.WithTimeout(ctx, slackCommandBudget)
		defer cancel()
		th, err := threads.ThreadBySlackThread(ctx, cmd.TeamID, channel, ts)
		if errors.Is(err, thread.ErrNotFound) {
			return "I have no conversation in that thread.", nil
		}
		var aborted bool
		if err == nil {
			aborted, err = ab.Abort(ctx, th.ID, "Stopped from Slack by "+cmd.UserName+".")
		}
		if err != nil {
			logger.ErrorContext(ctx, "slack /weft stop failed", slog.String("team_id", cmd.TeamID), slog.Any("error", err))
			return "Sorry, I could not stop that conversation. Please try again.", nil
		}
		if !aborted {
			return "That conversation had already finished: there was nothing to stop.", nil
		}
		logger.InfoContext(ctx, "slack thread stopped", slog.String("thread_id", th.ID.String()), slog.String("user_id", cmd.UserID))
		return "Stopped. I will not continue that conversation.", nil
	}
}
