package app

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/slackinstall"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
	"github.com/weft-dev/weft/webhooks"
)

// SlackConfig is Slack's part of the configuration (the OAuth installs'
// is SlackInstallConfig).
type SlackConfig struct {
	// SigningSecret verifies the Events API and slash commands
	// (SLACK_SIGNING_SECRET); without it those doors stay closed.
	SigningSecret string
	// BotToken is one workspace's bot token (SLACK_BOT_TOKEN), for that
	// workspace when it has no OAuth installation. Slack is off without it
	// and without OAuth installs.
	BotToken string
	// AppToken is the app-level token (SLACK_APP_TOKEN) that opens Socket
	// Mode, the door for a workspace without a public URL.
	AppToken string
	// APIURL replaces https://slack.com/api/ (SLACK_API_URL), e.g. a fake.
	APIURL string
	// ContinueChannelID is where /weft continue and continue_in_slack
	// open threads (SLACK_CONTINUE_CHANNEL_ID); empty means the channel
	// the command came from (the tool then has none).
	ContinueChannelID string
	// HistoryPerMinute paces conversations.history and .replies in each
	// workspace (SLACK_HISTORY_PER_MINUTE, 50: Slack's Tier 3; 1 for an
	// app distributed outside the Marketplace).
	HistoryPerMinute int
}

func loadSlack(getenv func(string) string) (SlackConfig, error) {
	perMinute, err := intEnv(getenv, "SLACK_HISTORY_PER_MINUTE", 50)
	if err != nil {
		return SlackConfig{}, err
	}
	return SlackConfig{
		SigningSecret: getenv("SLACK_SIGNING_SECRET"),
		BotToken:      getenv("SLACK_BOT_TOKEN"),
		AppToken:      getenv("SLACK_APP_TOKEN"),
		APIURL:        getenv("SLACK_API_URL"),

		ContinueChannelID: getenv("SLACK_CONTINUE_CHANNEL_ID"),
		HistoryPerMinute:  perMinute,
	}, nil
}

// slackApp is Slack, built: the Web API clients (one per workspace), the
// outbox's sender, the thinking status, and the doors once the ingester
// exists.
type slackApp struct {
	cfg    SlackConfig
	logger *slog.Logger
	// store holds the threads the thinking status finds its Slack thread by.
	store *db.Store
	ws    *slack.Workspaces
	// installs are the OAuth installations; nil without OAuth.
	installs *slackinstall.Tokens
	sender   *slack.Sender
	conv     *slack.Conversations
	socket   *slack.Socket

	wg     sync.WaitGroup
	cancel context.CancelFunc
}

// newSlackApp builds Slack on SLACK_BOT_TOKEN and the OAuth installs'
// tokens (installs; nil without OAuth): off with neither.
func newSlackApp(cfg SlackConfig, store *db.Store, installs *slackinstall.Tokens, logger *slog.Logger) (*slackApp, error) {
	a := &slackApp{cfg: cfg, logger: logger.With("component", "slack"), store: store, installs: installs}
	var src slack.TokenSource
	if installs != nil {
		src = installs
	} else if cfg.BotToken == "" {
		return a, nil
	}
	ws, err := slack.NewWorkspaces(a.clientConfig(), src)
	if err != nil {
		return nil, fmt.Errorf("slack: %w", err)
	}
	a.ws, a.sender = ws, slack.NewSender(ws)
	return a, nil
}

func (a *slackApp) clientConfig() slack.Config {
	return slack.Config{Token: a.cfg.BotToken, AppToken: a.cfg.AppToken, APIURL: a.cfg.APIURL, Logger: a.logger,
		HistoryPerMinute: a.cfg.HistoryPerMinute}
}

// on reports whether Slack is configured.
func (a *slackApp) on() bool { return a != nil && a.ws != nil }

// Name is Slack.
func (a *slackApp) Name() thread.Platform { return thread.PlatformSlack }

// Door says which workspaces Slack reaches and through which doors.
func (a *slackApp) Door() surface.Door {
	if !a.on() {
		return surface.Door{Name: "slack", Why: "set SLACK_BOT_TOKEN or SLACK_CLIENT_ID (OAuth installs) with SLACK_SIGNING_SECRET (Events API) or SLACK_APP_TOKEN (Socket Mode)"}
	}
	var how []string
	if a.installs != nil {
		how = append(how, "installed workspaces with their own tokens (/oauth/slack/install)")
	}
	if a.cfg.BotToken != "" {
		how = append(how, "SLACK_BOT_TOKEN's workspace with it")
	}
	if a.cfg.SigningSecret == "" {
		how = append(how, "events off: SLACK_SIGNING_SECRET is not set")
	} else {
		how = append(how, "events at /webhooks/slack, /weft at /webhooks/slack/commands")
	}
	if a.cfg.AppToken != "" {
		how = append(how, "socket mode on SLACK_APP_TOKEN")
	}
	return surface.Door{Name: "slack", On: true, Why: strings.Join(how, "; ")}
}

