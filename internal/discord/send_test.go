package discord

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/discord/discordtest"
	"github.com/weft-dev/weft/internal/fakekit"
	"github.com/weft-dev/weft/internal/surface"
)

func TestSend(t *testing.T) {
	t.Parallel()

	t.Run("RetriedWithNonceIsPostedOnce", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		first, err := b.client.Send(t.Context(), b.channel, "hello @everyone", "outbox-7f0c1a2e-9d1b-4c55-8e0f-3f6a2b1c9d00")
		require.NoError(t, err)
		again, err := b.client.Send(t.Context(), b.channel, "hello @everyone", "outbox-7f0c1a2e-9d1b-4c55-8e0f-3f6a2b1c9d00")
		require.NoError(t, err)
		require.Equal(t, first, again)

		sent := b.server.Sent(b.channel)
		require.Len(t, sent, 1)
		require.True(t, sent[0].EnforceNonce)
		require.NotEmpty(t, sent[0].Nonce)
		require.LessOrEqual(t, len(sent[0].Nonce), maxNonceLen)
		require.NotNil(t, sent[0].AllowedMentions, "allowed_mentions must be sent")
		require.NotNil(t, sent[0].AllowedMentions.Parse)
		require.Empty(t, sent[0].AllowedMentions.Parse, "nobody is pinged")
	})

	t.Run("WithoutNonceIsNotDeduplicated", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		for range 2 {
			_, err := b.client.Send(t.Context(), b.channel, "hi", "")
			require.NoError(t, err)
		}
		require.Len(t, b.server.Sent(b.channel), 2)
	})

	t.Run("LongReplyWithCodeFenceIsSplit", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		var reply strings.Builder
		reply.WriteString("Here is the script:\n\n```go\n")
		for reply.Len() < 4300 {
			reply.WriteString("\tfmt.Println(\"a line of generated code\")\n")
		}
		reply.WriteString("```\n\nRun it with go run.")
		require.Greater(t, reply.Len(), 4300)

		id, err := b.client.Send(t.Context(), b.channel, reply.String(), "reply-1")
		require.NoError(t, err)
		sent := b.server.Sent(b.channel)
		require.Len(t, sent, 3)
		require.Equal(t, sent[0].ID, id, "returns the first message")
		nonces := map[string]bool{}
		for _, m := range sent {
			require.LessOrEqual(t, utf8.RuneCountInString(m.Content), MessageLimit)
			require.Zero(t, strings.Count(m.Content, "```")%2, "every part closes its fences")
			nonces[m.Nonce] = true
		}
		require.Len(t, nonces, 3, "a nonce per part")
		require.True(t, strings.HasPrefix(sent[1].Content, "```go\n"))

		_, err = b.client.Send(t.Context(), b.channel, reply.String(), "reply-1")
		require.NoError(t, err)
		require.Len(t, b.server.Sent(b.channel), 3, "a retried split send posts nothing new")
	})

	t.Run("EmptyContentIsRejected", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		_, err := b.client.Send(t.Context(), b.channel, " \n ", "n")
		require.Error(t, err)
		require.Empty(t, b.server.Requests())
	})
}

func TestSendFailures(t *testing.T) {
	t.Parallel()

	t.Run("RouteRateLimitThenSuccess", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		path := "/channels/" + b.channel + "/messages"
		b.server.Fail("POST "+path, 1, fakekit.RateLimited(30*time.Millisecond))
		_, err := b.client.Send(t.Context(), b.channel, "hi", "n1")
		require.NoError(t, err)
		require.Equal(t, []int{http.StatusTooManyRequests, http.StatusOK}, statuses(b.server.Requests(), path))
		require.Len(t, b.server.Sent(b.channel), 1)
	})

	t.Run("GlobalRateLimitWithoutResetHeadersThenSuccess", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		path := "/channels/" + b.channel + "/messages"
		b.server.Fail("POST "+path, 1, discordtest.GlobalRateLimit(30*time.Millisecond))
		_, err := b.client.Send(t.Context(), b.channel, "hi", "n1")
		require.NoError(t, err)
		require.Equal(t, []int{http.StatusTooManyRequests, http.StatusOK}, statuses(b.server.Requests(), path))
	})

	t.Run("NonJSONRateLimitFailsFastAndBlocksAllRoutes", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		path := "/channels/" + b.channel + "/messages"
		b.server.Fail("POST "+path, 1, discordtest.CloudflareBan(time.Hour))
		_, err := b.client.Send(t.Context(), b.channel, "hi", "n1")
		de := requireKind(t, err, surface.KindRateLimited)
		require.Equal(t, "global", de.Detail, "a Cloudflare ban limits the whole IP")
		require.Equal(t, time.Hour, de.RetryAfter)

		err = b.client.Typing(t.Context(), b.channel)
		requireKind(t, err, surface.KindRateLimited)
		require.Len(t, b.server.Requests(), 1, "other routes wait for the ban without sending")
	})

	t.Run("ServerErrorSurfacesTyped", func(t *testing.T) {
		t.Parallel()
		for _, status := range []int{http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable} {
			b := setup(t, nil)
			b.server.Fail("POST /channels/"+b.channel+"/messages", 1, fakekit.Fail(status))
			_, err := b.client.Send(t.Context(), b.channel, "hi", "n1")
			de := requireKind(t, err, surface.KindServer)
			require.Equal(t, status, de.Status)
			require.Len(t, b.server.Requests(), 1, "no immediate retry of %d", status)
		}
	})

	t.Run("UnknownChannelIsNotFound", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		_, err := b.client.Send(t.Context(), "999", "hi", "n1")
		de := requireKind(t, err, surface.KindNotFound)
		require.Equal(t, "10003", de.Code)
	})

	t.Run("BadTokenIsAuth", func(t *testing.T) {
		t.Parallel()
		b := setup(t, func(c *Config) { c.Token = "wrong" })
		_, err := b.client.Send(t.Context(), b.channel, "hi", "n1")
		requireKind(t, err, surface.KindAuth)
	})

	t.Run("CancelledContext", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := b.client.Send(ctx, b.channel, "hi", "n1")
		require.ErrorIs(t, err, context.Canceled)
		require.Empty(t, b.server.Sent(b.channel))
	})

	t.Run("RateLimitBeyondDeadlineFailsFast", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil)
		b.server.Fail("POST /channels/"+b.channel+"/messages", 1, fakekit.RateLimited(20*time.Second))
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		_, err := b.client.Send(ctx, b.channel, "hi", "n1")
		de := requireKind(t, err, surface.KindRateLimited)
		require.Empty(t, de.Detail)
		require.Equal(t, 20*time.Second, de.RetryAfter)
	})
}

func TestTyping(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	require.NoError(t, b.client.Typing(t.Context(), b.channel))
	require.Equal(t, 1, b.server.Typing(b.channel))
}

// requireKind asserts err is an *surface.Error of the given kind and returns it.
func requireKind(t *testing.T, err error, kind surface.Kind) *surface.Error {
	t.Helper()
	var de *surface.Error
	require.True(t, errors.As(err, &de), "want *discord.Error, got %v", err)
	require.Equal(t, kind, de.Kind, "error: %v", err)
	return de
}

// statuses lists the answers to requests for path, in order.
func statuses(reqs []discordtest.Request, path string) []int {
	var out []int
	for _, r := range reqs {
		if r.Path == path {
			out = append(out, r.Status)
		}
	}
	return out
}
