// Package discord is Discord's side of the seam: its configuration, the
// wired REST client, sender, typing indicator and gateway shards, its door,
// interactions, history and continuation.
package discord

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/continuation"
	discordapi "github.com/weft-dev/weft/internal/discord"
	"github.com/weft-dev/weft/internal/history"
	"github.com/weft-dev/weft/internal/metrics"
	"github.com/weft-dev/weft/internal/streamer"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

// Config is the Discord app's settings.
type Config struct {
	BotToken string
	// PublicKey is the application's Ed25519 key, hex (interactions).
	PublicKey     string
	ApplicationID string
	// CommandGuildID registers the slash commands in one guild, where they
	// update at once (development), instead of globally.
	CommandGuildID    string
	APIURL            string // "" is Discord; a fake's URL in tests and demos
	GatewayURL        string // "" asks the API
	ContinueChannelID string
	AllowedGuilds     []string
	ShardCount        int
	// StreamInterval is the least time between two edits of a streamed
	// answer; 0 means EditInterval.
	StreamInterval time.Duration
}

// Key is PublicKey decoded.
func (c Config) Key() (ed25519.PublicKey, error) {
	key, err := hex.DecodeString(c.PublicKey)
	if err != nil || len(key) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("DISCORD_PUBLIC_KEY: want %d hex-encoded bytes", ed25519.PublicKeySize)
	}
	return key, nil
}

// App is the wired Discord platform. With no bot token every field
// but cfg is nil and Discord is off.
type App struct {
	cfg    Config
	client *discordapi.Client // REST, shared by every shard's gateway
	sender *discordapi.Sender
	typist *discordapi.Typist
	// streamer writes answers into their messages as the model writes
	// them (when WEFT_STREAM_DISCORD leaves it on), and the sender
	// finishes them.
	streamer *streamer.Streamer
	// el holds the gateway shards, once the ingester exists (elect).
	el *discordapi.Elector
	// interactions is POST /webhooks/discord, once Serve has its
	// dependencies; nil (the route off) without a public key.
	interactions *Interactions
	// approvals decides approval requests' buttons (DecideThrough).
	approvals surface.Approvals
	// targetHelp is /continue's target described, from the platforms
	// the continuer asks (Serve).
	targetHelp string
	refs       Refs
	logger     *slog.Logger
}

// New builds the Discord client from the configuration; without
// a bot token Discord is off.
func New(c Config, store *db.Store, logger *slog.Logger) (*App, error) {
	app := &App{cfg: c, refs: Refs{Store: store}, logger: logger}
	if c.BotToken == "" {
		return app, nil
	}
	client, err := discordapi.New(discordapi.Config{
		Token: c.BotToken, APIBaseURL: c.APIURL, GatewayURL: c.GatewayURL,
		AllowedGuilds: c.AllowedGuilds, Logger: logger,
	})
	if err != nil {
		return nil, err
	}
	app.client = client
	app.sender = discordapi.NewSender(client)
	sp := newStreamPlatform(client, c.StreamInterval)
	app.streamer = streamer.New(streamer.Deps{Store: store, Platform: sp, Logger: logger.With("component", "discord_stream")})
	app.typist = discordapi.NewTypist(discordapi.TypistDeps{Client: client, Surfaces: store, Quiet: sp.quiet, Logger: logger})
	return app, nil
}

// On reports whether Discord is configured.
func (a *App) On() bool { return a.client != nil }

// Name is Discord.
func (a *App) Name() thread.Platform { return thread.PlatformDiscord }

// Door says whether the gateway runs and interactions are served.
func (a *App) Door() surface.Door {
	if !a.On() {
		return surface.Door{Name: "discord", Why: "set DISCORD_BOT_TOKEN"}
	}
	how := []string{"gateway on DISCORD_BOT_TOKEN"}
	if a.cfg.PublicKey == "" {
		how = append(how, "interactions off: DISCORD_PUBLIC_KEY is not set")
	} else {
		how = append(how, "interactions at /webhooks/discord")
	}
	return surface.Door{Name: "discord", On: true, Why: strings.Join(how, "; ")}
}

