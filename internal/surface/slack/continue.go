package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/weft-dev/weft/internal/continuation"
	slackapi "github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

// slackCommandBudget bounds /weft continue's work. Slack shows the caller
// an error unless the command is answered within 3 s, so the work is done
// in the request, its writes and their jobs in one transaction: it is
// either done and answered, or undone (at worst an orphaned parent message
// when the budget runs out between its post and the commit) and the caller
// told to try again. Nothing is promised that a crash could lose.
const slackCommandBudget = 2500 * time.Millisecond

// slackContinue is /weft continue <ref>: the conversation ref names (on
// whichever platform of c.Refs knows it) continued in a new Slack thread in the command's channel (or SLACK_CONTINUE_CHANNEL_ID), if
// it is of the workspace's organisation.
func slackContinue(c *continuation.Continuer, logger *slog.Logger) CommandHandler {
	return func(ctx context.Context, cmd Command) (string, error) {
		if cmd.Text == "" {
			return "Usage: `/weft continue <conversation>` continues that conversation in a new thread here: name it by " +
				c.Hints() + ".", nil
		}
		ctx, cancel := context.WithTimeout(ctx, slackCommandBudget)
		defer cancel()
		got, err := c.ContinueRef(ctx, cmd.Text, cmd.ChannelID, thread.SlackTenant(cmd.TeamID), cmd.UserID)
		var refused *thread.Error
		switch {
		case errors.Is(err, thread.ErrNotFound):
			// Also what another organisation's session looks like: its
			// existence is not the caller's to know.
			return fmt.Sprintf("I found no %s conversation for %q in this workspace's organisation.", c.Elsewhere(), slackapi.Escape(cmd.Text)), nil
		case errors.As(err, &refused) && errors.Is(err, thread.ErrInvalid):
			return "I cannot continue that conversation here: " + slackapi.Escape(refused.Msg), nil
		case errors.Is(err, slackapi.ErrNotInstalled):
			return "weft is not installed in this workspace: an admin can install it at /oauth/slack/install.", nil
		case surface.IsKind(err, surface.KindForbidden) || surface.IsKind(err, surface.KindNotFound):
			// Slack refused the thread's first post: weft is not in the
			// channel (or may not post there).
			return "I cannot post in this channel: invite me to it (`/invite @weft`), or set SLACK_CONTINUE_CHANNEL_ID.", nil
		case err != nil:
			logger.ErrorContext(ctx, "slack /weft continue failed", slog.String("team_id", cmd.TeamID), slog.Any("error", err))
			return "Sorry, I could not continue that conversation here. Please try again.", nil
		case got.Existing:
			return "That conversation already continues in Slack: " + got.URL, nil
		}
		return "Continuing the conversation here: " + got.URL, nil
	}
}
