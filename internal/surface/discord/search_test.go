package discord_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/discovery"
	"github.com/weft-dev/weft/internal/surface/discord"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

// archive stores nothing: every read goes to Discord.
type archive struct{ conversation }

// ThreadTenant: the conversation is in conversation's server, its own
// organisation.
func (archive) ThreadTenant(context.Context, uuid.UUID) (thread.Tenant, string, error) {
	t := thread.DiscordTenant("120000000000000000")
	return t, t.OwnOrganisation(), nil
}

func (archive) Organisation(_ context.Context, t thread.Tenant) (string, error) {
	return t.OwnOrganisation(), nil
}

func (archive) ThreadByDiscordThread(context.Context, string) (*thread.Thread, error) {
	return nil, thread.ErrNotFound
}

func (archive) StoredDiscordMessages(context.Context, db.DiscordMessageQuery) ([]db.DiscordMessage, error) {
	return nil, nil
}

func (archive) StoredDiscordMessage(context.Context, string) (*db.DiscordMessage, error) {
	return nil, thread.ErrNotFound
}

func TestDiscordSearchFormat(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		msg  discovery.ChannelMessage
		want string
	}{
		{discovery.ChannelMessage{Author: "alice", Text: "hi", At: now.Add(-59 * time.Second)}, "[just now] alice: hi"},
		{discovery.ChannelMessage{Author: "alice", Text: "hi", At: now.Add(-time.Minute)}, "[1 minute ago] alice: hi"},
		{discovery.ChannelMessage{Author: "alice", Text: "hi", At: now.Add(-59 * time.Minute)}, "[59 minutes ago] alice: hi"},
		{discovery.ChannelMessage{Author: "weft", Bot: true, Text: "hi", At: now.Add(-time.Hour)}, "[1 hour ago] weft (Bot): hi"},
		{discovery.ChannelMessage{Author: "bob", Text: "hi", At: now.Add(-23 * time.Hour), Edited: true}, "[23 hours ago, edited] bob: hi"},
		{discovery.ChannelMessage{Author: "", Text: "a\n\nb", At: now.Add(-24 * time.Hour)}, "[1 day ago] Someone: a b"},
		{discovery.ChannelMessage{Author: "bob", Text: strings.Repeat("é", 301), At: now.Add(-49 * time.Hour)}, "[2 days ago] bob: " + strings.Repeat("é", 300)},
	}
	for i, tc := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			tc.msg.ID = fmt.Sprintf("1100000000000001%02d", i)
			dc := newMemDiscord()
			dc.channels[channelID] = discord.DiscordChannel{ID: channelID, GuildID: "120000000000000000", IsThread: true}
			dc.msgs[channelID] = []discovery.ChannelMessage{tc.msg}
			s := &discord.DiscordSearch{Reader: dc, Store: archive{}, Now: func() time.Time { return now }}
			i := slices.IndexFunc(s.Tools(), func(t tools.Tool) bool { return t.Name == "search_thread_messages" })
			got, err := s.Tools()[i].Handler(context.Background(), tools.Call{ThreadID: uuid.New(), Arguments: []byte(`{"thread_id":"` + channelID + `"}`)})
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}
