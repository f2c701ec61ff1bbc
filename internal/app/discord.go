package app

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/discord"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
	"github.com/weft-dev/weft/webhooks"
)

// DiscordConfig is the Discord app's settings.
type DiscordConfig struct {
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
}

func loadDiscord(getenv func(string) string) (DiscordConfig, error) {
	c := DiscordConfig{
		BotToken:          getenv("DISCORD_BOT_TOKEN"),
		PublicKey:         getenv("DISCORD_PUBLIC_KEY"),
		ApplicationID:     getenv("DISCORD_APPLICATION_ID"),
		CommandGuildID:    getenv("DISCORD_COMMAND_GUILD_ID"),
		APIURL:            getenv("DISCORD_API_URL"),
		GatewayURL:        getenv("DISCORD_GATEWAY_URL"),
		ContinueChannelID: getenv("DISCORD_CONTINUE_CHANNEL_ID"),
	}
	for _, g := range strings.Split(getenv("DISCORD_ALLOWED_GUILDS"), ",") {
		if g = strings.TrimSpace(g); g != "" {
			c.AllowedGuilds = append(c.AllowedGuilds, g)
		}
	}
	var err error
	if c.ShardCount, err = intEnv(getenv, "DISCORD_SHARD_COUNT", 1); err != nil {
		return c, err
	}
	if c.PublicKey != "" {
		if _, err := c.publicKey(); err != nil {
			return c, err
		}
	}
	return c, nil
}

func (c DiscordConfig) publicKey() (ed25519.PublicKey, error) {
	key, err := hex.DecodeString(c.PublicKey)
	if err != nil || len(key) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("DISCORD_PUBLIC_KEY: want %d hex-encoded bytes", ed25519.PublicKeySize)
	}
	return key, nil
}

// discordApp is the wired Discord platform. With no bot token every field
// but cfg is nil and Discord is off.
type discordApp struct {
	cfg    DiscordConfig
	client *discord.Client // REST, shared by every shard's gateway
	sender *discord.Sender
	typist *discord.Typist
	// el holds the gateway shards, once the ingester exists (elect).
	el     *discord.Elector
	logger *slog.Logger
}

// newDiscordApp builds the Discord client from the configuration; without
// a bot token Discord is off.
func newDiscordApp(c DiscordConfig, store *db.Store, logger *slog.Logger) (*discordApp, error) {
	app := &discordApp{cfg: c, logger: logger}
	if c.BotToken == "" {
		return app, nil
	}
	client, err := discord.New(discord.Config{
		Token: c.BotToken, APIBaseURL: c.APIURL, GatewayURL: c.GatewayURL,
		AllowedGuilds: c.AllowedGuilds, Logger: logger,
	})
	if err != nil {
		return nil, err
	}
	app.client = client
	app.sender = discord.NewSender(client)
	app.typist = discord.NewTypist(client, store, 0, logger)
	return app, nil
}

// on reports whether Discord is configured.
func (a *discordApp) on() bool { return a.client != nil }

// Name is Discord.
func (a *discordApp) Name() thread.Platform { return thread.PlatformDiscord }

