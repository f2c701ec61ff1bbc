// Package demo is `weft demo`: the project's own fakes of Linear, Discord
// and a model, started in-process, and a short story played through weft's
// real doors (signed Linear webhooks, signed Discord interactions, messages
// on the Discord gateway) while weft serves against them. Each step is
// printed as the platforms see it. The command that runs weft beside it
// lives in cmd/weft; this package only builds the world and plays the story.
package demo

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/discord/discordtest"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
)

// The story's cast and places.
var (
	ada = discordtest.User{ID: "700000000000000042", Name: "ada"}
	// guild is the demo's Discord server; weft is told to answer only there.
	guild = "700000000000000001"
)

const (
	// demoOrganisation holds the demo's Linear workspace and Discord server.
	demoOrganisation = "demo"
	adaName          = "Ada Lovelace"
	graceName        = "Grace Hopper"
	graceRemark      = "Seen on staging too: after SSO I land on /dashboard instead of /billing."
)

// World is the fakes weft is pointed at: Linear, Discord, and (unless a
// real model is used) the scripted model.
type World struct {
	Linear  *lineartest.Server
	Discord *discordtest.Server
	// Model is the scripted model; nil when weft uses a real one.
	Model *llmtest.Server
	// Pace is the scripted model's wait between the words of a streamed
	// answer (scriptPace unless changed before Run); 0 streams each answer
	// at once.
	Pace time.Duration

	linearToken   string
	webhookSecret []byte
	signer        lineartest.Signer
	keys          *discordtest.InteractionSigner
	channel       string // the Discord channel the story happens in
	issueID       string
}

// New starts the fakes and seeds them: a Linear team and issue with a
// comment, a Discord server with one channel. With scripted false no model
// is started and weft keeps the model it is configured with.
func New(scripted bool) *World {
	secret := make([]byte, 16)
	_, _ = rand.Read(secret) // never fails (crypto/rand)
	w := &World{
		Linear: lineartest.NewServer(nil), Discord: discordtest.NewServer(nil),
		linearToken: "lin_api_demo", webhookSecret: []byte(hex.EncodeToString(secret)),
		keys: discordtest.NewInteractionSigner(), issueID: uuid.NewString(),
	}
	w.signer = lineartest.Signer{Secret: w.webhookSecret}
	if scripted {
		w.Model = llmtest.NewServer(nil)
		w.Pace = scriptPace
		w.Model.SetDefault(func(r llmtest.Request) llmtest.Reply {
			reply := script(r)
			reply.Pace = w.Pace
			return reply
		})
	}
	w.Linear.AddToken(w.linearToken, lineartest.OrganizationID)
	team := lineartest.Team{ID: uuid.NewString(), Key: "ENG", Name: "Engineering", States: []lineartest.State{
		{ID: uuid.NewString(), Name: "In Progress", Type: "started", Position: 2},
	}}
	w.Linear.AddTeam(team)
	w.Linear.AddIssue(lineartest.Issue{
		ID: w.issueID, Identifier: issueKey, Title: issueTitle, Description: issueText,
		URL: "https://linear.app/demo/issue/" + issueKey, TeamID: team.ID, StateID: team.States[0].ID,
		Comments: []lineartest.Comment{{ID: uuid.NewString(), Body: graceRemark, AuthorName: graceName,
			CreatedAt: time.Now().Add(-time.Hour)}},
	})
	w.channel = w.Discord.AddChannel(guild)
	return w
}

// Close stops the fakes.
func (w *World) Close() {
	w.Discord.Close()
	w.Linear.Close()
	if w.Model != nil {
		w.Model.Close()
	}
}

// Settings is the environment that points weft at the fakes, to lay over
// the process's: Linear with a static token and a webhook secret, Discord
// with its bot, interactions and slash commands in the demo's server only,
// and the scripted model unless a real one is used.
func (w *World) Settings() map[string]string {
	s := map[string]string{
		"LINEAR_ACCESS_TOKEN": w.linearToken, "LINEAR_WEBHOOK_SECRET": string(w.webhookSecret),
		"LINEAR_API_URL": w.Linear.URL(), "LINEAR_CLIENT_ID": "",
		"DISCORD_BOT_TOKEN": discordtest.Token, "DISCORD_API_URL": w.Discord.URL(), "DISCORD_GATEWAY_URL": "",
		"DISCORD_PUBLIC_KEY": w.keys.PublicKeyHex(), "DISCORD_APPLICATION_ID": w.Discord.ApplicationID(),
		"DISCORD_COMMAND_GUILD_ID": guild, "DISCORD_ALLOWED_GUILDS": guild,
		"DISCORD_CONTINUE_CHANNEL_ID": "", "DISCORD_SHARD_COUNT": "1",
	}
	if w.Model != nil {
		s["WEFT_LLM_PROVIDER"], s["OPENAI_API_KEY"], s["OPENAI_BASE_URL"] = "openai", "demo", w.Model.OpenAIBaseURL()
		s["WEFT_MODEL"], s["WEFT_FAST_MODEL"] = ScriptedModel, ScriptedModel
	}
	return s
}

// scriptPace is how fast the scripted model writes when weft streams: a
// word every 40ms, about as fast as a real model, so the console shows
// each answer being written.
const scriptPace = 40 * time.Millisecond
