package slack

import (
	"context"
	"errors"
	"fmt"

	goslack "github.com/slack-go/slack"
	"golang.org/x/time/rate"

	"github.com/weft-dev/weft/internal/surface"
)

// Slack's streaming methods' tiers, per workspace and app: chat.startStream
// and chat.stopStream are Tier 2 (20 a minute), chat.appendStream Tier 4
// (100 a minute), chat.update Tier 3 (50 a minute). A stream waits for
// its method's budget, so a busy workspace's streams append less often
// (more text each) rather than being refused.
const (
	startsPerMinute  = 20
	appendsPerMinute = 100
	updatesPerMinute = 50
)

// StreamTextLimit is the most markdown_text one streaming call takes, in
// characters.
const StreamTextLimit = 12000

// streamLimits are a client's budgets of the streaming methods, with a
// minute's worth allowed at once for starts and a fifth for the others.
type streamLimits struct {
	starts, appends, updates *rate.Limiter
}

func newStreamLimits() streamLimits {
	perMinute := func(n, burst int) *rate.Limiter { return rate.NewLimiter(rate.Limit(float64(n)/60), burst) }
	return streamLimits{
		starts:  perMinute(startsPerMinute, startsPerMinute),
		appends: perMinute(appendsPerMinute, appendsPerMinute/5),
		updates: perMinute(updatesPerMinute, updatesPerMinute/5),
	}
}

// streamRefusals are the errors with which Slack refuses to stream in a
// conversation or workspace: answers there are posted and updated instead.
var streamRefusals = map[string]bool{
	"channel_type_not_supported":            true,
	"method_not_supported_for_channel_type": true,
	"feature_not_enabled":                   true,
	"not_allowed_token_type":                true,
	"unknown_method":                        true,
	"team_not_allowed":                      true,
}

// StreamRefused reports whether err is Slack refusing to stream where it
// was asked (a channel type, a workspace or a token that cannot): answer
// there by posting and updating, and do not ask again.
func StreamRefused(err error) bool {
	var e *surface.Error
	return errors.As(err, &e) && streamRefusals[e.Code]
}

// NotStreaming reports Slack's answer to a streaming call on a message
// that is no longer streaming (stopped before, by this replica or
// another).
func NotStreaming(err error) bool {
	var e *surface.Error
	return errors.As(err, &e) && e.Code == "message_not_in_streaming_state"
}

// StreamStart is a chat.startStream: a message streamed into a thread,
// to the person who asked (Slack requires RecipientUserID and
// RecipientTeamID outside DMs).
type StreamStart struct {
	Channel, ThreadTS string
	// Text is the first markdown (at most StreamTextLimit characters).
	Text                             string
	RecipientUserID, RecipientTeamID string
}

// StartStream starts a streamed message and returns its ts. It waits for
// the method's budget unless ctx's deadline comes first (then it fails at
// once as rate limited). Not retried.
func (c *Client) StartStream(ctx context.Context, s StreamStart) (string, error) {
	const op = "chat.startStream"
	if err := wait(ctx, c.streams.starts, op); err != nil {
		return "", err
	}
	opts := []goslack.MsgOption{goslack.MsgOptionTS(s.ThreadTS)}
	if s.Text != "" {
		opts = append(opts, goslack.MsgOptionMarkdownText(s.Text))
	}
	if s.RecipientUserID != "" {
		opts = append(opts, goslack.MsgOptionRecipientUserID(s.RecipientUserID), goslack.MsgOptionRecipientTeamID(s.RecipientTeamID))
	}
	_, ts, err := c.api.StartStreamContext(ctx, s.Channel, opts...)
	if err = translate(op, err); err != nil {
		return "", err
	}
	return ts, nil
}

// AppendStream adds text (at most StreamTextLimit characters) to a
// streaming message, waiting for the method's budget.
func (c *Client) AppendStream(ctx context.Context, channel, ts, text string) error {
	const op = "chat.appendStream"
	if err := wait(ctx, c.streams.appends, op); err != nil {
		return err
	}
	_, _, err := c.api.AppendStreamContext(ctx, channel, ts, goslack.MsgOptionMarkdownText(text))
	return translate(op, err)
}

// StopStream ends a streaming message, adding text (may be empty) and,
// with outboxID, the weft_outbox metadata of the row it is part of. A
// stream that was already stopped fails with Code
// "message_not_in_streaming_state".
func (c *Client) StopStream(ctx context.Context, channel, ts, text, outboxID string, part int) error {
	const op = "chat.stopStream"
	if err := wait(ctx, c.streams.starts, op); err != nil {
		return err
	}
	var opts []goslack.MsgOption
	if text != "" {
		opts = append(opts, goslack.MsgOptionMarkdownText(text))
	}
	if outboxID != "" {
		opts = append(opts, outboxMetadata(outboxID, part))
	}
	_, _, err := c.api.StopStreamContext(ctx, channel, ts, opts...)
	return translate(op, err)
}

// Update replaces a message's text (chat.update), as mrkdwn, with the
// weft_outbox metadata of the row it is part of when outboxID is set. It
// waits for the method's budget. A message still streaming fails with
// Code "streaming_state_conflict".
func (c *Client) Update(ctx context.Context, channel, ts, text, outboxID string, part int) error {
	const op = "chat.update"
	if err := wait(ctx, c.streams.updates, op); err != nil {
		return err
	}
	opts := []goslack.MsgOption{goslack.MsgOptionText(text, false)}
	if outboxID != "" {
		opts = append(opts, outboxMetadata(outboxID, part))
	}
	_, _, _, err := c.api.UpdateMessageContext(ctx, channel, ts, opts...)
	return translate(op, err)
}

// outboxMetadata is the weft_outbox metadata of part of an outbox row.
func outboxMetadata(outboxID string, part int) goslack.MsgOption {
	return goslack.MsgOptionMetadata(goslack.SlackMetadata{
		EventType:    OutboxEventType,
		EventPayload: map[string]any{"outbox_id": outboxID, "part": part},
	})
}

// wait takes one call of l's budget, failing at once as rate limited when
// ctx's deadline comes before it.
func wait(ctx context.Context, l *rate.Limiter, op string) error {
	if err := l.Wait(ctx); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("slack: %s: %w", op, ctx.Err())
		}
		return &surface.Error{Platform: platform, Kind: surface.KindRateLimited, Op: op, Err: fmt.Errorf("weft's own pacing of %s: %w", op, err)}
	}
	return nil
}
