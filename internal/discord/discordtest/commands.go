package discordtest

import (
	"encoding/json"
	"net/http"

	"github.com/bwmarrin/discordgo"
)

// CommandOverwrite is one Bulk Overwrite of application commands.
type CommandOverwrite struct {
	AppID    string
	GuildID  string // empty for global commands
	Commands []*discordgo.ApplicationCommand
}

// CommandOverwrites returns every bulk overwrite so far, in order.
func (s *Server) CommandOverwrites() []CommandOverwrite {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]CommandOverwrite(nil), s.overwrite...)
}

func (s *Server) handleCommandOverwrite(w http.ResponseWriter, r *http.Request) {
	var cmds []*discordgo.ApplicationCommand
	if err := json.NewDecoder(r.Body).Decode(&cmds); err != nil {
		writeError(w, http.StatusBadRequest, codeInvalidFormBody, "Invalid Form Body")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range cmds {
		c.ID, c.ApplicationID, c.GuildID = s.newIDLocked(), r.PathValue("app"), r.PathValue("guild")
	}
	s.overwrite = append(s.overwrite, CommandOverwrite{AppID: r.PathValue("app"), GuildID: r.PathValue("guild"), Commands: cmds})
	writeJSON(w, http.StatusOK, cmds)
}

// WebhookMessage is what the bot sent through an interaction's webhook.
type WebhookMessage struct {
	Original        bool // an edit of the original (deferred) response
	Content         string
	AllowedMentions *discordgo.MessageAllowedMentions
}

// InteractionMessages returns what the bot sent for an interaction token:
// edits of the original response and follow-ups, in order.
func (s *Server) InteractionMessages(token string) []WebhookMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]WebhookMessage(nil), s.webhooks[token]...)
}

// webhookBody is what the fake reads from webhook edits and executions.
type webhookBody struct {
	Content         string                            `json:"content"`
	AllowedMentions *discordgo.MessageAllowedMentions `json:"allowed_mentions"`
}

func (s *Server) handleWebhookEditOriginal(w http.ResponseWriter, r *http.Request) {
	s.handleWebhookMessage(w, r, true)
}

func (s *Server) handleWebhookExecute(w http.ResponseWriter, r *http.Request) {
	s.handleWebhookMessage(w, r, false)
}

// handleWebhookMessage records an interaction response edit or follow-up.
func (s *Server) handleWebhookMessage(w http.ResponseWriter, r *http.Request, original bool) {
	var body webhookBody
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, codeInvalidFormBody, "Invalid Form Body")
		return
	}
	if r.PathValue("app") != s.app {
		writeError(w, http.StatusNotFound, 10015, "Unknown Webhook")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	token := r.PathValue("token")
	s.webhooks[token] = append(s.webhooks[token], WebhookMessage{Original: original, Content: body.Content, AllowedMentions: body.AllowedMentions})
	writeJSON(w, http.StatusOK, &discordgo.Message{ID: s.newIDLocked(), Content: body.Content, Author: copyUser(&s.bot)})
}
