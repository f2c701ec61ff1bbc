package discord

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/discord/discordtest"

	"github.com/weft-dev/weft/internal/fakekit"
	"github.com/weft-dev/weft/internal/thread"
)

func TestRender(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		kind thread.OutboxKind
		body thread.OutboxBody
		want string
	}{
		{"Response", thread.OutboxResponse, thread.OutboxBody{Text: " The build is green. "}, "The build is green."},
		{"Message", thread.OutboxMessage, thread.OutboxBody{Text: "summary"}, "summary"},
		{"ElicitationListsOptions", thread.OutboxElicitation, thread.OutboxBody{Text: "Which one?", Options: []string{"staging", "prod"}},
			"Which one?\n\n1. staging\n2. prod"},
		{"ElicitationWithoutOptions", thread.OutboxElicitation, thread.OutboxBody{Text: "Which one?"}, "Which one?"},
		{"Error", thread.OutboxError, thread.OutboxBody{Text: "The model could not be reached."}, "⚠️ **Error:** The model could not be reached."},
		{"Notice", thread.OutboxNotice, thread.OutboxBody{Text: "The model is busy, retrying."}, "_The model is busy, retrying._"},
		{"ErrorWithoutText", thread.OutboxError, thread.OutboxBody{}, "⚠️ **Error:** Something went wrong."},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, Render(tt.kind, tt.body), tt.name)
	}
}

func outboxRow(t *testing.T, target string, kind thread.OutboxKind, text string) thread.Outbox {
	t.Helper()
	body, err := json.Marshal(thread.OutboxBody{Text: text})
	require.NoError(t, err)
	return thread.Outbox{ID: thread.NewID(), ThreadID: uuid.New(), Platform: thread.PlatformDiscord, Target: target, Kind: kind, Body: body}
}

func TestSender(t *testing.T) {
	t.Parallel()

	t.Run("RetriedRowPostsOnceSplitAndPingsNobody", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		s := NewSender(b.client)
		long := strings.Repeat("word ", 500) + "@everyone"
		o := outboxRow(t, b.channel, thread.OutboxResponse, long)
		first, err := s.Send(t.Context(), o)
		require.NoError(t, err)
		again, err := s.Send(t.Context(), o)
		require.NoError(t, err)
		require.Equal(t, first, again)
		sent := b.server.Sent(b.channel)
		require.Len(t, sent, 2, "2,500 characters in two messages, each once")
		for _, m := range sent {
			require.True(t, m.EnforceNonce)
			require.Empty(t, m.AllowedMentions.Parse)
		}
	})

	t.Run("FailuresAreRetryableOrPermanent", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name      string
			fault     fakekit.Fault
			permanent bool
		}{
			{"RateLimited", fakekit.RateLimited(time.Hour), false},
			{"ServerError", fakekit.Fail(http.StatusServiceUnavailable), false},
			{"Forbidden", fakekit.Fault{Status: http.StatusForbidden, Code: "50013", Message: "Missing Permissions"}, true},
			{"Invalid", fakekit.Fault{Status: http.StatusBadRequest, Code: "50035", Message: "Invalid Form Body"}, true},
			{"Unauthorized", fakekit.Fault{Status: http.StatusUnauthorized, Message: "401: Unauthorized"}, true},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				b := setup(t, nil)
				b.server.Fail("POST /channels/"+b.channel+"/messages", 1, tt.fault)
				_, err := NewSender(b.client).Send(t.Context(), outboxRow(t, b.channel, thread.OutboxResponse, "hi"))
				require.Error(t, err)
				require.Equal(t, tt.permanent, errors.Is(err, thread.ErrInvalid), err.Error())
			})
		}
	})

	t.Run("UnknownThreadIsPermanent", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		_, err := NewSender(b.client).Send(t.Context(), outboxRow(t, "123456789012345678", thread.OutboxResponse, "hi"))
		require.ErrorIs(t, err, thread.ErrInvalid)
	})

	t.Run("OtherPlatformOrEmptyIsPermanent", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		o := outboxRow(t, b.channel, thread.OutboxResponse, "hi")
		o.Platform = thread.PlatformLinear
		_, err := NewSender(b.client).Send(t.Context(), o)
		require.ErrorIs(t, err, thread.ErrInvalid)
		_, err = NewSender(b.client).Send(t.Context(), outboxRow(t, b.channel, thread.OutboxResponse, "  "))
		require.ErrorIs(t, err, thread.ErrInvalid)
		require.Empty(t, b.server.Sent(b.channel))
	})
}

// An approval request goes out with Approve and Deny buttons keyed by the
// request, its options not listed as text.
func TestSenderApprovalButtons(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	srv, ch := b.server, b.channel
	id := thread.NewID()
	o := thread.Outbox{ID: thread.NewID(), Platform: thread.PlatformDiscord, Target: ch, Kind: thread.OutboxElicitation,
		Body: thread.OutboxBody{Text: "Approve or deny?", Options: []string{"Approve", "Deny"},
			Approval: &thread.ApprovalAsk{ID: id, Server: "files", Tool: "write_file", Arguments: "{}"}}.JSON()}
	_, err := NewSender(b.client).Send(t.Context(), o)
	require.NoError(t, err)
	sent := srv.Sent(ch)
	require.Len(t, sent, 1)
	require.Equal(t, "Approve or deny?", sent[0].Content)
	require.Equal(t, []discordtest.Button{
		{Type: discordgo.ButtonComponent, Label: "Approve", Style: discordgo.SuccessButton, CustomID: "weft:approval:" + id.String() + ":approve"},
		{Type: discordgo.ButtonComponent, Label: "Deny", Style: discordgo.DangerButton, CustomID: "weft:approval:" + id.String() + ":deny"},
	}, sent[0].Buttons)
}
