package discord

import (
	"context"

	"github.com/bwmarrin/discordgo"
)

// Names of weft's application commands and their options.
const (
	commandContinue  = "continue"
	optionTarget     = "target"
	commandWeft      = "weft"
	subcommandStatus = "status"
	subcommandStop   = "stop"
)

// maxDescription is Discord's limit on a command's or option's
// description, in code points.
const maxDescription = 100

// Commands are weft's slash commands: /continue <target>, /weft status
// and /weft stop. targetHelp says what /continue's target may be (the
// platforms weft finds conversations on say it); empty, a generic line.
func Commands(targetHelp string) []*discordgo.ApplicationCommand {
	if targetHelp == "" {
		targetHelp = "the link or key of the conversation to continue"
	}
	if r := []rune(targetHelp); len(r) > maxDescription {
		targetHelp = string(r[:maxDescription-1]) + "…"
	}
	return []*discordgo.ApplicationCommand{
		{
			Name:        commandContinue,
			Type:        discordgo.ChatApplicationCommand,
			Description: "Continue a conversation from elsewhere in a Discord thread",
			Options: []*discordgo.ApplicationCommandOption{{
				Type:        discordgo.ApplicationCommandOptionString,
				Name:        optionTarget,
				Description: targetHelp,
				Required:    true,
			}},
		},
		{
			Name:        commandWeft,
			Type:        discordgo.ChatApplicationCommand,
			Description: "weft",
			Options: []*discordgo.ApplicationCommandOption{{
				Type:        discordgo.ApplicationCommandOptionSubCommand,
				Name:        subcommandStatus,
				Description: "Show what weft is working on",
			}, {
				Type:        discordgo.ApplicationCommandOptionSubCommand,
				Name:        subcommandStop,
				Description: "Stop weft's work in this thread",
			}},
		},
	}
}

// RegisterCommands replaces the application's commands with Commands
// (targetHelp for /continue's target) in one
// Bulk Overwrite, for a guild or, with guildID "", globally. One call per
// deploy, not one create per command per boot: creates count toward
// Discord's 200 per day per guild. Guild commands update at once, so use a
// guild while developing.
func (c *Client) RegisterCommands(ctx context.Context, appID, guildID, targetHelp string) error {
	_, err := c.session.ApplicationCommandBulkOverwrite(appID, guildID, Commands(targetHelp), opts(ctx)...)
	return translate("register commands", err)
}

// EditInteractionResponse sets the content of a deferred interaction
// response (PATCH /webhooks/{app}/{token}/messages/@original), pinging
// nobody. Content longer than one message continues in follow-up messages.
// The token is valid for 15 minutes after the interaction.
func (c *Client) EditInteractionResponse(ctx context.Context, appID, token, content string) error {
	interaction := &discordgo.Interaction{AppID: appID, Token: token}
	for i, part := range Split(content, MessageLimit) {
		if i == 0 {
			if _, err := c.session.InteractionResponseEdit(interaction, &discordgo.WebhookEdit{Content: &part, AllowedMentions: noMentions}, opts(ctx)...); err != nil {
				return translate("edit interaction response", err)
			}
			continue
		}
		if _, err := c.session.FollowupMessageCreate(interaction, true, &discordgo.WebhookParams{Content: part, AllowedMentions: noMentions}, opts(ctx)...); err != nil {
			return translate("interaction follow-up", err)
		}
	}
	return nil
}
