package discord

import (
	"crypto/ed25519"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/discord/discordtest"
	"github.com/weft-dev/weft/internal/surface"
)

func TestVerifyInteraction(t *testing.T) {
	t.Parallel()

	signer := discordtest.NewInteractionSigner()
	other := discordtest.NewInteractionSigner()
	now := time.Unix(1_750_000_000, 0)
	body := discordtest.PingInteraction("42")
	sig, ts := signer.Sign(body, now)
	forgedSig, _ := signer.Sign([]byte(`{"type":1,"forged":true}`), now)
	staleSig, staleTS := signer.Sign(body, now.Add(-6*time.Minute))
	futureSig, futureTS := signer.Sign(body, now.Add(6*time.Minute))
	edgeSig, edgeTS := signer.Sign(body, now.Add(-4*time.Minute))
	badTSSig := signer.SignTimestamp(body, "not-a-number")

	tests := []struct {
		name    string
		key     ed25519.PublicKey
		sig, ts string
		body    []byte
		wantErr error
	}{
		{name: "Valid", key: signer.PublicKey(), sig: sig, ts: ts, body: body},
		{name: "ValidInsideWindow", key: signer.PublicKey(), sig: edgeSig, ts: edgeTS, body: body},
		{name: "Forged", key: signer.PublicKey(), sig: forgedSig, ts: ts, body: body, wantErr: ErrInvalidSignature},
		{name: "WrongKey", key: other.PublicKey(), sig: sig, ts: ts, body: body, wantErr: ErrInvalidSignature},
		{name: "Stale", key: signer.PublicKey(), sig: staleSig, ts: staleTS, body: body, wantErr: ErrStaleInteraction},
		{name: "Future", key: signer.PublicKey(), sig: futureSig, ts: futureTS, body: body, wantErr: ErrStaleInteraction},
		{name: "TruncatedBody", key: signer.PublicKey(), sig: sig, ts: ts, body: body[:len(body)-1], wantErr: ErrInvalidSignature},
		{name: "TimestampSwapped", key: signer.PublicKey(), sig: sig, ts: staleTS, body: body, wantErr: ErrInvalidSignature},
		{name: "MalformedHex", key: signer.PublicKey(), sig: "zz" + sig[2:], ts: ts, body: body, wantErr: ErrInvalidSignature},
		{name: "ShortSignature", key: signer.PublicKey(), sig: sig[:64], ts: ts, body: body, wantErr: ErrInvalidSignature},
		{name: "MissingHeaders", key: signer.PublicKey(), body: body, wantErr: ErrInvalidSignature},
		{name: "MalformedTimestamp", key: signer.PublicKey(), sig: badTSSig, ts: "not-a-number", body: body, wantErr: ErrStaleInteraction},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := VerifyInteraction(tt.key, tt.sig, tt.ts, tt.body, now, DefaultInteractionWindow)
			if tt.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.wantErr)
		})
	}

	t.Run("BadKeyLengthIsAnErrorNotAPanic", func(t *testing.T) {
		t.Parallel()
		err := VerifyInteraction(ed25519.PublicKey{1, 2, 3}, sig, ts, body, now, DefaultInteractionWindow)
		require.Error(t, err)
		require.NotErrorIs(t, err, ErrInvalidSignature)
	})
}

func TestParseInteraction(t *testing.T) {
	t.Parallel()

	alice := discordtest.User{ID: "200000000000000001", Name: "alice"}
	tests := []struct {
		name string
		body []byte
		want Interaction
	}{
		{
			name: "Ping",
			body: discordtest.PingInteraction("42"),
			want: Interaction{Kind: InteractionPing, ID: "1", ApplicationID: "42", Token: "ping-token"},
		},
		{
			name: "Continue",
			body: discordtest.ContinueInteraction("42", "tok", "7", "8", alice, "ENG-123"),
			want: Interaction{Kind: InteractionContinue, ID: "2", ApplicationID: "42", Token: "tok", GuildID: "7", ChannelID: "8",
				User: Author{ID: alice.ID, Name: "alice"}, Target: "ENG-123"},
		},
		{
			name: "Status",
			body: discordtest.StatusInteraction("42", "tok", "7", "8", alice),
			want: Interaction{Kind: InteractionStatus, ID: "2", ApplicationID: "42", Token: "tok", GuildID: "7", ChannelID: "8",
				User: Author{ID: alice.ID, Name: "alice"}},
		},
		{
			name: "UnknownCommand",
			body: discordtest.CommandInteraction("42", "tok", "7", "8", alice, "dance", nil),
			want: Interaction{Kind: InteractionUnknown, ID: "2", ApplicationID: "42", Token: "tok", GuildID: "7", ChannelID: "8",
				User: Author{ID: alice.ID, Name: "alice"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseInteraction(tt.body)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}

	t.Run("Malformed", func(t *testing.T) {
		t.Parallel()
		_, err := ParseInteraction([]byte(`{"type":`))
		require.Error(t, err)
	})
}

func TestInteractionResponses(t *testing.T) {
	t.Parallel()

	require.JSONEq(t, `{"type":1}`, string(PongResponse()))
	require.JSONEq(t, `{"type":5}`, string(DeferredResponse(false)))
	require.JSONEq(t, `{"type":5,"data":{"flags":64}}`, string(DeferredResponse(true)))

	var resp discordgo.InteractionResponse
	require.NoError(t, json.Unmarshal(MessageResponse(strings.Repeat("word ", 500), false), &resp))
	require.Equal(t, discordgo.InteractionResponseChannelMessageWithSource, resp.Type)
	require.LessOrEqual(t, len(resp.Data.Content), MessageLimit)
	require.NotNil(t, resp.Data.AllowedMentions)
	require.Empty(t, resp.Data.AllowedMentions.Parse)
}

func TestRegisterCommands(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	require.NoError(t, b.client.RegisterCommands(t.Context(), b.server.ApplicationID(), b.guildID, ""))

	overwrites := b.server.CommandOverwrites()
	require.Len(t, overwrites, 1, "one bulk overwrite, not a create per command")
	require.Equal(t, b.guildID, overwrites[0].GuildID)
	var names []string
	for _, c := range overwrites[0].Commands {
		names = append(names, c.Name)
	}
	require.Equal(t, []string{"continue", "weft"}, names)
}

func TestEditInteractionResponse(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	long := strings.Repeat("a reasonably long sentence. ", 100)
	require.NoError(t, b.client.EditInteractionResponse(t.Context(), b.server.ApplicationID(), "tok", long))

	msgs := b.server.InteractionMessages("tok")
	require.Len(t, msgs, 2)
	require.True(t, msgs[0].Original)
	require.False(t, msgs[1].Original, "the rest is a follow-up")
	require.Equal(t, long, msgs[0].Content+msgs[1].Content)
	for _, m := range msgs {
		require.NotNil(t, m.AllowedMentions)
		require.Empty(t, m.AllowedMentions.Parse)
	}

	err := b.client.EditInteractionResponse(t.Context(), "1", "tok", "hi")
	requireKind(t, err, surface.KindNotFound)
}

// TestCommandsTargetHelp: /continue's target says what the platforms on
// weft's list take, cut to Discord's limit.
func TestCommandsTargetHelp(t *testing.T) {
	t.Parallel()
	require.Equal(t, "a thread's link", Commands("a thread's link")[0].Options[0].Description)
	require.NotEmpty(t, Commands("")[0].Options[0].Description)
	long := Commands(strings.Repeat("é", 150))[0].Options[0].Description
	require.Equal(t, maxDescription, utf8.RuneCountInString(long))
}