// Sender delivers to Discord; nil with Discord off.
func (a *App) Sender() surface.Sender {
	if !a.On() {
		return nil
	}
	return a.streamer.Sender(a.sender, a.finish)
}

// PlainSender delivers to Discord without finishing streamed messages, for
// streaming off; nil with Discord off.
func (a *App) PlainSender() surface.Sender {
	if !a.On() {
		return nil
	}
	return a.sender
}

// Hint is what people type to name one of Discord's conversations.
func (a *App) Hint() string { return Refs{}.Hint() }

// Resolve finds the thread a Discord thread's link names, for continuing
// it elsewhere.
func (a *App) Resolve(ctx context.Context, ref, organisation string) (*thread.Thread, error) {
	return a.refs.Resolve(ctx, ref, organisation)
}

// Continuer serves continue_in_discord and /continue, recording through
// rec and finding what /continue names through refs, linking back through origins; nil when Discord
// is off.
func (a *App) Continuer(store *db.Store, rec continuation.Recorder, refs []continuation.Resolver,
	origins []continuation.Originator) *continuation.Continuer {
	if !a.On() {
		return nil
	}
	return &continuation.Continuer{Store: store, Opener: Opener{Store: store, Discord: a.client}, Recorder: rec, Refs: refs,
		ChannelID: a.cfg.ContinueChannelID, ChannelSetting: "DISCORD_CONTINUE_CHANNEL_ID", Origins: origins}
}

// Tools are the agent tools Discord adds: continue_in_discord, when there
// is a conversation elsewhere to continue (another platform is on too).
func (a *App) Tools(elsewhere bool, c *continuation.Continuer) []tools.Tool {
	if !a.On() || !elsewhere {
		return nil
	}
	return []tools.Tool{c.Tool()}
}

// HistorySection puts a Discord thread's history in the prompt; nil when
// Discord is off.
func (a *App) HistorySection(store *db.Store) history.Section {
	if !a.On() {
		return nil
	}
	return HistorySection(discordHistory{a.client}, store)
}

// OnTurn is the processor's turn hook: the typing indicator.
func (a *App) OnTurn() surface.TurnHook {
	if !a.On() {
		return nil
	}
	return a.typist.Typing
}

// Serve gives POST /webhooks/discord what it needs: the threads /weft
// status reads and the other platforms it lists them on, /continue's
// continuer and /weft stop's aborter. The route
// stays off without a bot token or public key.
func (a *App) Serve(store *db.Store, c *continuation.Continuer, ab Aborter, elsewhere []Describer) {
	if !a.On() {
		return
	}
	if c != nil {
		a.targetHelp = c.Hints()
	}
	if a.cfg.PublicKey == "" {
		return
	}
	key, _ := a.cfg.Key() // validated by loadDiscord
	a.interactions = &Interactions{
		PublicKey: key, AllowedGuilds: a.cfg.AllowedGuilds, Threads: store, Elsewhere: elsewhere,
		Continue: continueCommand{c}, Responses: a.client, Aborter: ab, Approvals: a.approvals,
	}
}

// DecideThrough makes the Approve and Deny buttons under approval
// requests decide through ap (surface.Approving). Call it before Serve.
func (a *App) DecideThrough(ap surface.Approvals) { a.approvals = ap }

var _ surface.Approving = (*App)(nil)

// ShowDecided rewrites weft's message of a request decided elsewhere: it
// says who decided, and loses its buttons (surface.ShowingDecisions).
func (a *App) ShowDecided(ctx context.Context, post thread.Outbox, ap *thread.Approval) error {
	if !a.On() || post.ExternalID == "" {
		return nil
	}
	body, err := surface.Body(thread.PlatformDiscord, post)
	if err != nil {
		return err
	}
	text := discordapi.Render(post.Kind, body)
	if len(discordapi.Parts(text)) != 1 {
		return nil // the buttons are on a later part, whose id is not kept
	}
	return a.client.EditDecided(ctx, post.Target, post.ExternalID, withDecision(text, ap))
}

