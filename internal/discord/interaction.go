package discord

import (
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"
)

// DefaultInteractionWindow is how far an interaction's timestamp may be from
// now. discordgo's VerifyInteraction checks no freshness at all, so a
// captured request could be replayed forever.
const DefaultInteractionWindow = 5 * time.Minute

// Errors from VerifyInteraction. Both mean: answer 401. Discord sends
// invalid signatures on purpose and removes the endpoint URL of an app that
// accepts them.
var (
	// ErrInvalidSignature: the signature is missing, malformed or does not
	// match the timestamp and body.
	ErrInvalidSignature = errors.New("discord: invalid interaction signature")
	// ErrStaleInteraction: the signature is valid but the timestamp is
	// malformed or outside the window, a replay or a badly skewed clock.
	ErrStaleInteraction = errors.New("discord: interaction timestamp outside the window")
)

// VerifyInteraction checks an HTTP interaction as Discord signs it: the
// Ed25519 signature (X-Signature-Ed25519, hex) of the X-Signature-Timestamp
// value followed by the raw body, and that the timestamp (Unix seconds) is
// within window of now in either direction. The body must be the exact bytes
// received; decode only after this returns nil.
func VerifyInteraction(publicKey ed25519.PublicKey, signatureHex, timestamp string, body []byte, now time.Time, window time.Duration) error {
	if len(publicKey) != ed25519.PublicKeySize {
		// ed25519.Verify panics on a short key; this is a configuration bug.
		return fmt.Errorf("discord: verify interaction: public key has %d bytes, want %d", len(publicKey), ed25519.PublicKeySize)
	}
	sig, err := hex.DecodeString(signatureHex)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return fmt.Errorf("%w: malformed signature", ErrInvalidSignature)
	}
	signed := make([]byte, 0, len(timestamp)+len(body))
	signed = append(append(signed, timestamp...), body...)
	if !ed25519.Verify(publicKey, signed, sig) {
		return ErrInvalidSignature
	}
	secs, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: malformed timestamp %q", ErrStaleInteraction, timestamp)
	}
	if skew := now.Sub(time.Unix(secs, 0)).Abs(); skew > window {
		return fmt.Errorf("%w: %s off", ErrStaleInteraction, skew.Round(time.Second))
	}
	return nil
}

// InteractionKind is what an interaction asks for.
type InteractionKind int

// Kinds of interactions weft handles.
const (
	// InteractionPing is Discord checking the endpoint; answer PongResponse.
	InteractionPing InteractionKind = iota + 1
	// InteractionContinue is /continue <target>: a conversation elsewhere.
	InteractionContinue
	// InteractionStatus is /weft status.
	InteractionStatus
	// InteractionStop is /weft stop.
	InteractionStop
	// InteractionUnknown is any other interaction or command.
	InteractionUnknown
	// InteractionApproval is a click on an approval request's Approve or
	// Deny button (a message component).
	InteractionApproval
)

// approvalPrefix begins the custom id of an approval request's buttons:
// weft:approval:<approval id>:<approve|deny>.
const approvalPrefix = "weft:approval:"

// ApprovalButtons is the row of buttons under an approval request.
func ApprovalButtons(approvalID string) []discordgo.MessageComponent {
	return []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
		discordgo.Button{Label: "Approve", Style: discordgo.SuccessButton, CustomID: approvalPrefix + approvalID + ":approve"},
		discordgo.Button{Label: "Deny", Style: discordgo.DangerButton, CustomID: approvalPrefix + approvalID + ":deny"},
	}}}
}

// Interaction is a parsed HTTP interaction.
type Interaction struct {
	Kind          InteractionKind
	ID            string
	ApplicationID string
	// Token authorizes the response and follow-ups for 15 minutes.
	Token     string
	GuildID   string
	ChannelID string
	User      Author
	// Target is /continue's argument, as typed: what names a conversation
	// elsewhere (an issue key, a thread's link).
	Target string
	// ApprovalID and Decision are an approval button's: the request and
	// "approve" or "deny"; MessageContent is the text of the message the
	// button is on, which the answer updates.
	ApprovalID, Decision string
	MessageContent       string
}

