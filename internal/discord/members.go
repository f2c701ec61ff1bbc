package discord

import (
	"context"
)

// Member is a guild member as the search tools match people by name.
type Member struct {
	ID string
	// Names are the member's names, best first: the guild nickname, the
	// global display name, the username (empty ones left out).
	Names []string
	Bot   bool
}

// Name is the name the member shows as.
func (m Member) Name() string {
	if len(m.Names) == 0 {
		return ""
	}
	return m.Names[0]
}

// SearchMembers finds a guild's members whose username or nickname starts
// with query (Discord's Search Guild Members), at most limit.
func (c *Client) SearchMembers(ctx context.Context, guildID, query string, limit int) ([]Member, error) {
	ms, err := c.session.GuildMembersSearch(guildID, query, limit, opts(ctx)...)
	if err != nil {
		return nil, translate("search members", err)
	}
	out := make([]Member, 0, len(ms))
	for _, m := range ms {
		if m == nil || m.User == nil {
			continue
		}
		var names []string
		for _, n := range []string{m.Nick, m.User.GlobalName, m.User.Username} {
			if n != "" {
				names = append(names, n)
			}
		}
		out = append(out, Member{ID: m.User.ID, Names: names, Bot: m.User.Bot})
	}
	return out, nil
}
