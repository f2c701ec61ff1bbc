package discordtest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/bwmarrin/discordgo"
)

// InteractionSigner signs interaction requests as Discord does: Ed25519 over
// the X-Signature-Timestamp value followed by the raw body.
type InteractionSigner struct {
	public  ed25519.PublicKey
	private ed25519.PrivateKey
}

// NewInteractionSigner returns a signer with a fresh key pair.
func NewInteractionSigner() *InteractionSigner {
	public, private, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic("discordtest: generate key: " + err.Error())
	}
	return &InteractionSigner{public: public, private: private}
}

// PublicKey is the application's public key, as the Developer Portal shows
// it (hex-encoded with PublicKeyHex).
func (s *InteractionSigner) PublicKey() ed25519.PublicKey { return s.public }

// PublicKeyHex is the public key as DISCORD_PUBLIC_KEY holds it.
func (s *InteractionSigner) PublicKeyHex() string { return hex.EncodeToString(s.public) }

// Sign returns the X-Signature-Ed25519 and X-Signature-Timestamp values for
// body sent at the given time.
func (s *InteractionSigner) Sign(body []byte, at time.Time) (signatureHex, timestamp string) {
	timestamp = strconv.FormatInt(at.Unix(), 10)
	return s.SignTimestamp(body, timestamp), timestamp
}

// SignTimestamp signs body under any X-Signature-Timestamp value, including
// malformed ones, to test how a verifier treats them.
func (s *InteractionSigner) SignTimestamp(body []byte, timestamp string) (signatureHex string) {
	signed := make([]byte, 0, len(timestamp)+len(body))
	signed = append(append(signed, timestamp...), body...)
	return hex.EncodeToString(ed25519.Sign(s.private, signed))
}

// SignRequest sets the signature headers on req for body sent at the given
// time.
func (s *InteractionSigner) SignRequest(req *http.Request, body []byte, at time.Time) {
	sig, ts := s.Sign(body, at)
	req.Header.Set("X-Signature-Ed25519", sig)
	req.Header.Set("X-Signature-Timestamp", ts)
}

// PingInteraction is the body of Discord's PING, sent when the endpoint URL
// is saved and in routine checks.
func PingInteraction(appID string) []byte {
	return mustJSON(map[string]any{
		"id": "1", "application_id": appID, "type": discordgo.InteractionPing, "token": "ping-token", "version": 1,
	})
}

// CommandInteraction is the body of a slash command invoked in a guild
// channel by user: name with options, where a subcommand is an option of
// type 1 (see ContinueInteraction and StatusInteraction).
func CommandInteraction(appID, token, guildID, channelID string, user User, name string, options []map[string]any) []byte {
	return mustJSON(map[string]any{
		"id": "2", "application_id": appID, "type": discordgo.InteractionApplicationCommand, "token": token, "version": 1,
		"guild_id": guildID, "channel_id": channelID,
		"member": map[string]any{"user": map[string]any{"id": user.ID, "username": user.Name, "bot": user.Bot}},
		"data":   map[string]any{"id": "3", "name": name, "type": discordgo.ChatApplicationCommand, "options": options},
	})
}

// ContinueInteraction is the body of "/continue target:<target>".
func ContinueInteraction(appID, token, guildID, channelID string, user User, target string) []byte {
	return CommandInteraction(appID, token, guildID, channelID, user, "continue", []map[string]any{
		{"name": "target", "type": discordgo.ApplicationCommandOptionString, "value": target},
	})
}

// StatusInteraction is the body of "/weft status".
func StatusInteraction(appID, token, guildID, channelID string, user User) []byte {
	return CommandInteraction(appID, token, guildID, channelID, user, "weft", []map[string]any{
		{"name": "status", "type": discordgo.ApplicationCommandOptionSubCommand},
	})
}

// ButtonInteraction is the body of a click by user on a button (a message
// component) whose custom id is customID, under the bot's message
// messageID that reads content. id is the interaction's snowflake.
func ButtonInteraction(appID, id, token, guildID, channelID string, user User, messageID, content, customID string) []byte {
	return mustJSON(map[string]any{
		"id": id, "application_id": appID, "type": discordgo.InteractionMessageComponent, "token": token, "version": 1,
		"guild_id": guildID, "channel_id": channelID,
		"member":  map[string]any{"user": map[string]any{"id": user.ID, "username": user.Name, "bot": user.Bot}},
		"message": map[string]any{"id": messageID, "channel_id": channelID, "content": content},
		"data":    map[string]any{"custom_id": customID, "component_type": discordgo.ButtonComponent},
	})
}

// mustJSON marshals a value built from literals, which cannot fail.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("discordtest: marshal: " + err.Error())
	}
	return b
}