// Door says whether the gateway runs and interactions are served.
func (a *discordApp) Door() surface.Door {
	if !a.on() {
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
func (a *discordApp) Sender() surface.Sender {
	if !a.on() {
		return nil
	}
	return a.sender
}

// continuer serves continue_in_discord and /continue, recording through
// rec; nil when Discord is off.
func (a *discordApp) continuer(store *db.Store, rec tools.ContinueRecorder,
	issueURL func(context.Context, *thread.LinearAttachment) (string, error)) *tools.Continuer {
	if !a.on() {
		return nil
	}
	return &tools.Continuer{Store: store, Opener: tools.DiscordOpener{Store: store, Discord: a.client}, Recorder: rec,
		ChannelID: a.cfg.ContinueChannelID, IssueURLFunc: issueURL}
}

// tools are the agent tools Discord adds: continue_in_discord, when there
// is a conversation elsewhere to continue (Linear or Slack is on too).
func (a *discordApp) tools(elsewhere bool, c *tools.Continuer) []tools.Tool {
	if !a.on() || !elsewhere {
		return nil
	}
	return []tools.Tool{c.Tool()}
}

// history reads a Discord thread for the prompt; nil when Discord is off.
func (a *discordApp) history() tools.HistoryFetcher {
	if !a.on() {
		return nil
	}
	return discordHistory{a.client}
}

// OnTurn is the processor's turn hook: the typing indicator.
func (a *discordApp) OnTurn() surface.TurnHook {
	if !a.on() {
		return nil
	}
	return a.typist.Typing
}

// interactions is POST /webhooks/discord's configuration; nil (the route
// off) without a bot token or public key.
func (a *discordApp) interactions(store *db.Store, c *tools.Continuer) *webhooks.DiscordInteractions {
	if !a.on() || a.cfg.PublicKey == "" {
		return nil
	}
	key, _ := a.cfg.publicKey() // validated by loadDiscord
	return &webhooks.DiscordInteractions{
		PublicKey: key, AllowedGuilds: a.cfg.AllowedGuilds, Threads: store,
		Continue: continueCommand{c}, Responses: a.client,
	}
}

// elect builds the elector that contends for the gateway shards through
// leases in store, each shard's events going to rec; none when Discord is
// off.
func (a *discordApp) elect(store *db.Store, rec discord.Recorder) {
	if !a.on() {
		return
	}
	host, _ := os.Hostname()
	a.el = discord.NewElector(discord.ElectorConfig{
		Shards: a.cfg.ShardCount, Owner: fmt.Sprintf("%s/%d/%s", host, os.Getpid(), uuid.NewString()[:8]), Leases: store,
		NewGateway: func(shardID, shardCount int) (discord.Gateway, error) {
			return a.client.ForShard(shardID, shardCount, discord.NewConversations(a.client, rec, shardID, shardCount, a.logger))
		},
		Logger: a.logger,
	})
}

// Start registers the slash commands (one bulk overwrite, idempotent) and
// starts the elector contending for the gateway shards.
func (a *discordApp) Start(ctx context.Context) error {
	e := a.el
	if e == nil {
		return nil
	}
	if a.cfg.ApplicationID != "" {
		if err := a.client.RegisterCommands(ctx, a.cfg.ApplicationID, a.cfg.CommandGuildID); err != nil {
			// Commands registered by an earlier start still work.
			a.logger.WarnContext(ctx, "discord commands not registered", slog.Any("error", err))
		}
	} else {
		a.logger.InfoContext(ctx, "discord commands not registered: DISCORD_APPLICATION_ID is not set")
	}
	return e.Start(ctx)
}

// shards is the number of gateway shards weft runs; 0 with Discord off.
func (a *discordApp) shards() int {
	if !a.on() {
		return 0
	}
	return max(a.cfg.ShardCount, 1)
}

// Stop disconnects the gateway shards and releases them to other replicas.
func (a *discordApp) Stop(ctx context.Context) error {
	e := a.el
	if e == nil {
		return nil
	}
	if err := e.Stop(ctx); err != nil {
		return err
	}
	return a.client.Stop(ctx)
}

// continueCommand adapts the Continuer to the interactions handler.
type continueCommand struct{ c *tools.Continuer }

func (x continueCommand) ContinueLinear(ctx context.Context, ref, channelID, guildID, by string) (string, bool, error) {
	got, err := x.c.ContinueRef(ctx, ref, channelID, thread.DiscordTenant(guildID), by)
	if err != nil {
		return "", false, err
	}
	return got.URL, got.Existing, nil
}

// discordHistoryLimit is how many of a Discord thread's latest messages
// the prompt's history section shows.
const discordHistoryLimit = 50

// discordHistory reads a Discord thread's latest messages for the prompt.
type discordHistory struct{ c *discord.Client }

func (h discordHistory) ThreadHistory(ctx context.Context, ref tools.HistoryRef) ([]tools.HistoryMessage, error) {
	msgs, err := h.c.MessagesBefore(ctx, ref.ID, "", discordHistoryLimit)
	if err != nil {
		return nil, err
	}
	out := make([]tools.HistoryMessage, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, tools.HistoryMessage{ID: m.ID, Author: m.Author.Name, Text: m.Content})
	}
	return out, nil
}
