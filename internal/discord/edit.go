package discord

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/weft-dev/weft/internal/surface"
)

// messageEdit is the body of Edit Message: its content, pinging nobody.
type messageEdit struct {
	Content         string                            `json:"content"`
	AllowedMentions *discordgo.MessageAllowedMentions `json:"allowed_mentions"`
}

// Edit replaces the content (at most MessageLimit characters) of one of
// the bot's messages, pinging nobody. Edits of a channel's messages share
// Discord's rate-limit bucket for the route, which discordgo's transport
// keeps.
func (c *Client) Edit(ctx context.Context, channelID, messageID, content string) error {
	if strings.TrimSpace(content) == "" {
		return errors.New("discord: edit: empty content")
	}
	endpoint := discordgo.EndpointChannelMessage(channelID, messageID)
	_, err := c.session.RequestWithBucketID("PATCH", endpoint, messageEdit{Content: content, AllowedMentions: noMentions},
		discordgo.EndpointChannelMessage(channelID, ""), opts(ctx)...)
	return translate("edit", err)
}

// EditDecided replaces the content of one of the bot's messages and
// removes its components: a request for approval once decided.
func (c *Client) EditDecided(ctx context.Context, channelID, messageID, content string) error {
	if strings.TrimSpace(content) == "" {
		return errors.New("discord: edit: empty content")
	}
	endpoint := discordgo.EndpointChannelMessage(channelID, messageID)
	_, err := c.session.RequestWithBucketID("PATCH", endpoint, struct {
		messageEdit
		Components []discordgo.MessageComponent `json:"components"`
	}{messageEdit{Content: content, AllowedMentions: noMentions}, []discordgo.MessageComponent{}},
		discordgo.EndpointChannelMessage(channelID, ""), opts(ctx)...)
	return translate("edit", err)
}

// Delete removes one of the bot's messages; one already gone is no error.
func (c *Client) Delete(ctx context.Context, channelID, messageID string) error {
	endpoint := discordgo.EndpointChannelMessage(channelID, messageID)
	_, err := c.session.RequestWithBucketID("DELETE", endpoint, nil, discordgo.EndpointChannelMessage(channelID, ""), opts(ctx)...)
	if err = translate("delete", err); err != nil && !isUnknownMessage(err) {
		return err
	}
	return nil
}

// SendPart posts one part of a message (at most MessageLimit characters)
// with the nonce of part i of nonce (as Send derives it), so that a
// repeated post within a few minutes returns the message Discord made.
func (c *Client) SendPart(ctx context.Context, channelID, content, nonce string, i int) (string, error) {
	if strings.TrimSpace(content) == "" {
		return "", fmt.Errorf("discord: send: empty content")
	}
	return c.sendPart(ctx, channelID, content, partNonce(nonce, i), nil)
}

// isUnknownMessage reports Discord's answer for a message that does not
// exist (any more).
func isUnknownMessage(err error) bool {
	var e *surface.Error
	return errors.As(err, &e) && (e.Code == "10008" || e.Kind == surface.KindNotFound)
}
