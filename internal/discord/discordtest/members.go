package discordtest

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/bwmarrin/discordgo"
)

// AddMember makes u a member of a guild, with nick its nickname there
// ("" for none). Whoever posts with PostUserMessage in a server channel is
// made a member too.
func (s *Server) AddMember(guildID string, u User, nick string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addMemberLocked(guildID, u, nick)
}

func (s *Server) addMemberLocked(guildID string, u User, nick string) {
	if guildID == "" {
		return
	}
	if s.members == nil {
		s.members = map[string][]*discordgo.Member{}
	}
	for _, m := range s.members[guildID] {
		if m.User.ID == u.ID {
			if nick != "" {
				m.Nick = nick
			}
			return
		}
	}
	s.members[guildID] = append(s.members[guildID], &discordgo.Member{GuildID: guildID, Nick: nick,
		User: &discordgo.User{ID: u.ID, Username: u.Name, Bot: u.Bot}})
}

// handleMemberSearch is Search Guild Members: the members whose username
// or nickname starts with query, case-insensitively, at most limit
// (default 1, at most 1000), as Discord answers it.
func (s *Server) handleMemberSearch(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	query := strings.ToLower(q.Get("query"))
	if query == "" {
		writeError(w, http.StatusBadRequest, codeInvalidFormBody, "Invalid Form Body: query")
		return
	}
	limit := 1
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			writeError(w, http.StatusBadRequest, codeInvalidFormBody, "Invalid Form Body: limit")
			return
		}
		limit = n
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []*discordgo.Member{}
	for _, m := range s.members[r.PathValue("guild")] {
		names := []string{m.User.Username, m.User.GlobalName, m.Nick}
		if slices.ContainsFunc(names, func(n string) bool { return n != "" && strings.HasPrefix(strings.ToLower(n), query) }) && len(out) < limit {
			c := *m
			u := *m.User
			c.User = &u
			out = append(out, &c)
		}
	}
	writeJSON(w, http.StatusOK, out)
}