// Sender delivers to Slack; nil with Slack off.
func (a *slackApp) Sender() surface.Sender {
	if !a.on() {
		return nil
	}
	return a.sender
}

// slackThreads are the workspaces' clients as the continue tools open
// threads with them.
type slackThreads struct{ *slack.Workspaces }

func (w slackThreads) Threads(ctx context.Context, teamID string) (tools.SlackThreads, error) {
	return w.Client(ctx, teamID)
}

// listen builds the doors' handler of events on rec, and Socket Mode when
// an app token is set. Events of workspaces allowed refuses are
// acknowledged and dropped.
func (a *slackApp) listen(rec slack.Recorder, allowed func(teamID string) bool) {
	if !a.on() {
		return
	}
	opts := []slack.ConversationsOption{slack.WithAllowedTeams(allowed)}
	if a.installs != nil {
		opts = append(opts, slack.WithRevoker(a.installs))
	}
	a.conv = slack.NewConversations(a.ws, rec, a.logger, opts...)
	if a.cfg.AppToken != "" {
		a.socket = slack.NewSocket(a.clientConfig(), a.conv, a.logger)
	}
}

// events is the HTTP doors' configuration, /weft continue served by c
// (nil: Slack is off); nil (off) without a signing secret.
func (a *slackApp) events(c *tools.Continuer, allowed func(teamID string) bool) *webhooks.Slack {
	if a.conv == nil || a.cfg.SigningSecret == "" {
		return nil
	}
	cmds := map[string]webhooks.SlackCommandHandler{}
	if c != nil {
		cmds["continue"] = slackContinue(c, a.logger)
	}
	return &webhooks.Slack{SigningSecret: a.cfg.SigningSecret, Events: a.conv, Commands: cmds, AllowedTeam: allowed}
}

// continuer serves continue_in_slack and /weft continue, recording
// through rec; nil when Slack is off.
func (a *slackApp) continuer(store *db.Store, rec tools.ContinueRecorder,
	issueURL func(context.Context, *thread.LinearAttachment) (string, error)) *tools.Continuer {
	if !a.on() {
		return nil
	}
	return &tools.Continuer{Store: store, Opener: tools.SlackOpener{Store: store, Slack: slackThreads{a.ws}}, Recorder: rec,
		ChannelID: a.cfg.ContinueChannelID, IssueURLFunc: issueURL}
}

// tools are the agent tools Slack adds: continue_in_slack, when there is
// a conversation elsewhere to continue (Linear or Discord is on too).
func (a *slackApp) tools(elsewhere bool, c *tools.Continuer) []tools.Tool {
	if !a.on() || !elsewhere {
		return nil
	}
	return []tools.Tool{c.Tool()}
}

// OnTurn is the processor's turn hook: "is thinking…" under the thread.
func (a *slackApp) OnTurn() surface.TurnHook {
	if !a.on() {
		return nil
	}
	return slack.NewStatus(a.ws, a.store, a.logger).Thinking
}

// Start runs Socket Mode, if configured, until Stop.
func (a *slackApp) Start(ctx context.Context) error {
	if a.socket == nil {
		return nil
	}
	ctx, a.cancel = context.WithCancel(context.WithoutCancel(ctx))
	a.wg.Go(func() {
		if err := a.socket.Run(ctx); err != nil {
			a.logger.ErrorContext(ctx, "slack socket mode stopped", slog.Any("error", err))
		}
	})
	return nil
}

// Stop closes Socket Mode: an envelope not yet acknowledged is redelivered.
func (a *slackApp) Stop(context.Context) error {
	if a.cancel != nil {
		a.cancel()
	}
	a.wg.Wait()
	return nil
}

// turnHooks runs several processor turn hooks as one.
func turnHooks(hooks ...surface.TurnHook) func(context.Context, uuid.UUID) func() {
	var on []surface.TurnHook
	for _, h := range hooks {
		if h != nil {
			on = append(on, h)
		}
	}
	if len(on) == 0 {
		return nil
	}
	return func(ctx context.Context, id uuid.UUID) func() {
		stops := make([]func(), len(on))
		for i, h := range on {
			stops[i] = h(ctx, id)
		}
		return func() {
			for _, stop := range stops {
				stop()
			}
		}
	}
}
