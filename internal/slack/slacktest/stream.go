package slacktest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"
)

// maxStreamText is the most markdown_text one streaming call takes.
const maxStreamText = 12000

// RefuseStreaming makes the streaming methods answer code (such as
// "channel_type_not_supported") in a channel, as Slack does where a
// channel's type or a workspace cannot stream.
func (s *Server) RefuseStreaming(channelID, code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.noStream == nil {
		s.noStream = map[string]string{}
	}
	s.noStream[channelID] = code
}

// streamTarget checks a streaming call's channel: visible to the team and
// allowed to stream. It answers the error and returns false otherwise.
func (s *Server) streamTargetLocked(team Team, chID string, w http.ResponseWriter) bool {
	if chID == "" || !s.visibleLocked(team, chID) {
		writeJSON(w, http.StatusOK, errBody("channel_not_found"))
		return false
	}
	if code := s.noStream[chID]; code != "" {
		writeJSON(w, http.StatusOK, errBody(code))
		return false
	}
	return true
}

// streamText reads markdown_text: at most 12,000 characters.
func streamText(form url.Values, w http.ResponseWriter) (string, bool) {
	text := form.Get("markdown_text")
	if utf8.RuneCountInString(text) > maxStreamText {
		writeJSON(w, http.StatusOK, errBody("msg_too_long"))
		return "", false
	}
	return text, true
}

// startStream starts a streaming message from the bot, in a thread. Outside
// a DM Slack needs the recipient user and team.
func (s *Server) startStream(team Team, form url.Values, w http.ResponseWriter) {
	chID, threadTS := form.Get("channel"), form.Get("thread_ts")
	text, ok := streamText(form, w)
	if !ok {
		return
	}
	s.mu.Lock()
	if !s.streamTargetLocked(team, chID, w) {
		s.mu.Unlock()
		return
	}
	if s.channelLocked(chID).typ != "im" && (form.Get("recipient_user_id") == "" || form.Get("recipient_team_id") == "") {
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, errBody("invalid_arguments"))
		return
	}
	m := s.storeLocked(team.Bot(), chID, threadTS, text, nil)
	s.findLocked(chID, m.TS).Streaming = true
	m.Streaming = true
	s.mu.Unlock()
	s.messageSent(m)
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "channel": chID, "ts": m.TS})
}

// streamingLocked is the bot's streaming message at ts, or nil after
// answering the error.
func (s *Server) streamingLocked(team Team, form url.Values, w http.ResponseWriter) *Message {
	chID, ts := form.Get("channel"), form.Get("ts")
	if !s.streamTargetLocked(team, chID, w) {
		return nil
	}
	m := s.findLocked(chID, ts)
	switch {
	case m == nil || m.Deleted:
		writeJSON(w, http.StatusOK, errBody("message_not_found"))
		return nil
	case m.User != team.BotUserID:
		writeJSON(w, http.StatusOK, errBody("message_not_owned_by_app"))
		return nil
	case !m.Streaming:
		writeJSON(w, http.StatusOK, errBody("message_not_in_streaming_state"))
		return nil
	}
	return m
}

// appendStream adds markdown_text (required) to a streaming message.
func (s *Server) appendStream(team Team, form url.Values, w http.ResponseWriter) {
	text, ok := streamText(form, w)
	if !ok {
		return
	}
	if text == "" {
		writeJSON(w, http.StatusOK, errBody("invalid_arguments"))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.streamingLocked(team, form, w)
	if m == nil {
		return
	}
	m.Text += text
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS})
}

// stopStream ends a streaming message, adding markdown_text and metadata.
func (s *Server) stopStream(team Team, form url.Values, w http.ResponseWriter) {
	text, ok := streamText(form, w)
	if !ok {
		return
	}
	md, ok := metadataOf(form, w)
	if !ok {
		return
	}
	s.mu.Lock()
	m := s.streamingLocked(team, form, w)
	if m == nil {
		s.mu.Unlock()
		return
	}
	previous := m.Text
	m.Text += text
	m.Streaming = false
	if md != nil {
		m.Metadata = md
	}
	if raw := form.Get("blocks"); raw != "" && json.Valid([]byte(raw)) {
		m.Blocks = json.RawMessage(raw) // shown under the streamed text
	}
	out := *m
	s.mu.Unlock()
	s.messageChanged(out, previous)
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "channel": out.Channel, "ts": out.TS, "message": s.render(out, true)})
}

// update replaces the text (and, when given, the metadata) of one of the
// bot's messages; a message still streaming cannot be updated.
func (s *Server) update(team Team, form url.Values, w http.ResponseWriter) {
	chID, ts, text := form.Get("channel"), form.Get("ts"), form.Get("text")
	if strings.TrimSpace(text) == "" && form.Get("blocks") == "" {
		writeJSON(w, http.StatusOK, errBody("no_text"))
		return
	}
	if len(text) > maxText {
		writeJSON(w, http.StatusOK, errBody("msg_too_long"))
		return
	}
	md, ok := metadataOf(form, w)
	if !ok {
		return
	}
	s.mu.Lock()
	if !s.visibleLocked(team, chID) {
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, errBody("channel_not_found"))
		return
	}
	m := s.findLocked(chID, ts)
	var code string
	switch {
	case m == nil || m.Deleted:
		code = "message_not_found"
	case m.User != team.BotUserID:
		code = "cant_update_message"
	case m.Streaming:
		code = "streaming_state_conflict"
	}
	if code != "" {
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, errBody(code))
		return
	}
	previous := m.Text
	m.Text, m.EditedTS = text, s.nextTSLocked()
	if md != nil {
		m.Metadata = md
	}
	if raw := form.Get("blocks"); raw != "" && json.Valid([]byte(raw)) {
		// chat.update replaces the blocks it is given; without, Slack
		// keeps the message's own.
		m.Blocks = json.RawMessage(raw)
	}
	out := *m
	s.mu.Unlock()
	s.messageChanged(out, previous)
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "channel": chID, "ts": ts, "text": text})
}

// metadataOf reads a call's metadata: nil when absent or of an invalid
// event_type (Slack drops it with a warning), an error for bad JSON.
func metadataOf(form url.Values, w http.ResponseWriter) (*Metadata, bool) {
	raw := form.Get("metadata")
	if raw == "" {
		return nil, true
	}
	var m Metadata
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		writeJSON(w, http.StatusOK, errBody("invalid_metadata_format"))
		return nil, false
	}
	if !eventTypeRE.MatchString(m.EventType) {
		return nil, true
	}
	return &m, true
}