var _ surface.ShowingDecisions = (*App)(nil)

// Routes mounts the interactions' route when Serve turned it on.
func (a *App) Routes(r chi.Router, m surface.Mount) {
	if a.interactions == nil {
		m.Logger.Debug("discord interactions off: no public key")
		return
	}
	a.interactions.Routes(r, m)
}

// Elect builds the elector that contends for the gateway shards through
// leases in store, each shard's events recorded through rec (see
// Recorder), counted in m and traced on tp; none when Discord is off.
func (a *App) Elect(store *db.Store, events surface.Recorder, m *metrics.Metrics, tp trace.TracerProvider) {
	if !a.On() {
		return
	}
	rec := NewRecorder(events, store, m, tp)
	host, _ := os.Hostname()
	a.el = discordapi.NewElector(discordapi.ElectorConfig{
		Shards: a.cfg.ShardCount, Owner: fmt.Sprintf("%s/%d/%s", host, os.Getpid(), uuid.NewString()[:8]), Leases: store,
		NewGateway: func(shardID, shardCount int) (discordapi.Gateway, error) {
			return a.client.ForShard(shardID, shardCount, discordapi.NewConversations(discordapi.ConversationsDeps{
				REST: a.client, Recorder: rec, ShardID: shardID, ShardCount: shardCount, Logger: a.logger}))
		},
		Logger: a.logger,
	})
}

// Start registers the slash commands (one bulk overwrite, idempotent) and
// starts the elector contending for the gateway shards.
func (a *App) Start(ctx context.Context) error {
	e := a.el
	if e == nil {
		return nil
	}
	if a.cfg.ApplicationID != "" {
		if err := a.client.RegisterCommands(ctx, a.cfg.ApplicationID, a.cfg.CommandGuildID, a.targetHelp); err != nil {
			// Commands registered by an earlier start still work.
			a.logger.WarnContext(ctx, "discord commands not registered", slog.Any("error", err))
		}
	} else {
		a.logger.InfoContext(ctx, "discord commands not registered: DISCORD_APPLICATION_ID is not set")
	}
	return e.Start(ctx)
}

// Shards is the number of gateway shards weft runs; 0 with Discord off.
func (a *App) Shards() int {
	if !a.On() {
		return 0
	}
	return max(a.cfg.ShardCount, 1)
}

// Stop disconnects the gateway shards and releases them to other replicas.
func (a *App) Stop(ctx context.Context) error {
	e := a.el
	if e == nil {
		return nil
	}
	if err := e.Stop(ctx); err != nil {
		return err
	}
	return a.client.Stop(ctx)
}

// Client is the REST client; nil with Discord off.
func (a *App) Client() *discordapi.Client { return a.client }

// Elector holds the gateway shards; nil with Discord off.
func (a *App) Elector() *discordapi.Elector { return a.el }

// continueCommand adapts the Continuer to the interactions handler.
type continueCommand struct{ c *continuation.Continuer }

func (x continueCommand) ContinueRef(ctx context.Context, ref, channelID, guildID, by string) (string, bool, error) {
	got, err := x.c.ContinueRef(ctx, ref, channelID, thread.DiscordTenant(guildID), by)
	if err != nil {
		return "", false, err
	}
	return got.URL, got.Existing, nil
}

func (x continueCommand) Elsewhere() string { return x.c.Elsewhere() }

// discordHistoryLimit is how many of a Discord thread's latest messages
// the prompt's history section shows.
const discordHistoryLimit = 50

// discordHistory reads a Discord thread's latest messages for the prompt.
type discordHistory struct{ c *discordapi.Client }

func (h discordHistory) ThreadHistory(ctx context.Context, ref history.Ref) ([]history.Message, error) {
	msgs, err := h.c.MessagesBefore(ctx, ref.ID, "", discordHistoryLimit)
	if err != nil {
		return nil, err
	}
	out := make([]history.Message, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, history.Message{ID: m.ID, Author: m.Author.Name, Text: m.Content, Edited: !m.EditedAt.IsZero()})
	}
	return out, nil
}
