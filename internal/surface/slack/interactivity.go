package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	slackapi "github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/surface/webhook"
)

// Action is one block action a person took on a message: a button
// clicked under one of weft's posts.
type Action struct {
	TeamID   string
	UserID   string
	UserName string // the person's Slack username, as the payload gives it
	// ChannelID and MessageTS are the message the button is on; ThreadTS
	// its thread's parent (empty for a message at the top level).
	ChannelID, MessageTS, ThreadTS string
	// ActionID, BlockID, Type and Value are the element's; ActionTS is
	// when it was clicked, unique to the click.
	ActionID, BlockID, Type, Value, ActionTS string
	// ResponseURL answers the click in the channel (up to 5 times in 30
	// minutes); TriggerID opens a modal within 3 s.
	ResponseURL, TriggerID string
	// MessageText is the text of the message the button is on (its
	// blocks' fallback, as posted).
	MessageText string
}

// ActionHandler handles one block action. It runs before the click is
// acknowledged (Slack waits 3 s): an error means nothing was recorded,
// and the click is answered with a 500 over HTTP or left unacknowledged
// over Socket Mode, for Slack to send it again, so a handler must take a
// click it sees twice (same ActionTS) as one.
type ActionHandler func(ctx context.Context, a Action) error

// Interactivity is what people do with weft's Slack app besides writing:
// the /weft command's subcommands and the block actions on weft's
// messages, dispatched by action_id. The HTTP doors (Doors) and Socket Mode
// (as slackapi.Interactions) run the same code.
//
// Actions is where a feature's buttons plug in: a handler registered under
// an action_id prefix gets every block action whose action_id starts with
// it (the longest prefix wins). Slack's own feedback buttons are
// slackapi.FeedbackActionID; a feature's buttons take a prefix of their
// own ("weft_approval:" for tool approvals), given to App.Listen in
// ListenDeps.Actions.
type Interactivity struct {
	// Commands are /weft's subcommands by name ("continue"): the text after
	// the name goes to its handler. Unknown names get the usage.
	Commands map[string]CommandHandler
	// Actions are block actions' handlers by action_id prefix.
	Actions map[string]ActionHandler
	// AllowedTeam says whether a workspace may use weft
	// (SLACK_ALLOWED_TEAMS); nil allows any. A command from another is
	// answered with a refusal and runs nothing; its clicks are dropped.
	AllowedTeam func(teamID string) bool
	Logger      *slog.Logger
}

var _ slackapi.Interactions = (*Interactivity)(nil)

// command runs a /weft command and returns the reply its caller sees.
func (i *Interactivity) command(ctx context.Context, c Command, text string) string {
	if i.AllowedTeam != nil && !i.AllowedTeam(c.TeamID) {
		i.Logger.InfoContext(ctx, "slack command from a workspace not allowed", slog.String("team_id", c.TeamID))
		return "weft is not enabled in this workspace."
	}
	name, rest, _ := strings.Cut(strings.TrimSpace(text), " ")
	c.Text = strings.TrimSpace(rest)
	h, ok := i.Commands[strings.ToLower(name)]
	if !ok {
		return slackUsage
	}
	reply, err := h(ctx, c)
	if err != nil {
		i.Logger.WarnContext(ctx, "slack command failed", slog.String("command", name), slog.Any("error", err))
		return slackCommandFailed
	}
	return reply
}

// slashCommand is a slash command's fields, as Socket Mode sends them (and
// HTTP as a form).
type slashCommand struct {
	TeamID      string `json:"team_id"`
	ChannelID   string `json:"channel_id"`
	UserID      string `json:"user_id"`
	UserName    string `json:"user_name"`
	Command     string `json:"command"`
	Text        string `json:"text"`
	ResponseURL string `json:"response_url"`
	TriggerID   string `json:"trigger_id"`
}

// SlashCommand runs a slash command that came over Socket Mode: as over
// HTTP, its reply is shown to its caller alone.
func (i *Interactivity) SlashCommand(ctx context.Context, payload json.RawMessage) (any, error) {
	var sc slashCommand
	if err := json.Unmarshal(payload, &sc); err != nil {
		return nil, fmt.Errorf("%w: slash command: %w", slackapi.ErrMalformed, err)
	}
	c := Command{TeamID: sc.TeamID, ChannelID: sc.ChannelID, UserID: sc.UserID, UserName: sc.UserName, Command: sc.Command,
		ResponseURL: sc.ResponseURL, TriggerID: sc.TriggerID}
	if !c.complete() {
		return nil, fmt.Errorf("%w: incomplete slash command", slackapi.ErrMalformed)
	}
	return ephemeral(i.command(ctx, c, sc.Text)), nil
}

// complete reports whether a command names its team, channel, caller and
// command.
func (c Command) complete() bool {
	return c.TeamID != "" && c.ChannelID != "" && c.UserID != "" && c.Command != ""
}

// ephemeral is a reply only a command's caller sees.
func ephemeral(text string) map[string]string {
	return map[string]string{"response_type": "ephemeral", "text": text}
}

