package slack

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"
)

// Greeter offers suggested prompts (assistant.threads.setSuggestedPrompts)
// as a person opens a conversation with the app: an assistant thread
// (assistant_thread_started, the assistant container) or the app's
// messages tab (app_home_opened with tab "messages", the agent view).
type Greeter struct {
	ws      *Workspaces
	prompts []Prompt
	title   string
	logger  *slog.Logger
}

// NewGreeter returns a Greeter offering prompts (at most
// MaxSuggestedPrompts) under title; nil when there are none to offer.
func NewGreeter(ws *Workspaces, title string, prompts []Prompt, logger *slog.Logger) *Greeter {
	if len(prompts) == 0 {
		return nil
	}
	return &Greeter{ws: ws, prompts: prompts, title: title, logger: logger.With("component", "slack_greeter")}
}

// WithGreeter has Conversations greet with g (nil greets no one).
func WithGreeter(g *Greeter) ConversationsOption {
	return func(c *Conversations) { c.greeter = g }
}

// greetBudget bounds the call: it runs before the event is acknowledged,
// and Slack waits 3 s for that.
const greetBudget = 2 * time.Second

// greet offers the prompts where a recorded event (the first delivery of
// it) says a conversation with the app opened. A failure is logged: the
// prompts are a courtesy.
func (g *Greeter) greet(ctx context.Context, env envelope, head innerHead) {
	var ev struct {
		Channel         string `json:"channel"`
		Tab             string `json:"tab"`
		AssistantThread struct {
			ChannelID string `json:"channel_id"`
			ThreadTS  string `json:"thread_ts"`
		} `json:"assistant_thread"`
	}
	if json.Unmarshal(env.Event, &ev) != nil {
		return
	}
	var channel, threadTS string
	switch head.Type {
	case "assistant_thread_started":
		channel, threadTS = ev.AssistantThread.ChannelID, ev.AssistantThread.ThreadTS
	case "app_home_opened":
		if ev.Tab != "messages" {
			return
		}
		channel = ev.Channel
	default:
		return
	}
	if channel == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, greetBudget)
	defer cancel()
	c, err := g.ws.Client(ctx, env.TeamID)
	if err == nil {
		err = c.SetSuggestedPrompts(ctx, channel, threadTS, g.title, g.prompts)
	}
	if err != nil {
		g.logger.WarnContext(ctx, "slack suggested prompts not set", slog.String("team_id", env.TeamID),
			slog.String("event", head.Type), slog.Any("error", err))
	}
}
