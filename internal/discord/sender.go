package discord

import (
	"context"
	"fmt"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

// Sender posts outbox rows into Discord threads: the processor's Sender for
// the discord platform. Each row is sent with its id as the nonce, so a
// retried send of a row Discord already took returns the message it made
// instead of posting again (Discord remembers nonces for a few minutes;
// outbox retries start within seconds).
type Sender struct {
	c *Client
}

// NewSender returns a Sender posting through c.
func NewSender(c *Client) *Sender { return &Sender{c: c} }

// Send posts one outbox row to its target thread and returns the id of the
// first message. Rate limits, server errors and network failures come back
// as they are, for the processor to retry; a row Discord refuses (bad token,
// missing permission, unknown or archived-and-locked thread, invalid body)
// or that cannot be rendered wraps thread.ErrInvalid, so the processor gives
// up on it at once and records an error stitch.
func (s *Sender) Send(ctx context.Context, o thread.Outbox) (string, error) {
	body, err := surface.Body(thread.PlatformDiscord, o)
	if err != nil {
		return "", err
	}
	content := Render(o.Kind, body)
	if strings.TrimSpace(content) == "" {
		return "", fmt.Errorf("discord: send %s: %w: nothing to post for a %s", o.ID, thread.ErrInvalid, o.Kind)
	}
	var components []discordgo.MessageComponent
	if a := body.Approval; a != nil && o.Kind == thread.OutboxElicitation {
		components = ApprovalButtons(a.ID.String())
	}
	id, err := s.c.SendComponents(ctx, o.Target, content, o.ID.String(), components)
	if err != nil {
		return "", surface.SendError("discord", o, err)
	}
	return id, nil
}

// Finish delivers row o into the messages its answer was streamed into
// (ids, in order; sent, when known, what each holds): each part of the
// row's text edits the message streamed for it where that differs, the
// parts past them are posted (with the row's nonces, as Send posts them),
// and streamed messages past the text's end are deleted. It returns the
// first message's id.
func (s *Sender) Finish(ctx context.Context, o thread.Outbox, ids, sent []string) (string, error) {
	body, err := surface.Body(thread.PlatformDiscord, o)
	if err != nil {
		return "", err
	}
	parts := Parts(Render(o.Kind, body))
	if len(parts) == 0 {
		return "", fmt.Errorf("discord: finish %s: %w: nothing to post for a %s", o.ID, thread.ErrInvalid, o.Kind)
	}
	for i, part := range parts {
		switch {
		case i < len(ids) && i < len(sent) && sent[i] == part:
		case i < len(ids):
			if err := s.c.Edit(ctx, o.Target, ids[i], part); err != nil {
				return "", surface.SendError("discord", o, err)
			}
		default:
			id, err := s.c.SendPart(ctx, o.Target, part, o.ID.String(), i)
			if err != nil {
				return "", surface.SendError("discord", o, err)
			}
			ids = append(ids, id)
		}
	}
	for _, id := range ids[len(parts):] {
		if err := s.c.Delete(ctx, o.Target, id); err != nil {
			return "", surface.SendError("discord", o, err)
		}
	}
	return ids[0], nil
}

// Parts are the messages content is posted as: split at MessageLimit,
// blank parts left out.
func Parts(content string) []string {
	var out []string
	for _, p := range Split(content, MessageLimit) {
		if strings.TrimSpace(p) != "" {
			out = append(out, p)
		}
	}
	return out
}

// Render is the message an outbox row of kind k shows in Discord: the text,
// an elicitation's options as a numbered list, an error marked as one, a
// notice (weft's word on the turn, such as a busy model) in italics.
// Thoughts and actions never reach Discord (the outbox routes only the
// conversation there); they render as their text should one arrive.
func Render(k thread.OutboxKind, b thread.OutboxBody) string {
	text := strings.TrimSpace(b.Text)
	switch k {
	case thread.OutboxElicitation:
		var sb strings.Builder
		sb.WriteString(text)
		if len(b.Options) > 0 && b.Approval == nil { // an approval's options are its buttons
			sb.WriteString("\n")
			for i, opt := range b.Options {
				fmt.Fprintf(&sb, "\n%d. %s", i+1, opt)
			}
		}
		return sb.String()
	case thread.OutboxNotice:
		return "_" + text + "_"
	case thread.OutboxError:
		if text == "" {
			text = "Something went wrong."
		}
		return "⚠️ **Error:** " + text
	}
	return text
}