// interaction is what weft reads of an interactivity payload.
type interaction struct {
	Type string `json:"type"`
	Team struct {
		ID string `json:"id"`
	} `json:"team"`
	User struct {
		ID       string `json:"id"`
		Username string `json:"username"`
		Name     string `json:"name"`
		TeamID   string `json:"team_id"`
	} `json:"user"`
	Channel struct {
		ID string `json:"id"`
	} `json:"channel"`
	Container struct {
		Type      string `json:"type"`
		MessageTS string `json:"message_ts"`
		ChannelID string `json:"channel_id"`
		ThreadTS  string `json:"thread_ts"`
	} `json:"container"`
	Message struct {
		TS       string `json:"ts"`
		ThreadTS string `json:"thread_ts"`
		Text     string `json:"text"`
	} `json:"message"`
	ResponseURL string `json:"response_url"`
	TriggerID   string `json:"trigger_id"`
	Actions     []struct {
		ActionID string `json:"action_id"`
		BlockID  string `json:"block_id"`
		Type     string `json:"type"`
		Value    string `json:"value"`
		ActionTS string `json:"action_ts"`
	} `json:"actions"`
}

// Interactive handles an interactivity payload: each of a block_actions'
// actions goes to the handler its action_id is registered under. Other
// payload types (shortcuts, modal submissions), actions nobody handles and
// a workspace not allowed are acknowledged and dropped. A payload that is
// not one, or a block_actions without its team, user or actions, is
// malformed.
func (i *Interactivity) Interactive(ctx context.Context, payload json.RawMessage) (any, error) {
	var in interaction
	if err := json.Unmarshal(payload, &in); err != nil {
		return nil, fmt.Errorf("%w: interaction: %w", slackapi.ErrMalformed, err)
	}
	if in.Type == "" {
		return nil, fmt.Errorf("%w: interaction without a type", slackapi.ErrMalformed)
	}
	if in.Type != "block_actions" {
		i.Logger.InfoContext(ctx, "slack interaction not handled", slog.String("type", in.Type))
		return nil, nil
	}
	team := in.Team.ID
	if team == "" {
		team = in.User.TeamID
	}
	if team == "" || in.User.ID == "" || len(in.Actions) == 0 {
		return nil, fmt.Errorf("%w: block_actions without team, user or actions", slackapi.ErrMalformed)
	}
	if i.AllowedTeam != nil && !i.AllowedTeam(team) {
		i.Logger.InfoContext(ctx, "slack interaction from a workspace not allowed", slog.String("team_id", team))
		return nil, nil
	}
	channel := in.Container.ChannelID
	if channel == "" {
		channel = in.Channel.ID
	}
	msgTS, threadTS := in.Container.MessageTS, in.Container.ThreadTS
	if msgTS == "" {
		msgTS = in.Message.TS
	}
	if threadTS == "" {
		threadTS = in.Message.ThreadTS
	}
	name := in.User.Username
	if name == "" {
		name = in.User.Name
	}
	var errs []error
	for _, act := range in.Actions {
		if act.ActionID == "" || act.ActionTS == "" {
			return nil, fmt.Errorf("%w: block action without action_id or action_ts", slackapi.ErrMalformed)
		}
		h, prefix := i.handler(act.ActionID)
		if h == nil {
			i.Logger.InfoContext(ctx, "slack block action nobody handles", slog.String("action_id", act.ActionID))
			continue
		}
		a := Action{TeamID: team, UserID: in.User.ID, UserName: name, ChannelID: channel, MessageTS: msgTS, ThreadTS: threadTS,
			ActionID: act.ActionID, BlockID: act.BlockID, Type: act.Type, Value: act.Value, ActionTS: act.ActionTS,
			ResponseURL: in.ResponseURL, TriggerID: in.TriggerID, MessageText: in.Message.Text}
		if err := h(ctx, a); err != nil {
			errs = append(errs, fmt.Errorf("slack action %s (%s): %w", act.ActionID, prefix, err))
		}
	}
	return nil, errors.Join(errs...)
}

// handler is the handler of the longest registered prefix of actionID.
func (i *Interactivity) handler(actionID string) (ActionHandler, string) {
	var best string
	var h ActionHandler
	for prefix, fn := range i.Actions {
		if strings.HasPrefix(actionID, prefix) && len(prefix) >= len(best) && fn != nil {
			best, h = prefix, fn
		}
	}
	return h, best
}

// handleInteraction answers POST /webhooks/slack/interactions, Slack's
// interactivity request URL: verified like an event (401 for a missing or
// bad signature or a stale timestamp, 413 for an oversized body), a form
// whose payload field is the interaction's JSON (else 400), handled as
// Interactive says and answered with an empty 200; a failure to record is
// a 500 with nothing written.
func handleInteraction(logger *slog.Logger, i *Interactivity, secret string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		reject := webhook.Rejecter(ctx, w, logger, "slack interaction rejected")
		body, ok := webhook.ReadVerified(w, r, reject, "invalid signature", func(body []byte) error {
			return slackapi.Verify(r.Header, body, secret)
		})
		if !ok {
			return
		}
		form, err := url.ParseQuery(string(body))
		if err != nil || form.Get("payload") == "" {
			reject(http.StatusBadRequest, "malformed form", err)
			return
		}
		_, err = i.Interactive(ctx, json.RawMessage(form.Get("payload")))
		switch {
		case errors.Is(err, slackapi.ErrMalformed):
			reject(http.StatusBadRequest, "malformed interaction", err)
			return
		case err != nil:
			logger.ErrorContext(ctx, "slack interaction not recorded", slog.Any("error", err))
			http.Error(w, "interaction not recorded", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
}
