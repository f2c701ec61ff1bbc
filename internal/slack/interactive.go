package slack

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/slack-go/slack/socketmode"
)

// Interactions handles what Socket Mode brings besides events: slash
// commands and interactivity payloads (a button clicked). The Slack seam's
// *Interactivity implements it; its HTTP doors run the same code, so that a
// command or a click does the same over either door.
type Interactions interface {
	// SlashCommand runs a slash command, its payload Socket Mode's JSON
	// object of the fields Slack posts as a form over HTTP, and returns
	// the reply to acknowledge it with (Slack shows it to the caller).
	// An error wrapping ErrMalformed is acknowledged without a reply.
	SlashCommand(ctx context.Context, payload json.RawMessage) (reply any, err error)
	// Interactive handles an interactivity payload (the JSON HTTP carries
	// in its payload field) and returns what to acknowledge it with, if
	// anything. An error wrapping ErrMalformed is acknowledged and
	// dropped; any other leaves the envelope unacknowledged, for Slack to
	// send it again (what it recorded is recorded once).
	Interactive(ctx context.Context, payload json.RawMessage) (ack any, err error)
}

// SocketOption configures a Socket.
type SocketOption func(*Socket)

// WithInteractions hands the socket's slash_commands and interactive
// envelopes to h. Without it they are acknowledged and dropped, so that
// Slack does not send them again.
func WithInteractions(h Interactions) SocketOption {
	return func(s *Socket) { s.interactions = h }
}

// interactive reports whether a Socket Mode request is a slash command or
// an interactivity payload.
func interactive(typ string) bool {
	return typ == socketmode.RequestTypeSlashCommands || typ == socketmode.RequestTypeInteractive
}

// interact answers a slash_commands or interactive envelope as the HTTP
// doors answer the same request: the command's reply, or the
// interaction's, goes back in the acknowledgement.
func (s *Socket) interact(ctx context.Context, req *socketmode.Request) {
	if req == nil || req.EnvelopeID == "" {
		return
	}
	var ack any
	var err error
	switch {
	case s.interactions == nil:
		s.logger.InfoContext(ctx, "slack socket mode: no handler for this envelope", slog.String("type", req.Type))
	case req.Type == socketmode.RequestTypeSlashCommands:
		ack, err = s.interactions.SlashCommand(ctx, req.Payload)
	default:
		ack, err = s.interactions.Interactive(ctx, req.Payload)
	}
	switch {
	case errors.Is(err, ErrMalformed):
		s.logger.InfoContext(ctx, "slack envelope malformed", slog.String("envelope_id", req.EnvelopeID),
			slog.String("type", req.Type), slog.Any("error", err))
		ack = nil
	case err != nil:
		s.logger.ErrorContext(ctx, "slack interaction not handled, left for redelivery", slog.String("envelope_id", req.EnvelopeID),
			slog.String("type", req.Type), slog.Any("error", err))
		return
	}
	if err := s.sm.AckCtx(ctx, req.EnvelopeID, ack); err != nil {
		s.logger.WarnContext(ctx, "slack ack", slog.String("envelope_id", req.EnvelopeID), slog.Any("error", err))
	}
}
