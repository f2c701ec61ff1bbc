package slack

import (
	"context"
	"fmt"
	"strings"
	"time"

	goslack "github.com/slack-go/slack"

	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

// findSlack is how far before a row's creation FindPosted looks for its
// posts, for clocks that disagree a little.
const findSlack = time.Minute

// Sender posts outbox rows into Slack threads: the processor's Sender for
// the slack platform. chat.postMessage has no idempotency key, so every part
// carries the row id and its index in weft_outbox metadata, and a row sent
// before (a retry after an ambiguous failure, or after a crash between the
// post and its commit) first looks in the thread for the parts Slack already
// has and posts only the others.
type Sender struct {
	ws *Workspaces
	// feedback puts feedback buttons under answers (WithFeedback).
	feedback bool
	// approvals puts Approve and Deny buttons under requests for approval
	// (WithApprovalButtons).
	approvals bool
}

// SenderOption configures a Sender.
type SenderOption func(*Sender)

// WithFeedback puts feedback buttons (AnswerBlocks) under each answer's
// last part; an echo, a notice or an error gets none.
func WithFeedback(on bool) SenderOption { return func(s *Sender) { s.feedback = on } }

// WithApprovalButtons puts Approve and Deny buttons (ApprovalBlocks) under
// the last part of each request for approval (an elicitation whose body
// carries an approval); without, it shows its options as a list, answered
// by a reply.
func WithApprovalButtons(on bool) SenderOption { return func(s *Sender) { s.approvals = on } }

// NewSender returns a Sender posting with each workspace's own token.
func NewSender(ws *Workspaces, opts ...SenderOption) *Sender {
	s := &Sender{ws: ws}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Send posts one outbox row, split at TextLimit, in its target thread and
// returns the ts of the first part. Rate limits, server and network
// failures come back as they are, for the processor to retry; a row Slack
// refuses (auth, permission, unknown channel, invalid body) or that cannot
// be rendered wraps thread.ErrInvalid, so the processor gives up on it.
func (s *Sender) Send(ctx context.Context, o thread.Outbox) (string, error) {
	body, err := surface.Body(thread.PlatformSlack, o)
	if err != nil {
		return "", err
	}
	target, err := thread.ParseSlackTarget(o.Target)
	if err != nil {
		return "", fmt.Errorf("slack: send %s: %w", o.ID, err)
	}
	c, err := s.ws.Client(ctx, target.TeamID)
	if err != nil {
		return "", surface.SendError(platform, o, err, ErrNotInstalled)
	}
	if s.approvals && body.Approval != nil {
		body.Options = nil // the buttons are the options
	}
	parts := Split(Render(o.Kind, body), TextLimit)
	if len(parts) == 0 {
		return "", fmt.Errorf("slack: send %s: %w: nothing to post for a %s", o.ID, thread.ErrInvalid, o.Kind)
	}
	return s.post(ctx, c, o, target, parts, map[int]string{}, s.buttons(o.Kind, body))
}

// buttons are the blocks the last part of a row of kind k carries: the
// feedback buttons under an answer, Approve and Deny under a request for
// approval, or none.
func (s *Sender) buttons(k thread.OutboxKind, body thread.OutboxBody) func(part, outboxID string) []goslack.Block {
	switch {
	case s.approvals && k == thread.OutboxElicitation && body.Approval != nil:
		id := body.Approval.ID.String()
		return func(part, _ string) []goslack.Block { return ApprovalBlocks(part, id) }
	case s.feedback && k == thread.OutboxResponse && !body.Echo:
		return AnswerBlocks
	}
	return nil
}

// post posts the parts of row o not in posted (their ts by index), first
// looking in the thread for those an earlier attempt posted, and returns
// the first part's ts. With blocks, the last part carries the blocks it
// makes of the part's text and the row's id.
func (s *Sender) post(ctx context.Context, c *Client, o thread.Outbox, target thread.SlackTarget, parts []string, posted map[int]string, blocks func(part, outboxID string) []goslack.Block) (string, error) {
	id := o.ID.String()
	if o.Attempts > 1 && len(posted) < len(parts) {
		// An earlier attempt may have posted some parts without hearing so.
		since := o.CreatedAt.Add(-findSlack)
		if o.CreatedAt.IsZero() {
			since = time.Time{}
		}
		found, err := c.FindPosted(ctx, target.ChannelID, target.ThreadTS, id, since)
		if err != nil {
			return "", surface.SendError(platform, o, err, ErrNotInstalled)
		}
		for i, ts := range found {
			if _, ok := posted[i]; !ok {
				posted[i] = ts
			}
		}
	}
	for i, part := range parts {
		if _, ok := posted[i]; ok {
			continue
		}
		p := Post{Channel: target.ChannelID, ThreadTS: target.ThreadTS, Text: part, OutboxID: id, Part: i}
		if blocks != nil && i == len(parts)-1 {
			p.Blocks = blocks(part, id)
		}
		ts, err := c.PostMessage(ctx, p)
		if err != nil {
			return "", surface.SendError(platform, o, err, ErrNotInstalled)
		}
		posted[i] = ts
	}
	return posted[0], nil
}

// Streamed is the message an answer was streamed into, for Finish.
type Streamed struct {
	TS string
	// Streaming: the message was started with chat.startStream and may
	// still be streaming; else it was posted and is updated.
	Streaming bool
	// Sent is the text the stream holds, when SentKnown (the streamer on
	// this replica wrote it): a final text that extends it is appended as
	// the stream stops, sparing a chat.update.
	Sent      string
	SentKnown bool
}

// Finish delivers row o into the message its answer was streamed into:
// the stream stopped with the row's weft_outbox metadata and the first
// part's text (appended, or replacing the text with chat.update), the
// further parts posted after it as Send posts them. It returns the
// message's ts.
func (s *Sender) Finish(ctx context.Context, o thread.Outbox, m Streamed) (string, error) {
	body, err := surface.Body(thread.PlatformSlack, o)
	if err != nil {
		return "", err
	}
	target, err := thread.ParseSlackTarget(o.Target)
	if err != nil {
		return "", fmt.Errorf("slack: finish %s: %w", o.ID, err)
	}
	c, err := s.ws.Client(ctx, target.TeamID)
	if err != nil {
		return "", surface.SendError(platform, o, err, ErrNotInstalled)
	}
	parts := Split(Render(o.Kind, body), TextLimit)
	if len(parts) == 0 {
		return "", fmt.Errorf("slack: finish %s: %w: nothing to post for a %s", o.ID, thread.ErrInvalid, o.Kind)
	}
	id := o.ID.String()
	blocks := s.buttons(o.Kind, body)
	// The buttons go under the last part: here when the streamed message
	// is the whole answer (stopStream shows its blocks under the streamed
	// text, so it takes the feedback buttons alone), else on the last part
	// post posts.
	var stopBlocks, updateBlocks []goslack.Block
	if blocks != nil && len(parts) == 1 {
		updateBlocks = blocks(parts[0], id)
		if o.Kind == thread.OutboxResponse {
			stopBlocks = []goslack.Block{FeedbackBlock(id)}
		}
	}
	update := true
	if m.Streaming {
		rest, extends := "", m.SentKnown && strings.HasPrefix(parts[0], m.Sent)
		if extends {
			rest = parts[0][len(m.Sent):]
		}
		switch err := c.StopStream(ctx, target.ChannelID, m.TS, rest, id, 0, stopBlocks...); {
		case err == nil:
			update = !extends
		case !NotStreaming(err):
			return "", surface.SendError(platform, o, err, ErrNotInstalled)
		}
	}
	if update {
		if err := c.Update(ctx, target.ChannelID, m.TS, parts[0], id, 0, updateBlocks...); err != nil {
			return "", surface.SendError(platform, o, err, ErrNotInstalled)
		}
	}
	return s.post(ctx, c, o, target, parts, map[int]string{0: m.TS}, s.buttons(o.Kind, body))
}

// Render is the mrkdwn an outbox row of kind k shows in Slack: the text
// escaped (Escape), an elicitation's options as a numbered list, an error
// marked as one.
func Render(k thread.OutboxKind, b thread.OutboxBody) string {
	text := strings.TrimSpace(b.Text)
	switch k {
	case thread.OutboxElicitation:
		var sb strings.Builder
		sb.WriteString(Escape(text))
		if len(b.Options) > 0 {
			sb.WriteString("\n")
			for i, opt := range b.Options {
				fmt.Fprintf(&sb, "\n%d. %s", i+1, Escape(opt))
			}
		}
		return sb.String()
	case thread.OutboxError:
		if text == "" {
			text = "Something went wrong."
		}
		return ":warning: *Error:* " + Escape(text)
	}
	return Escape(text)
}
