// Package slack is Slack's side of the seam: its configuration, the
// workspaces' Web API clients, sender, thinking status and Socket Mode,
// its door and events, history, discovery and continuation.
package slack

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/continuation"
	slackapi "github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/streamer"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

// Config is Slack's part of the configuration (the OAuth installs'
// is SlackInstallConfig).
type Config struct {
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
	// APIURL replaces https://slackapi.com/api/ (SLACK_API_URL), e.g. a fake.
	APIURL string
	// ContinueChannelID is where /weft continue and continue_in_slack
	// open threads (SLACK_CONTINUE_CHANNEL_ID); empty means the channel
	// the command came from (the tool then has none).
	ContinueChannelID string
	// HistoryPerMinute paces conversations.history and .replies in each
	// workspace (SLACK_HISTORY_PER_MINUTE, 50: Slack's Tier 3; 1 for an
	// app distributed outside the Marketplace).
	HistoryPerMinute int
	// Stream tunes answers streamed as the model writes them.
	Stream StreamConfig
	// Assistant is the feedback buttons and the AI app surfaces.
	Assistant Assistant
}

// App is Slack, built: the Web API clients (one per workspace), the
// outbox's sender, the thinking status, and the doors once the ingester
// exists.
type App struct {
	cfg    Config
	logger *slog.Logger
	// store holds the threads the thinking status finds its Slack thread by.
	store *db.Store
	ws    *slackapi.Workspaces
	// installs are the OAuth installations; nil without OAuth.
	installs *Installations
	sender   *slackapi.Sender
	// streamer writes answers into their messages as the model writes
	// them (when WEFT_STREAM_SLACK leaves it on), and the sender finishes
	// them.
	streamer *streamer.Streamer
	conv     *slackapi.Conversations
	socket   *slackapi.Socket
	// doors are the HTTP routes, once Serve has their dependencies.
	doors *Doors
	// interact runs commands and block actions, over HTTP and the socket.
	interact *Interactivity
	// feedback counts clicks on the feedback buttons.
	feedback *prometheus.CounterVec
	// approvals decides requests for approval from their buttons
	// (DecideThrough).
	approvals surface.Approvals

	wg     sync.WaitGroup
	cancel context.CancelFunc
}

// New builds Slack on SLACK_BOT_TOKEN and the OAuth installs'
// tokens (installs; nil without OAuth): off with neither.
func New(cfg Config, store *db.Store, installs *Installations, logger *slog.Logger) (*App, error) {
	a := &App{cfg: cfg, logger: logger.With("component", "slack"), store: store, installs: installs, feedback: newFeedbackCounter()}
	var src slackapi.TokenSource
	if installs != nil {
		src = installs
	} else if cfg.BotToken == "" {
		return a, nil
	}
	ws, err := slackapi.NewWorkspaces(a.clientConfig(), src)
	if err != nil {
		return nil, fmt.Errorf("slack: %w", err)
	}
	a.ws, a.sender = ws, slackapi.NewSender(ws, slackapi.WithFeedback(a.feedbackOn()), slackapi.WithApprovalButtons(a.interactive()))
	a.streamer = newStreamer(ws, store, cfg.Stream, a)
	return a, nil
}

func (a *App) clientConfig() slackapi.Config {
	return slackapi.Config{Token: a.cfg.BotToken, AppToken: a.cfg.AppToken, APIURL: a.cfg.APIURL, Logger: a.logger,
		HistoryPerMinute: a.cfg.HistoryPerMinute}
}

// feedbackOn reports whether answers carry feedback buttons: unless
// turned off, when a click can reach weft (interactivity over HTTP, which
// needs the signing secret, or Socket Mode).
func (a *App) feedbackOn() bool {
	return !a.cfg.Assistant.NoFeedback && a.interactive()
}

// interactive reports whether a click can reach weft: interactivity over
// HTTP (which needs the signing secret) or Socket Mode. Requests for
// approval carry buttons then; else they are answered with a reply.
func (a *App) interactive() bool {
	return a.cfg.SigningSecret != "" || a.cfg.AppToken != ""
}

// Collectors are Slack's own series: weft_feedback_total.
func (a *App) Collectors() []prometheus.Collector { return []prometheus.Collector{a.feedback} }

// On reports whether Slack is configured.
func (a *App) On() bool { return a != nil && a.ws != nil }

// Name is Slack.
func (a *App) Name() thread.Platform { return thread.PlatformSlack }

// Door says which workspaces Slack reaches and through which doors.
func (a *App) Door() surface.Door {
	if !a.On() {
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
		how = append(how, "events at /webhooks/slack, /weft at /webhooks/slack/commands, interactivity at /webhooks/slack/interactions")
	}
	if a.cfg.AppToken != "" {
		how = append(how, "socket mode on SLACK_APP_TOKEN")
	}
	return surface.Door{Name: "slack", On: true, Why: strings.Join(how, "; ")}
}

// Sender delivers to Slack; nil with Slack off.
func (a *App) Sender() surface.Sender {
	if !a.On() {
		return nil
	}
	return a.streamer.Sender(a.sender, a.finish)
}

// PlainSender delivers to Slack without finishing streamed messages, for
// streaming off; nil with Slack off.
func (a *App) PlainSender() surface.Sender {
	if !a.On() {
		return nil
	}
	return a.sender
}

// Workspaces are the workspaces' clients; nil with Slack off.
func (a *App) Workspaces() *slackapi.Workspaces { return a.ws }

// slackThreads are the workspaces' clients as the continue tools open
// threads with them.
type slackThreads struct{ *slackapi.Workspaces }

