// Package fromslack reads Slack threads for get-thread-replies: it adapts a
// slack-go client to replies.Slack, its messages in get-thread-replies.md's
// shape and Slack's failures as its error codes. The wiring plugs it in
// when Slack is configured.
package fromslack

import (
	"context"
	"errors"
	"net/http"

	"github.com/slack-go/slack"

	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/replies"
)

// Reader is a slack-go client as get-thread-replies reads it. The client
// must not retry by itself (slack-go does not unless told to): replies
// retries what is transient and returns a rate limit at once.
type Reader struct{ c *slack.Client }

var _ replies.Slack = Reader{}

// New reads through c.
func New(c *slack.Client) Reader { return Reader{c} }

// Replies implements replies.Slack with conversations.replies.
func (r Reader) Replies(ctx context.Context, q replies.SlackQuery) (replies.SlackPage, error) {
	msgs, hasMore, next, err := r.c.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
		ChannelID: q.ChannelID, Timestamp: q.ThreadTS, Cursor: q.Cursor, Latest: q.Latest, Limit: q.Limit,
	})
	if err != nil {
		return replies.SlackPage{}, Failure(err)
	}
	out := replies.SlackPage{HasMore: hasMore, NextCursor: next, Messages: make([]replies.SlackMessage, 0, len(msgs))}
	for _, m := range msgs {
		out.Messages = append(out.Messages, Message(m.Msg))
	}
	return out, nil
}

// Message is a Slack message in get-thread-replies.md's shape.
func Message(m slack.Msg) replies.SlackMessage {
	text := m.Text
	out := replies.SlackMessage{TS: m.Timestamp, User: m.User, Text: &text, Edited: m.Edited != nil}
	if out.User == "" {
		out.User = m.BotID
	}
	if m.SubType != "" {
		st := m.SubType
		out.Subtype = &st
	}
	return out
}

// Slack's error strings, by the code get-thread-replies answers with.
var codes = map[string]httpapi.Code{
	"not_authed": httpapi.CodeAuthentication, "invalid_auth": httpapi.CodeAuthentication,
	"account_inactive": httpapi.CodeAuthentication, "token_revoked": httpapi.CodeAuthentication,
	"token_expired": httpapi.CodeAuthentication, "no_permission": httpapi.CodeAuthorization,
	"missing_scope": httpapi.CodeAuthorization, "not_in_channel": httpapi.CodeAuthorization,
	"access_denied": httpapi.CodeAuthorization, "ekm_access_denied": httpapi.CodeAuthorization,
	"team_access_not_granted": httpapi.CodeAuthorization, "not_allowed_token_type": httpapi.CodeAuthorization,
	"channel_not_found": httpapi.CodeNotFound, "thread_not_found": httpapi.CodeNotFound,
	"message_not_found": httpapi.CodeNotFound, "ratelimited": httpapi.CodeRateLimit,
	"rate_limited": httpapi.CodeRateLimit, "invalid_cursor": httpapi.CodeInvalidArgument,
	"invalid_ts_latest": httpapi.CodeInvalidArgument, "invalid_ts_oldest": httpapi.CodeInvalidArgument,
	"invalid_arguments": httpapi.CodeInvalidArgument, "invalid_limit": httpapi.CodeInvalidArgument,
}

var messages = map[httpapi.Code]string{
	httpapi.CodeAuthentication:  "Slack rejected weft's bot token",
	httpapi.CodeAuthorization:   "weft may not read this Slack conversation",
	httpapi.CodeNotFound:        "no such Slack conversation or thread",
	httpapi.CodeRateLimit:       "Slack is rate limiting weft; try again later",
	httpapi.CodeInvalidArgument: "Slack rejected the request",
	httpapi.CodeUnavailable:     "Slack failed; try again later",
}

// Failure is a Slack failure as get-thread-replies answers it: a 429 is a
// RateLimit (with Slack's Retry-After), credentials an AuthenticationError,
// a missing scope or membership an AuthorizationError, an unknown channel
// or thread NotFound, and Slack's own failures (5xx, internal_error,
// fatal_error, …) Unavailable, which replies retries. Any other error (a
// cancelled context, a broken connection) is left as it is.
func Failure(err error) error {
	var (
		rl   *slack.RateLimitedError
		sc   slack.StatusCodeError
		resp slack.SlackErrorResponse
		code httpapi.Code
	)
	e := &httpapi.Error{Err: err}
	switch {
	case errors.As(err, &rl):
		code, e.RetryAfter = httpapi.CodeRateLimit, rl.RetryAfter
	case errors.As(err, &sc) && sc.Code == http.StatusTooManyRequests:
		code = httpapi.CodeRateLimit
	case errors.As(err, &sc) && (sc.Code == http.StatusUnauthorized):
		code = httpapi.CodeAuthentication
	case errors.As(err, &sc) && (sc.Code == http.StatusForbidden):
		code = httpapi.CodeAuthorization
	case errors.As(err, &sc):
		code = httpapi.CodeUnavailable
	case errors.As(err, &resp):
		var ok bool
		if code, ok = codes[resp.Err]; !ok {
			code = httpapi.CodeUnavailable
		}
	default:
		return err
	}
	e.Code, e.Message = code, messages[code]
	return e
}
