package discordtest

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"
)

// codeCannotEditOthers is Discord's code for editing another's message.
const codeCannotEditOthers = 50005

// Edit is one edit the bot made of its own message.
type Edit struct {
	ID              string
	Content         string
	AllowedMentions *discordgo.MessageAllowedMentions
	At              time.Time
}

// Edits returns the bot's edits of its messages in a channel, in order.
func (s *Server) Edits(channelID string) []Edit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.edits[channelID])
}

// BotMessages returns the bot's messages in a channel as they stand now
// (edited, deleted ones gone), oldest first.
func (s *Server) BotMessages(channelID string) []*discordgo.Message {
	var out []*discordgo.Message
	for _, m := range s.Messages(channelID) {
		if m.Author != nil && m.Author.ID == s.bot.ID {
			out = append(out, m)
		}
	}
	return out
}

// messageEditBody is what the fake reads from Edit Message.
type messageEditBody struct {
	Content         *string                           `json:"content"`
	AllowedMentions *discordgo.MessageAllowedMentions `json:"allowed_mentions"`
	// Components, when sent, replace the message's (an empty list removes
	// them).
	Components *[]sentRow `json:"components"`
}

// handleMessageEdit edits one of the bot's messages, as Discord does
// (only its own; the same content limits as a post), and dispatches
// MESSAGE_UPDATE.
func (s *Server) handleMessageEdit(w http.ResponseWriter, r *http.Request) {
	var body messageEditBody
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, codeInvalidFormBody, "Invalid Form Body")
		return
	}
	switch {
	case body.Content == nil || strings.TrimSpace(*body.Content) == "":
		writeError(w, http.StatusBadRequest, codeEmptyMessage, "Cannot send an empty message")
		return
	case utf8.RuneCountInString(*body.Content) > 2000:
		writeError(w, http.StatusBadRequest, codeInvalidFormBody, "Invalid Form Body: content must be 2000 or fewer in length")
		return
	}
	channelID, messageID := r.PathValue("channel"), r.PathValue("message")
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.findMessageLocked(channelID, messageID)
	switch {
	case m == nil:
		writeError(w, http.StatusNotFound, codeUnknownMessage, "Unknown Message")
		return
	case m.Author == nil || m.Author.ID != s.bot.ID:
		writeError(w, http.StatusForbidden, codeCannotEditOthers, "Cannot edit a message authored by another user")
		return
	}
	m.Content = *body.Content
	edited := time.Now().UTC()
	m.EditedTimestamp = &edited
	s.edits[channelID] = append(s.edits[channelID], Edit{ID: m.ID, Content: m.Content, AllowedMentions: body.AllowedMentions, At: edited})
	for i := range s.sent[channelID] {
		if s.sent[channelID][i].ID == m.ID {
			s.sent[channelID][i].Content = m.Content
			if body.Components != nil {
				s.sent[channelID][i].Buttons = buttons(*body.Components)
			}
		}
	}
	s.dispatchLocked("MESSAGE_UPDATE", m)
	writeJSON(w, http.StatusOK, m)
}

// handleMessageDelete deletes one of the bot's messages and dispatches
// MESSAGE_DELETE.
func (s *Server) handleMessageDelete(w http.ResponseWriter, r *http.Request) {
	channelID, messageID := r.PathValue("channel"), r.PathValue("message")
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.findMessageLocked(channelID, messageID)
	if m == nil {
		writeError(w, http.StatusNotFound, codeUnknownMessage, "Unknown Message")
		return
	}
	if m.Author == nil || m.Author.ID != s.bot.ID {
		writeError(w, http.StatusForbidden, 50013, "Missing Permissions")
		return
	}
	history := s.messages[channelID]
	for i, h := range history {
		if h == m {
			s.messages[channelID] = append(history[:i:i], history[i+1:]...)
			break
		}
	}
	s.sent[channelID] = slices.DeleteFunc(s.sent[channelID], func(sm SentMessage) bool { return sm.ID == m.ID })
	s.dispatchLocked("MESSAGE_DELETE", map[string]string{"id": m.ID, "channel_id": channelID, "guild_id": m.GuildID})
	w.WriteHeader(http.StatusNoContent)
}

// findMessageLocked is a message in a channel, or nil.
func (s *Server) findMessageLocked(channelID, id string) *discordgo.Message {
	for _, m := range s.messages[channelID] {
		if m.ID == id {
			return m
		}
	}
	return nil
}
