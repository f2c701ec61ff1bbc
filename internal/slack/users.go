package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	goslack "github.com/slack-go/slack"
)

// How long a user's name is reused, and how long a failed lookup leaves
// the id in its place before users.info is asked again: a name changes
// rarely, and a mention must not wait on a lookup that just failed.
const (
	nameTTL        = time.Hour
	nameFailTTL    = time.Minute
	nameLookupWait = 2 * time.Second
)

// UserName is how a person is called in the workspace (users.info, asked
// once an hour per person; the users:read scope): the display name, else
// the real name, else the username. Any failure answers the id itself, so
// a message is never held up or lost for want of a name.
func (c *Client) UserName(ctx context.Context, userID string) string {
	if userID == "" {
		return ""
	}
	if name, ok := c.names.Get(userID, time.Now()); ok {
		return name
	}
	ctx, cancel := context.WithTimeout(ctx, nameLookupWait)
	defer cancel()
	u, err := read(ctx, c, "users.info", func(ctx context.Context) (*goslack.User, error) {
		return c.api.GetUserInfoContext(ctx, userID)
	})
	if err != nil {
		c.logger.WarnContext(ctx, "slack user name unavailable; showing the id", slog.String("user_id", userID), slog.Any("error", err))
		c.names.Put(userID, userID, time.Now(), nameFailTTL)
		return userID
	}
	name := userID
	for _, n := range []string{u.Profile.DisplayName, u.Profile.RealName, u.RealName, u.Name} {
		if n != "" {
			name = n
			break
		}
	}
	c.names.Put(userID, name, time.Now(), nameTTL)
	return name
}

// UserName is a person's name in a workspace (Client.UserName); the id
// when weft has no client there.
func (w *Workspaces) UserName(ctx context.Context, teamID, userID string) string {
	c, err := w.Client(ctx, teamID)
	if err != nil {
		return userID
	}
	return c.UserName(ctx, userID)
}

// maxMemberPages bounds IsMember's walk: 100 pages of 1,000 members.
const maxMemberPages = 100

// ErrMembersUnknown is a channel too large for IsMember to read whole.
var ErrMembersUnknown = errors.New("slack: the channel's members were not all read")

// IsMember reports whether a user is a member of a conversation
// (conversations.members, Tier 4, read until the user is found).
func (c *Client) IsMember(ctx context.Context, channel, userID string) (bool, error) {
	cursor := ""
	for range maxMemberPages {
		type page struct {
			ids    []string
			cursor string
		}
		pg, err := read(ctx, c, "conversations.members", func(ctx context.Context) (page, error) {
			ids, next, err := c.api.GetUsersInConversationContext(ctx, &goslack.GetUsersInConversationParameters{ChannelID: channel, Cursor: cursor, Limit: 1000})
			return page{ids, next}, err
		})
		if err != nil {
			return false, err
		}
		if slices.Contains(pg.ids, userID) {
			return true, nil
		}
		if pg.cursor == "" {
			return false, nil
		}
		cursor = pg.cursor
	}
	return false, fmt.Errorf("%w: more than %d pages", ErrMembersUnknown, maxMemberPages)
}
