package slacktest

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"strconv"
)

// AddUser makes u a member of the fake's workspaces, as users.info finds
// them; posting as u does too.
func (s *Server) AddUser(u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[u.ID] = u
}

// usersInfo answers users.info: the user's name as its username, real
// name and display name alike; user_not_found for anyone else.
func (s *Server) usersInfo(team Team, form url.Values, w http.ResponseWriter) {
	s.mu.Lock()
	u, ok := s.users[form.Get("user")]
	s.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusOK, errBody("user_not_found"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "user": map[string]any{
		"id": u.ID, "team_id": team.ID, "name": u.Name, "real_name": u.Name, "is_bot": u.BotID != "",
		"profile": map[string]any{"real_name": u.Name, "display_name": u.Name},
	}})
}

// AddMember makes a user a member of a channel; posting there does too.
func (s *Server) AddMember(channelID, userID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.channelLocked(channelID).join(userID)
}

func (ch *channel) join(userID string) {
	if !slices.Contains(ch.members, userID) {
		ch.members = append(ch.members, userID)
	}
}

// members answers conversations.members: the channel's members' ids, a
// page at a time.
func (s *Server) members(team Team, form url.Values, w http.ResponseWriter) {
	p, bad := s.readPage(form, 100)
	if bad != "" {
		writeJSON(w, http.StatusOK, errBody(bad))
		return
	}
	s.mu.Lock()
	ok := s.visibleLocked(team, form.Get("channel"))
	var ids []string
	if ok {
		ids = slices.Clone(s.channels[form.Get("channel")].members)
	}
	s.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusOK, errBody("channel_not_found"))
		return
	}
	if p.start > len(ids) {
		writeJSON(w, http.StatusOK, errBody("invalid_cursor"))
		return
	}
	end := min(p.start+p.limit, len(ids))
	next := ""
	if end < len(ids) {
		next = base64.StdEncoding.EncodeToString([]byte("next:" + strconv.Itoa(end)))
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "members": ids[p.start:end], "response_metadata": map[string]any{"next_cursor": next}})
}
