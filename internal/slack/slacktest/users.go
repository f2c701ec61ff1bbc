package slacktest

import (
	"net/http"
	"net/url"
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