func (w slackThreads) Threads(ctx context.Context, teamID string) (ThreadStarter, error) {
	return w.Client(ctx, teamID)
}

// ListenDeps is what Slack's doors hand on what arrives.
type ListenDeps struct {
	// Recorder records events, clicks and commands' effects (the ingester).
	Recorder surface.Recorder
	// Allowed says whether a workspace may use weft (SLACK_ALLOWED_TEAMS);
	// nil allows any. Others' events and clicks are acknowledged and
	// dropped, their commands refused.
	Allowed func(teamID string) bool
	// Continuer serves /weft continue; nil leaves it out.
	Continuer *continuation.Continuer
	// Aborter serves /weft stop.
	Aborter Aborter
	// Actions are the handlers of block actions on weft's messages by
	// action_id prefix, beside Slack's own feedback buttons
	// (slackapi.FeedbackActionID): where a feature's buttons plug in, as
	// tool approvals' "weft_approval:" (see Interactivity).
	Actions map[string]ActionHandler
}

// Listen builds the doors' handlers: of events, of /weft and of block
// actions, over HTTP and over Socket Mode when an app token is set.
func (a *App) Listen(d ListenDeps) {
	if !a.On() {
		return
	}
	opts := []slackapi.ConversationsOption{slackapi.WithAllowedTeams(d.Allowed),
		slackapi.WithGreeter(slackapi.NewGreeter(a.ws, a.cfg.Assistant.PromptsTitle, a.cfg.Assistant.Prompts, a.logger))}
	if a.installs != nil {
		opts = append(opts, slackapi.WithRevoker(a.installs))
	}
	a.conv = slackapi.NewConversations(a.ws, recorder{d.Recorder}, a.logger, opts...)
	cmds := map[string]CommandHandler{}
	if d.Aborter != nil {
		cmds["stop"] = slackStop(a.store, d.Aborter, a.logger)
	}
	if d.Continuer != nil {
		cmds["continue"] = slackContinue(d.Continuer, a.logger)
	}
	actions := map[string]ActionHandler{slackapi.FeedbackActionID: feedback(d.Recorder, a.ws, a.feedback, a.logger),
		slackapi.ApprovalActionPrefix: approvalAction(approvalDeps{Approvals: a.approvals, Names: a.ws, Logger: a.logger,
			Client: func(ctx context.Context, teamID string) (approvalClient, error) { return a.ws.Client(ctx, teamID) }})}
	for prefix, h := range d.Actions {
		actions[prefix] = h
	}
	a.interact = &Interactivity{Commands: cmds, Actions: actions, AllowedTeam: d.Allowed, Logger: a.logger}
	if a.cfg.AppToken != "" {
		a.socket = slackapi.NewSocket(a.clientConfig(), a.conv, a.logger, slackapi.WithInteractions(a.interact))
	}
}

// Serve sets up the HTTP doors Listen built (events, /weft and
// interactivity) when a signing secret is set, and the install flow o
// (nil: off).
func (a *App) Serve(o *OAuth) {
	a.doors = &Doors{OAuth: o}
	if a.conv == nil || a.cfg.SigningSecret == "" {
		return
	}
	in := a.interact
	a.doors.SigningSecret, a.doors.Events, a.doors.Commands, a.doors.Actions, a.doors.AllowedTeam =
		a.cfg.SigningSecret, a.conv, in.Commands, in.Actions, in.AllowedTeam
}

// Routes mounts the doors Serve set up.
func (a *App) Routes(r chi.Router, m surface.Mount) {
	if a.doors != nil {
		a.doors.Routes(r, m)
	}
}

// Hint is what people type to name one of Slack's conversations.
func (a *App) Hint() string { return Refs{}.Hint() }

// Resolve finds the thread a Slack message's link names, for continuing
// it elsewhere.
func (a *App) Resolve(ctx context.Context, ref, organisation string) (*thread.Thread, error) {
	return Refs{Store: a.store}.Resolve(ctx, ref, organisation)
}

// Continuer serves continue_in_slack and /weft continue, recording
// through rec and finding what /weft continue names through refs, linking back through origins; nil
// when Slack is off.
func (a *App) Continuer(store *db.Store, rec continuation.Recorder, refs []continuation.Resolver,
	origins []continuation.Originator) *continuation.Continuer {
	if !a.On() {
		return nil
	}
	return &continuation.Continuer{Store: store, Opener: Opener{Store: store, Slack: slackThreads{a.ws}}, Recorder: rec, Refs: refs,
		ChannelID: a.cfg.ContinueChannelID, ChannelSetting: "SLACK_CONTINUE_CHANNEL_ID", Origins: origins}
}

// Tools are the agent tools Slack adds: continue_in_slack, when there is
// a conversation elsewhere to continue (another platform is on too).
func (a *App) Tools(elsewhere bool, c *continuation.Continuer) []tools.Tool {
	if !a.On() || !elsewhere {
		return nil
	}
	return []tools.Tool{c.Tool()}
}

// OnTurn is the processor's turn hook: "is thinking…" under the thread.
func (a *App) OnTurn() surface.TurnHook {
	if !a.On() {
		return nil
	}
	return slackapi.NewStatus(a.ws, a.store, a.logger, slackapi.WithLoading(slackapi.LoadingMessages), slackapi.WithTitles(a.store)).Thinking
}

// Start runs Socket Mode, if configured, until Stop.
func (a *App) Start(ctx context.Context) error {
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
func (a *App) Stop(context.Context) error {
	if a.cancel != nil {
		a.cancel()
	}
	a.wg.Wait()
	return nil
}