// ParseInteraction decodes a verified interaction body.
func ParseInteraction(body []byte) (Interaction, error) {
	var raw discordgo.Interaction
	if err := json.Unmarshal(body, &raw); err != nil {
		return Interaction{}, fmt.Errorf("discord: parse interaction: %w", err)
	}
	in := Interaction{
		Kind: InteractionUnknown, ID: raw.ID, ApplicationID: raw.AppID, Token: raw.Token,
		GuildID: raw.GuildID, ChannelID: raw.ChannelID,
	}
	// Guild invocations carry the user in member; DMs in user.
	user := raw.User
	if raw.Member != nil && raw.Member.User != nil {
		user = raw.Member.User
	}
	if user != nil {
		in.User = Author{ID: user.ID, Name: user.Username, Bot: user.Bot}
		if user.GlobalName != "" {
			in.User.Name = user.GlobalName
		}
	}
	switch raw.Type {
	case discordgo.InteractionPing:
		in.Kind = InteractionPing
	case discordgo.InteractionApplicationCommand:
		data := raw.ApplicationCommandData()
		switch {
		case data.Name == commandContinue:
			for _, o := range data.Options {
				if o.Name == optionTarget && o.Type == discordgo.ApplicationCommandOptionString {
					in.Kind, in.Target = InteractionContinue, o.StringValue()
				}
			}
		case data.Name == commandWeft && len(data.Options) == 1 && data.Options[0].Name == subcommandStatus:
			in.Kind = InteractionStatus
		case data.Name == commandWeft && len(data.Options) == 1 && data.Options[0].Name == subcommandStop:
			in.Kind = InteractionStop
		}
	case discordgo.InteractionMessageComponent:
		data := raw.MessageComponentData()
		rest, ok := strings.CutPrefix(data.CustomID, approvalPrefix)
		id, decision, ok2 := strings.Cut(rest, ":")
		if ok && ok2 && data.ComponentType == discordgo.ButtonComponent && (decision == "approve" || decision == "deny") {
			in.Kind, in.ApprovalID, in.Decision = InteractionApproval, id, decision
			if raw.Message != nil {
				in.MessageContent = raw.Message.Content
			}
		}
	}
	return in, nil
}

// interactionResponse is the JSON of an inline interaction response.
// discordgo's InteractionResponseData always sends content, embeds,
// components and tts, which a deferred response must not carry (only the
// ephemeral flag is allowed there).
type interactionResponse struct {
	Type discordgo.InteractionResponseType `json:"type"`
	Data *interactionResponseData          `json:"data,omitempty"`
}

type interactionResponseData struct {
	Content string `json:"content,omitempty"`
	// Components, when not nil, replaces the message's: an empty list
	// takes its buttons away.
	Components      *[]discordgo.MessageComponent     `json:"components,omitempty"`
	Flags           discordgo.MessageFlags            `json:"flags,omitempty"`
	AllowedMentions *discordgo.MessageAllowedMentions `json:"allowed_mentions,omitempty"`
}

// PongResponse is the answer to a PING: {"type":1}.
func PongResponse() []byte {
	return mustMarshal(interactionResponse{Type: discordgo.InteractionResponsePong})
}

// DeferredResponse acknowledges a command within Discord's 3 seconds and
// shows "thinking…"; the answer follows with EditInteractionResponse.
// Ephemeral makes the answer visible to the invoking user only.
func DeferredResponse(ephemeral bool) []byte {
	resp := interactionResponse{Type: discordgo.InteractionResponseDeferredChannelMessageWithSource}
	if ephemeral {
		resp.Data = &interactionResponseData{Flags: discordgo.MessageFlagsEphemeral}
	}
	return mustMarshal(resp)
}

// MessageResponse answers a command at once with content, pinging nobody.
// Content longer than one message is cut to the first part of Split.
func MessageResponse(content string, ephemeral bool) []byte {
	if parts := Split(content, MessageLimit); len(parts) > 0 {
		content = parts[0]
	}
	data := &interactionResponseData{Content: content, AllowedMentions: noMentions}
	if ephemeral {
		data.Flags = discordgo.MessageFlagsEphemeral
	}
	return mustMarshal(interactionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource, Data: data})
}

// UpdateMessageResponse answers a button by editing the message it is on:
// content, its buttons gone.
func UpdateMessageResponse(content string) []byte {
	if parts := Split(content, MessageLimit); len(parts) > 0 {
		content = parts[0]
	}
	none := []discordgo.MessageComponent{}
	return mustMarshal(interactionResponse{Type: discordgo.InteractionResponseUpdateMessage,
		Data: &interactionResponseData{Content: content, Components: &none, AllowedMentions: noMentions}})
}

// mustMarshal encodes a response of fixed types, which cannot fail.
func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("discord: marshal interaction response: " + err.Error())
	}
	return b
}
