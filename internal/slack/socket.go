package slack

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	goslack "github.com/slack-go/slack"

	"github.com/slack-go/slack/socketmode"
)

// Socket is Slack's second door, for a workspace without a public URL:
// Socket Mode over the app-level token (SLACK_APP_TOKEN). Each events_api
// envelope goes through the same Conversations.Handle as an Events API
// request and is acknowledged once recorded; one that failed to record is
// left unacknowledged, so Slack sends it again. Slash commands and
// interactivity (slash_commands and interactive envelopes) go to its
// Interactions, as the HTTP doors' requests do, their reply in the ack.
type Socket struct {
	sm     *socketmode.Client
	conv   *Conversations
	logger *slog.Logger
	// interactions runs slash commands and interactivity (WithInteractions).
	interactions Interactions
}

// NewSocket returns a Socket connecting with cfg's AppToken (its bot
// token, if any, is not used: events of every workspace come over it).
func NewSocket(cfg Config, conv *Conversations, logger *slog.Logger, sopts ...SocketOption) *Socket {
	opts := []goslack.Option{goslack.OptionAppLevelToken(cfg.AppToken), goslack.OptionHTTPClient(&http.Client{Timeout: defaultHTTPTimeout})}
	if u := apiURL(cfg.APIURL); u != "" {
		opts = append(opts, goslack.OptionAPIURL(u))
	}
	s := &Socket{sm: socketmode.New(goslack.New("", opts...)), conv: conv, logger: logger.With("component", "slack_socket")}
	for _, o := range sopts {
		o(s)
	}
	return s
}

// Run connects, reconnecting as Slack asks, and handles envelopes until
// ctx ends.
func (s *Socket) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- s.sm.RunContext(ctx) }()
	for {
		select {
		case err := <-errc:
			if ctx.Err() != nil {
				return nil
			}
			return err
		case evt, ok := <-s.sm.Events:
			if !ok {
				return <-errc
			}
			s.handle(ctx, evt)
		}
	}
}

func (s *Socket) handle(ctx context.Context, evt socketmode.Event) {
	var req *socketmode.Request
	switch evt.Type {
	case socketmode.EventTypeEventsAPI:
		req = evt.Request
	case socketmode.EventTypeSlashCommand, socketmode.EventTypeInteractive:
		s.interact(ctx, evt.Request)
		return
	case socketmode.EventTypeErrorBadMessage:
		// slack-go could not parse the inner event (a type it does not
		// know): weft reads the envelope itself, as the Events API door
		// does, so that it is recorded and acknowledged all the same.
		bad, ok := evt.Data.(*socketmode.ErrorBadMessage)
		var r socketmode.Request
		if !ok || json.Unmarshal(bad.Message, &r) != nil || r.EnvelopeID == "" {
			return
		}
		if interactive(r.Type) {
			// A payload slack-go could not read (a block it does not
			// know) is read by weft's own handler all the same.
			s.interact(ctx, &r)
			return
		}
		if r.Type != socketmode.RequestTypeEventsAPI {
			return
		}
		req = &r
	case socketmode.EventTypeConnected:
		s.logger.InfoContext(ctx, "slack socket mode connected")
		return
	case socketmode.EventTypeConnectionError:
		// slack-go retries on its own, doubling its wait from 100 ms up
		// to 5 minutes (or Slack's Retry-After); without this line a
		// socket that never connects is silent.
		if ce, ok := evt.Data.(*goslack.ConnectionErrorEvent); ok {
			s.logger.WarnContext(ctx, "slack socket mode connection failed, will retry",
				slog.Int("attempt", ce.Attempt), slog.Duration("backoff", ce.Backoff), slog.Any("error", ce.ErrorObj))
		}
		return
	default:
		return
	}
	if req == nil {
		return
	}
	_, err := s.conv.Handle(ctx, req.Payload)
	if err != nil && !errors.Is(err, ErrMalformed) {
		s.logger.ErrorContext(ctx, "slack event not recorded, left for redelivery", slog.String("envelope_id", req.EnvelopeID), slog.Any("error", err))
		return
	}
	if err != nil {
		s.logger.InfoContext(ctx, "slack envelope malformed", slog.String("envelope_id", req.EnvelopeID), slog.Any("error", err))
	}
	if err := s.sm.AckCtx(ctx, req.EnvelopeID, nil); err != nil {
		s.logger.WarnContext(ctx, "slack ack", slog.String("envelope_id", req.EnvelopeID), slog.Any("error", err))
	}
}
