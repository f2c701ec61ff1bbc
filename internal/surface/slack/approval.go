package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/google/uuid"

	slackapi "github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

// DecideThrough makes the Approve and Deny buttons under requests for
// approval decide through ap (surface.Approving). Call it before Listen.
func (a *App) DecideThrough(ap surface.Approvals) { a.approvals = ap }

var _ surface.Approving = (*App)(nil)

// ShowDecided rewrites weft's message of a request decided elsewhere: it
// says who decided, and loses its buttons (surface.ShowingDecisions).
func (a *App) ShowDecided(ctx context.Context, post thread.Outbox, ap *thread.Approval) error {
	if !a.On() || post.ExternalID == "" || !a.interactive() {
		return nil // without buttons, nothing to take away
	}
	body, err := surface.Body(thread.PlatformSlack, post)
	if err != nil {
		return err
	}
	target, err := thread.ParseSlackTarget(post.Target)
	if err != nil {
		return err
	}
	body.Options = nil
	parts := slackapi.Split(slackapi.Render(post.Kind, body), slackapi.TextLimit)
	if len(parts) != 1 {
		return nil // the buttons are on a later part, whose ts is not kept
	}
	c, err := a.ws.Client(ctx, target.TeamID)
	if err != nil {
		return err
	}
	return c.UpdateDecided(ctx, target.ChannelID, post.ExternalID, parts[0], DecidedLine(ap))
}

var _ surface.ShowingDecisions = (*App)(nil)

// approvalClient is what deciding a request needs of a workspace's
// client. *slackapi.Client implements it.
type approvalClient interface {
	UpdateDecided(ctx context.Context, channel, ts, text, decided string) error
	PostEphemeral(ctx context.Context, channel, threadTS, user, text string) error
}

// approvalDeps are what the approval buttons' handler works with.
type approvalDeps struct {
	Approvals surface.Approvals
	// Client is the workspace's client.
	Client func(ctx context.Context, teamID string) (approvalClient, error)
	// Names finds a person's name; nil keeps the payload's.
	Names  slackapi.Names
	Logger *slog.Logger
}

// approvalAction decides the request an Approve or Deny button
// (slackapi.ApprovalActionPrefix) is for, as the person who clicked, and
// only once it is stored lets the click be acknowledged: the message is
// then updated to say who decided, without its buttons. A request decided
// before is told, to the person who clicked alone, who decided, and
// nothing changes; a click Slack delivers again (the same person's own
// decision, found decided) changes nothing and says nothing. A person
// WEFT_APPROVERS does not name, or an unknown request, is told so. An
// error means the decision was not stored: the click is not acknowledged,
// for Slack to send it again.
func approvalAction(d approvalDeps) ActionHandler {
	return func(ctx context.Context, act Action) error {
		rawID, decision, ok := slackapi.ParseApprovalActionID(act.ActionID)
		id, err := uuid.Parse(rawID)
		if !ok || err != nil || d.Approvals == nil {
			return d.tell(ctx, act, "I cannot find this request for approval.")
		}
		name := act.UserName
		if d.Names != nil {
			if n := d.Names.UserName(ctx, act.TeamID, act.UserID); n != "" && (n != act.UserID || name == "") {
				name = n
			}
		}
		if name == "" {
			name = act.UserID
		}
		a, err := d.Approvals.DecideOnPlatform(ctx, surface.ApprovalDecision{ApprovalID: id, Decision: thread.Decision(decision),
			User: thread.Author{ID: act.UserID, Name: name}, Platform: thread.PlatformSlack})
		var decided *thread.DecidedError
		switch {
		case errors.As(err, &decided):
			if redelivered(decided.Approval, act, decision) {
				return nil
			}
			return d.tell(ctx, act, "This request was "+decided.Error()+".")
		case errors.Is(err, thread.ErrNotApprover):
			return d.tell(ctx, act, "You are not among the people who may approve tool calls here.")
		case errors.Is(err, thread.ErrNotFound):
			return d.tell(ctx, act, "I cannot find this request for approval.")
		case err != nil:
			return err
		}
		d.Logger.InfoContext(ctx, "approval decided in slack", slog.String("approval_id", a.ID.String()),
			slog.String("decision", decision), slog.String("user_id", act.UserID))
		d.update(ctx, act, a)
		return nil
	}
}

// redelivered reports whether a request found decided was decided by this
// very click, delivered again: by the same person on Slack, the same way.
func redelivered(a *thread.Approval, act Action, decision string) bool {
	if a == nil || a.DecidedVia != string(thread.PlatformSlack) || a.DecidedBy != act.UserID {
		return false
	}
	return (decision == slackapi.ApprovalApprove && a.Status == thread.ApprovalApproved) ||
		(decision == slackapi.ApprovalDeny && a.Status == thread.ApprovalDenied)
}

// DecidedLine says in mrkdwn who decided a request, and how.
func DecidedLine(a *thread.Approval) string {
	mark := ":white_check_mark: *Approved*"
	if a.Status == thread.ApprovalDenied {
		mark = ":no_entry_sign: *Denied*"
	}
	line := fmt.Sprintf("%s by %s", mark, slackapi.Escape(a.Decider()))
	if a.DecidedVia != "" && a.DecidedVia != string(thread.PlatformSlack) {
		line += " (" + slackapi.Escape(a.DecidedVia) + ")"
	}
	return line
}

// update rewrites the message the click was on: its text and who decided,
// without buttons. The decision is stored: a failure here is logged, not
// returned, so the click is still acknowledged.
func (d approvalDeps) update(ctx context.Context, act Action, a *thread.Approval) {
	if act.ChannelID == "" || act.MessageTS == "" {
		return
	}
	c, err := d.Client(ctx, act.TeamID)
	if err == nil {
		err = c.UpdateDecided(ctx, act.ChannelID, act.MessageTS, act.MessageText, DecidedLine(a))
	}
	if err != nil {
		d.Logger.WarnContext(ctx, "slack approval message not updated", slog.String("approval_id", a.ID.String()), slog.Any("error", err))
	}
}

// tell shows text to the person who clicked alone. Nothing was written: a
// failure is logged, and the click still acknowledged.
func (d approvalDeps) tell(ctx context.Context, act Action, text string) error {
	if act.ChannelID == "" {
		return nil
	}
	c, err := d.Client(ctx, act.TeamID)
	if err == nil {
		err = c.PostEphemeral(ctx, act.ChannelID, act.ThreadTS, act.UserID, text)
	}
	if err != nil {
		d.Logger.WarnContext(ctx, "slack approval notice not shown", slog.String("user_id", act.UserID), slog.Any("error", err))
	}
	return nil
}
