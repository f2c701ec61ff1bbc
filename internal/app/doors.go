package app

import (
	"context"
	"log/slog"
	"strings"
)

// door is one way into weft, on or off, and why.
type door struct {
	name string
	on   bool
	why  string
}

// doors says, for each door, whether this configuration opens it: what an
// operator reads first when a platform stays silent.
func (a *App) doors() []door {
	c := a.cfg
	api := door{name: "api", why: "set WEFT_API_TOKEN to serve /api/v1, /mcp and /metrics"}
	if c.APIToken != "" {
		api = door{name: "api", on: true, why: "WEFT_API_TOKEN is set: /api/v1, /mcp and /metrics take it as a bearer token"}
	}

	lin := door{name: "linear", why: "set LINEAR_ACCESS_TOKEN, or LINEAR_CLIENT_ID with LINEAR_CLIENT_SECRET and WEFT_ENCRYPTION_KEY"}
	if a.linear.sender != nil {
		how := []string{"LINEAR_ACCESS_TOKEN (one workspace)"}
		if a.linear.oauth != nil {
			how = []string{"OAuth installs at /oauth/linear/install"}
		}
		if c.Linear.WebhookSecret == "" {
			how = append(how, "webhooks off: LINEAR_WEBHOOK_SECRET is not set")
		} else {
			how = append(how, "webhooks at /webhooks/linear")
		}
		lin = door{name: "linear", on: true, why: strings.Join(how, "; ")}
	}

	dis := door{name: "discord", why: "set DISCORD_BOT_TOKEN"}
	if a.discord.on() {
		how := []string{"gateway on DISCORD_BOT_TOKEN"}
		if c.Discord.PublicKey == "" {
			how = append(how, "interactions off: DISCORD_PUBLIC_KEY is not set")
		} else {
			how = append(how, "interactions at /webhooks/discord")
		}
		dis = door{name: "discord", on: true, why: strings.Join(how, "; ")}
	}

	sl := door{name: "slack", why: "set SLACK_BOT_TOKEN or SLACK_CLIENT_ID (OAuth installs) with SLACK_SIGNING_SECRET (Events API) or SLACK_APP_TOKEN (Socket Mode)"}
	if a.slack.on() {
		var how []string
		if a.slackTokens != nil {
			how = append(how, "installed workspaces with their own tokens (/oauth/slack/install)")
		}
		if c.Slack.BotToken != "" {
			how = append(how, "SLACK_BOT_TOKEN's workspace with it")
		}
		if c.Slack.SigningSecret == "" {
			how = append(how, "events off: SLACK_SIGNING_SECRET is not set")
		} else {
			how = append(how, "events at /webhooks/slack, /weft at /webhooks/slack/commands")
		}
		if c.Slack.AppToken != "" {
			how = append(how, "socket mode on SLACK_APP_TOKEN")
		}
		sl = door{name: "slack", on: true, why: strings.Join(how, "; ")}
	}

	model := door{name: "model", why: "set WEFT_LLM_PROVIDER (openai or anthropic): until then every turn records an error"}
	switch {
	case c.Role == "api":
		model.why = "WEFT_ROLE=api works no turns"
	case c.LLMProvider != "":
		model = door{name: "model", on: true, why: c.LLMProvider + " " + c.Model + ", fast model " + c.FastModel}
	}
	return []door{api, lin, dis, sl, model}
}

// logDoors logs one line per door. A missing model is a warning: weft
// runs, but cannot answer anyone.
func (a *App) logDoors(ctx context.Context) {
	for _, d := range a.doors() {
		level := slog.LevelInfo
		if d.name == "model" && !d.on && a.cfg.Role != "api" {
			level = slog.LevelWarn
		}
		state := "off"
		if d.on {
			state = "on"
		}
		a.logger.Log(ctx, level, "door "+state, slog.String("door", d.name), slog.String("why", d.why))
	}
}
