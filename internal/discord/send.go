package discord

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/bwmarrin/discordgo"
)

// maxNonceLen is Discord's limit on a message nonce.
const maxNonceLen = 25

// noMentions lets a message ping nobody. Absent allowed_mentions means
// "parse users, roles and everyone", which model output must never trigger;
// an empty slice is sent because whether null means the same is unconfirmed
// (discord.md §1.3).
var noMentions = &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}

// messageCreate is the body of Create Message. discordgo's MessageSend has
// no nonce or enforce_nonce, so weft posts its own body through the session,
// which keeps the rate-limiting transport and discordgo's bucket.
type messageCreate struct {
	Content         string                            `json:"content"`
	AllowedMentions *discordgo.MessageAllowedMentions `json:"allowed_mentions"`
	Nonce           string                            `json:"nonce,omitempty"`
	EnforceNonce    bool                              `json:"enforce_nonce,omitempty"`
	Components      []discordgo.MessageComponent      `json:"components,omitempty"`
}

// Send posts content to a channel or thread, split into several messages if
// it is longer than MessageLimit (see Split), pinging nobody. It returns the
// id of the first message.
//
// nonce makes Send idempotent: each part is sent with a nonce derived from
// it and its index, with enforce_nonce, so Discord answers a repeated send
// (a retry after a timeout, a re-run job) within a few minutes with the
// message it already created instead of posting again. A retry after a
// partial failure therefore re-sends only the missing parts. An empty nonce
// sends without deduplication.
func (c *Client) Send(ctx context.Context, channelID, content, nonce string) (string, error) {
	return c.SendComponents(ctx, channelID, content, nonce, nil)
}

// SendComponents is Send with message components (a row of buttons) on
// the last message: where a person reads to the end before choosing.
func (c *Client) SendComponents(ctx context.Context, channelID, content, nonce string, components []discordgo.MessageComponent) (string, error) {
	if strings.TrimSpace(content) == "" {
		return "", errors.New("discord: send: empty content")
	}
	first := ""
	// Discord rejects blank messages; a blank part only held whitespace
	// between paragraphs.
	parts := Parts(content)
	for i, part := range parts {
		var comps []discordgo.MessageComponent
		if i == len(parts)-1 {
			comps = components
		}
		id, err := c.sendPart(ctx, channelID, part, partNonce(nonce, i), comps)
		if err != nil {
			return first, err
		}
		if first == "" {
			first = id
		}
	}
	return first, nil
}

// sendPart posts one message.
func (c *Client) sendPart(ctx context.Context, channelID, content, nonce string, components []discordgo.MessageComponent) (string, error) {
	body := messageCreate{Content: content, AllowedMentions: noMentions, Nonce: nonce, EnforceNonce: nonce != "", Components: components}
	endpoint := discordgo.EndpointChannelMessages(channelID)
	raw, err := c.session.RequestWithBucketID("POST", endpoint, body, endpoint, opts(ctx)...)
	if err != nil {
		return "", translate("send", err)
	}
	var m discordgo.Message
	if err := discordgo.Unmarshal(raw, &m); err != nil {
		return "", fmt.Errorf("discord: send: decode message: %w", err)
	}
	return m.ID, nil
}

// partNonce derives the nonce of part i from the caller's nonce. Hashing
// gives every part its own nonce within Discord's 25 characters whatever the
// caller's nonce looks like (an outbox row's UUID has 36).
func partNonce(nonce string, i int) string {
	if nonce == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(nonce + "/" + strconv.Itoa(i)))
	return hex.EncodeToString(sum[:])[:maxNonceLen]
}

// Typing shows the typing indicator in a channel for about 10 seconds, or
// until the bot sends. It is optional: a rate limit fails it at once rather
// than waiting, and callers should log, not abort, on its errors.
func (c *Client) Typing(ctx context.Context, channelID string) error {
	err := c.session.ChannelTyping(channelID, discordgo.WithContext(withoutRateLimitRetry(ctx)))
	return translate("typing", err)
}
