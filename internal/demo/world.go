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
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/discord/discordtest"
	"github.com/weft-dev/weft/internal/linear/lineartest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/slack/slacktest"
)

// The story's cast and places.
var (
	ada = discordtest.User{ID: "700000000000000042", Name: "ada"}
	// guild is the demo's Discord server; weft is told to answer only there.
	guild = "700000000000000001"
	// slackAda is Ada in the demo's Slack workspace (slacktest.TeamID).
	slackAda = slacktest.User{ID: "U0DEMOADA", Name: "ada"}
)

// slackChannel is the Slack channel the Slack step happens in.
const slackChannel = "C0DEMOENG"

const (
	// demoOrganisation holds the demo's Linear workspace and Discord server.
	demoOrganisation = "demo"
	adaName          = "Ada Lovelace"
	graceName        = "Grace Hopper"
	graceRemark      = "Seen on staging too: after SSO I land on /dashboard instead of /billing."
)

// World is the fakes weft is pointed at: Linear, Discord, Slack, and
// (unless a real model is used) the scripted model; and the files of the
// demo's notes MCP server.
type World struct {
	Linear  *lineartest.Server
	Discord *discordtest.Server
	Slack   *slacktest.Server
	// NotesFile is where the notes MCP server writes its notes, one JSON
	// line per write_note call.
	NotesFile string
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
	dir           string // the temporary directory of the MCP config and notes
}

// New starts the fakes and seeds them: a Linear team and issue with a
// comment, a Discord server with one channel, a Slack workspace with one
// channel, and a temporary directory for the notes MCP server. With
// scripted false no model is started and weft keeps the model it is
// configured with.
func New(scripted bool) (*World, error) {
	dir, err := os.MkdirTemp("", "weft-demo-")
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	secret := make([]byte, 16)
	_, _ = rand.Read(secret) // never fails (crypto/rand)
	w := &World{
		Linear: lineartest.NewServer(nil), Discord: discordtest.NewServer(nil), Slack: slacktest.NewServer(nil),
		linearToken: "lin_api_demo", webhookSecret: []byte(hex.EncodeToString(secret)),
		keys: discordtest.NewInteractionSigner(), issueID: uuid.NewString(),
		dir: dir, NotesFile: filepath.Join(dir, "notes.jsonl"),
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
	w.Slack.AddChannel(slackChannel, "channel")
	w.Slack.AddUser(slackAda)
	w.Slack.AddMember(slackChannel, slackAda.ID)
	return w, nil
}

// Close stops the fakes and removes the notes server's files.
func (w *World) Close() {
	w.Slack.Close()
	_ = os.RemoveAll(w.dir)
	w.Discord.Close()
	w.Linear.Close()
	if w.Model != nil {
		w.Model.Close()
	}
}

// Settings is the environment that points weft at the fakes, to lay over
// the process's: Linear with a static token and a webhook secret, Discord
// with its bot, interactions and slash commands in the demo's server only,
// Slack with a bot token and the Events API (no Socket Mode, no OAuth
// install), and the scripted model unless a real one is used.
func (w *World) Settings() map[string]string {
	s := map[string]string{
		"LINEAR_ACCESS_TOKEN": w.linearToken, "LINEAR_WEBHOOK_SECRET": string(w.webhookSecret),
		"LINEAR_API_URL": w.Linear.URL(), "LINEAR_CLIENT_ID": "",
		"DISCORD_BOT_TOKEN": discordtest.Token, "DISCORD_API_URL": w.Discord.URL(), "DISCORD_GATEWAY_URL": "",
		"DISCORD_PUBLIC_KEY": w.keys.PublicKeyHex(), "DISCORD_APPLICATION_ID": w.Discord.ApplicationID(),
		"DISCORD_COMMAND_GUILD_ID": guild, "DISCORD_ALLOWED_GUILDS": guild,
		"DISCORD_CONTINUE_CHANNEL_ID": "", "DISCORD_SHARD_COUNT": "1",
		"SLACK_BOT_TOKEN": slacktest.BotToken, "SLACK_SIGNING_SECRET": slacktest.SigningSecret,
		"SLACK_API_URL": w.Slack.APIURL(), "SLACK_APP_TOKEN": "", "SLACK_CLIENT_ID": "", "SLACK_CLIENT_SECRET": "",
		"SLACK_ALLOWED_TEAMS": slacktest.TeamID, "SLACK_CONTINUE_CHANNEL_ID": "",
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
