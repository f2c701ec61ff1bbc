package slacktest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// Title is one assistant.threads.setTitle call.
type Title struct {
	Channel, ThreadTS, Title string
}

// Prompts is one assistant.threads.setSuggestedPrompts call.
type Prompts struct {
	Channel, ThreadTS, Title string
	Prompts                  []Prompt
}

// Prompt is one suggested prompt.
type Prompt struct {
	Title   string `json:"title"`
	Message string `json:"message"`
}

// assistantState is what the AI app methods were called with.
type assistantState struct {
	titles  []Title
	prompts []Prompts
}

// Titles is every assistant.threads.setTitle call, in order.
func (s *Server) Titles() []Title {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Title(nil), s.assistant.titles...)
}

// SuggestedPrompts is every assistant.threads.setSuggestedPrompts call, in
// order.
func (s *Server) SuggestedPrompts() []Prompts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Prompts(nil), s.assistant.prompts...)
}

// loadingMessages reads setStatus's loading_messages: a JSON array, as
// Slack documents it, or the comma-joined list slack-go sends.
func loadingMessages(v string) []string {
	if v == "" {
		return nil
	}
	var out []string
	if json.Unmarshal([]byte(v), &out) == nil {
		return out
	}
	return strings.Split(v, ",")
}

func (s *Server) setTitle(team Team, form url.Values, w http.ResponseWriter) {
	chID, ts, title := form.Get("channel_id"), form.Get("thread_ts"), form.Get("title")
	if chID == "" || ts == "" || title == "" {
		writeJSON(w, http.StatusOK, errBody("invalid_arguments"))
		return
	}
	s.mu.Lock()
	ok := s.visibleLocked(team, chID)
	if ok {
		s.assistant.titles = append(s.assistant.titles, Title{Channel: chID, ThreadTS: ts, Title: title})
	}
	s.mu.Unlock()
	s.changed.Notify()
	if !ok {
		writeJSON(w, http.StatusOK, errBody("channel_not_found"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
}

// setSuggestedPrompts takes 1 to 4 prompts, each with a title and a
// message, as Slack does.
func (s *Server) setSuggestedPrompts(team Team, form url.Values, w http.ResponseWriter) {
	chID := form.Get("channel_id")
	var prompts []Prompt
	if err := json.Unmarshal([]byte(form.Get("prompts")), &prompts); err != nil || len(prompts) == 0 || len(prompts) > 4 {
		writeJSON(w, http.StatusOK, errBody("invalid_arguments"))
		return
	}
	for _, p := range prompts {
		if p.Title == "" || p.Message == "" {
			writeJSON(w, http.StatusOK, errBody("invalid_arguments"))
			return
		}
	}
	s.mu.Lock()
	ok := s.visibleLocked(team, chID)
	if ok {
		s.assistant.prompts = append(s.assistant.prompts, Prompts{Channel: chID, ThreadTS: form.Get("thread_ts"),
			Title: form.Get("title"), Prompts: prompts})
	}
	s.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusOK, errBody("channel_not_found"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
}

// AssistantThreadStarted opens an assistant thread in the DM channelID
// (an "im" of u with the app), as opening the app's container does: its
// root message, then assistant_thread_started. It returns the thread's ts.
func (s *Server) AssistantThreadStarted(u User, channelID string) string {
	s.mu.Lock()
	team := s.teams[s.channelLocked(channelID).team]
	root := s.storeLocked(team.Bot(), channelID, "", "New assistant thread", nil)
	s.findLocked(channelID, root.TS).Subtype = "assistant_app_thread"
	s.mu.Unlock()
	s.Send(map[string]any{"type": "assistant_thread_started", "event_ts": s.nowTS(),
		"assistant_thread": map[string]any{"user_id": u.ID, "channel_id": channelID, "thread_ts": root.TS,
			"context": map[string]any{"channel_id": "", "team_id": team.ID, "enterprise_id": ""}}})
	return root.TS
}

// AppHomeOpened is u opening the app's tab ("messages" or "home") in the
// DM channelID: app_home_opened.
func (s *Server) AppHomeOpened(u User, channelID, tab string) {
	s.Send(map[string]any{"type": "app_home_opened", "user": u.ID, "channel": channelID, "tab": tab, "event_ts": s.nowTS()})
}

// AppContextChanged is u, with the app's messages tab open, looking at
// another channel: app_context_changed naming it.
func (s *Server) AppContextChanged(u User, dmID, viewing string) {
	team := s.channelTeam(dmID)
	s.Send(map[string]any{"type": "app_context_changed", "user": u.ID, "channel": dmID, "event_ts": s.nowTS(),
		"context": map[string]any{"entities": []map[string]any{{"type": "slack#/types/channel_id", "value": viewing, "team_id": team.ID}}}})
}
