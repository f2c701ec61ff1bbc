package main

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
	"github.com/weft-dev/weft/internal/ingest"
	"github.com/weft-dev/weft/internal/tools"
	"github.com/weft-dev/weft/webhooks"
)

// discordConfig is the Discord app's settings.
type discordConfig struct {
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

func loadDiscordConfig(getenv func(string) string) (discordConfig, error) {
	c := discordConfig{
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

func (c discordConfig) publicKey() (ed25519.PublicKey, error) {
	key, err := hex.DecodeString(c.PublicKey)
	if err != nil || len(key) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("DISCORD_PUBLIC_KEY: want %d hex-encoded bytes", ed25519.PublicKeySize)
	}
	return key, nil
}

// discordApp is the wired Discord platform. With no bot token every field
// is nil and Discord is off.
type discordApp struct {
	cfg    discordConfig
	client *discord.Client // REST, shared by every shard's gateway
	sender *discord.Sender
	typist *discord.Typist
	// continuer serves continue_in_discord and /continue; its Recorder is
	// the ingester, set by bind once the engine has one.
	continuer *tools.Continuer
	elector   *discord.Elector
	logger    *slog.Logger
}

// newDiscordApp builds the Discord client from the configuration. Without a
// bot token Discord is off and says so once.
func newDiscordApp(c discordConfig, store *db.Store, logger *slog.Logger) (*discordApp, error) {
	app := &discordApp{cfg: c, logger: logger}
	if c.BotToken == "" {
		logger.Info("discord off: set DISCORD_BOT_TOKEN")
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
	app.continuer = &tools.Continuer{Store: store, Discord: client, ChannelID: c.ContinueChannelID}
	if c.PublicKey == "" {
		logger.Warn("discord interactions off: DISCORD_PUBLIC_KEY is not set")
	}
	return app, nil
}

// on reports whether Discord is configured.
func (a *discordApp) on() bool { return a.client != nil }

// tools are the agent tools Discord adds: continue_in_discord, when Linear
// is on too (it continues a Linear session).
func (a *discordApp) tools(linearOn bool) []tools.Tool {
	if !a.on() || !linearOn {
		return nil
	}
	return []tools.Tool{a.continuer.Tool()}
}

// history reads a Discord thread for the prompt; nil when Discord is off.
func (a *discordApp) history() tools.HistoryFetcher {
	if !a.on() {
		return nil
	}
	return discordHistory{a.client}
}

// onTurn is the processor's turn hook: the typing indicator.
func (a *discordApp) onTurn() func(context.Context, uuid.UUID) func() {
	if !a.on() {
		return nil
	}
	return a.typist.Typing
}

// bind gives the app the engine's ingester, which did not exist when the
// tools were registered.
func (a *discordApp) bind(ing *ingest.Ingester) {
	if a.on() {
		a.continuer.Recorder = ing
	}
}

// interactions is POST /webhooks/discord's configuration; nil (the route
// off) without a bot token or public key.
func (a *discordApp) interactions(store *db.Store) *webhooks.DiscordInteractions {
	if !a.on() || a.cfg.PublicKey == "" {
		return nil
	}
	key, _ := a.cfg.publicKey() // validated by loadDiscordConfig
	return &webhooks.DiscordInteractions{
		PublicKey: key, AllowedGuilds: a.cfg.AllowedGuilds, Threads: store,
		Continue: continueCommand{a.continuer}, Responses: a.client,
	}
}

// start registers the slash commands (one bulk overwrite, idempotent) and
// starts contending for the gateway shards.
func (a *discordApp) start(ctx context.Context, store *db.Store, ing *ingest.Ingester) error {
	if !a.on() {
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
	host, _ := os.Hostname()
	a.elector = discord.NewElector(discord.ElectorConfig{
		Shards: a.cfg.ShardCount, Owner: fmt.Sprintf("%s/%d/%s", host, os.Getpid(), uuid.NewString()[:8]), Leases: store,
		NewGateway: func(shardID, shardCount int) (discord.Gateway, error) {
			return a.client.ForShard(shardID, shardCount, discord.NewConversations(a.client, ing, shardID, shardCount, a.logger))
		},
		Logger: a.logger,
	})
	return a.elector.Start(ctx)
}

// shards is the number of gateway shards weft runs; 0 with Discord off.
func (a *discordApp) shards() int {
	if !a.on() {
		return 0
	}
	return max(a.cfg.ShardCount, 1)
}

// shardsHeld counts the gateway shards this replica runs, for /metrics.
func (a *discordApp) shardsHeld() int {
	if a.elector == nil {
		return 0
	}
	return len(a.elector.Held())
}

// stop disconnects the gateway shards and releases them to other replicas.
func (a *discordApp) stop(ctx context.Context) error {
	if a.elector == nil {
		return nil
	}
	if err := a.elector.Stop(ctx); err != nil {
		return err
	}
	return a.client.Stop(ctx)
}

// continueCommand adapts the Continuer to the interactions handler.
type continueCommand struct{ c *tools.Continuer }

func (x continueCommand) ContinueLinear(ctx context.Context, ref, channelID, by string) (string, bool, error) {
	got, err := x.c.ContinueLinear(ctx, ref, channelID, by)
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
