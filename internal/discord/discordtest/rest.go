package discordtest

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/weft-dev/weft/internal/fakekit"
)

// Discord JSON error codes the fake answers with.
const (
	codeUnknownChannel      = 10003
	codeUnknownMessage      = 10008
	codeEmptyMessage        = 50006
	codeInvalidFormBody     = 50035
	codeThreadAlreadyExists = 160004
)

// routes is the fake's whole surface.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	api := func(pattern string, h http.HandlerFunc) {
		method, path, _ := strings.Cut(pattern, " ")
		mux.HandleFunc(method+" "+apiPrefix+path, h)
	}
	mux.HandleFunc("GET /attachments/", s.serveAttachment)
	api("GET /gateway", s.handleGateway)
	api("GET /gateway/bot", s.handleGateway)
	api("GET /users/@me", s.handleMe)
	api("GET /channels/{channel}", s.handleChannelGet)
	api("GET /channels/{channel}/messages", s.handleMessageList)
	api("POST /channels/{channel}/messages", s.handleMessageCreate)
	api("GET /channels/{channel}/messages/{message}", s.handleMessageGet)
	api("PATCH /channels/{channel}/messages/{message}", s.handleMessageEdit)
	api("DELETE /channels/{channel}/messages/{message}", s.handleMessageDelete)
	api("POST /channels/{channel}/messages/{message}/threads", s.handleThreadFromMessage)
	api("POST /channels/{channel}/threads", s.handleThreadWithoutMessage)
	api("PUT /channels/{channel}/thread-members/@me", s.handleThreadJoin)
	api("POST /channels/{channel}/typing", s.handleTyping)
	api("GET /guilds/{guild}/members/search", s.handleMemberSearch)
	api("PUT /applications/{app}/commands", s.handleCommandOverwrite)
	api("PUT /applications/{app}/guilds/{guild}/commands", s.handleCommandOverwrite)
	api("PATCH /webhooks/{app}/{token}/messages/@original", s.handleWebhookEditOriginal)
	api("POST /webhooks/{app}/{token}", s.handleWebhookExecute)
	mux.HandleFunc("GET /ws/", s.handleWebsocket)
	mux.HandleFunc("GET /ws", s.handleWebsocket)
	return s.middleware(mux)
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

// Unwrap lets a fault that drops the connection hijack it.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// middleware records REST requests, applies injected faults and checks the
// bot token. The gateway websocket passes straight through: it must be
// hijacked, and Discord authenticates it with IDENTIFY.
func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, isAPI := strings.CutPrefix(r.URL.Path, apiPrefix)
		if !isAPI {
			next.ServeHTTP(w, r)
			return
		}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		at := time.Now()
		defer func() {
			s.requests.Add(Request{Method: r.Method, Path: path, Query: r.URL.RawQuery, Status: rec.status, At: at})
		}()
		answer := func(w http.ResponseWriter) {
			public := strings.HasPrefix(path, "/gateway") && path != "/gateway/bot" || strings.HasPrefix(path, "/webhooks/")
			if !public && r.Header.Get("Authorization") != "Bot "+Token {
				writeError(w, http.StatusUnauthorized, 0, "401: Unauthorized")
				return
			}
			next.ServeHTTP(w, r)
		}
		if f, ok := s.Take(r.Method + " " + path); ok {
			fakekit.Serve(rec, r, f, answer, writeFault)
			return
		}
		answer(rec)
	})
}

func (s *Server) handleGateway(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"url":    s.GatewayURL(),
		"shards": 1,
		"session_start_limit": map[string]int{
			"total": 1000, "remaining": 1000, "reset_after": 0, "max_concurrency": 1,
		},
	})
}

func (s *Server) handleMe(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, &s.bot)
}

func (s *Server) handleChannelGet(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ok := s.channels[r.PathValue("channel")]
	if !ok {
		writeError(w, http.StatusNotFound, codeUnknownChannel, "Unknown Channel")
		return
	}
	writeJSON(w, http.StatusOK, ch)
}

// handleMessageList serves Get Channel Messages as Discord does: the page
// nearest the cursor, newest first, also when paging with after. It is
// stricter than Discord about misuse, to catch paging bugs: a limit outside
// 1-100 or more than one cursor is a 400.
func (s *Server) handleMessageList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := 50
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			writeError(w, http.StatusBadRequest, codeInvalidFormBody, "Invalid Form Body: limit")
			return
		}
		limit = n
	}
	before, after := q.Get("before"), q.Get("after")
	if q.Has("around") || before != "" && after != "" {
		writeError(w, http.StatusBadRequest, codeInvalidFormBody, "Invalid Form Body: one cursor only")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.channels[r.PathValue("channel")]; !ok {
		writeError(w, http.StatusNotFound, codeUnknownChannel, "Unknown Channel")
		return
	}
	history := s.messages[r.PathValue("channel")]
	var page []*discordgo.Message
	switch {
	case after != "":
		// The oldest messages after the cursor.
		for _, m := range history {
			if compareIDs(m.ID, after) > 0 && len(page) < limit {
				page = append(page, m)
			}
		}
	default:
		// The newest messages before the cursor, or overall.
		for _, m := range history {
			if before == "" || compareIDs(m.ID, before) < 0 {
				page = append(page, m)
			}
		}
		page = page[max(0, len(page)-limit):]
	}
	out := slices.Clone(page)
	slices.Reverse(out)
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleMessageGet(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.messages[r.PathValue("channel")] {
		if m.ID == r.PathValue("message") {
			writeJSON(w, http.StatusOK, m)
			return
		}
	}
	writeError(w, http.StatusNotFound, codeUnknownMessage, "Unknown Message")
}

// messageCreateBody is what the fake reads from Create Message.
type messageCreateBody struct {
	Content          string                            `json:"content"`
	Nonce            json.RawMessage                   `json:"nonce"`
	EnforceNonce     bool                              `json:"enforce_nonce"`
	AllowedMentions  *discordgo.MessageAllowedMentions `json:"allowed_mentions"`
	MessageReference *discordgo.MessageReference       `json:"message_reference"`
	Components       []sentRow                         `json:"components"`
}

// sentRow is an action row of message components as a client sends it.
type sentRow struct {
	Type       discordgo.ComponentType `json:"type"`
	Components []Button                `json:"components"`
}

// Button is a button a message was sent with.
type Button struct {
	Type     discordgo.ComponentType `json:"type"`
	Label    string                  `json:"label"`
	Style    discordgo.ButtonStyle   `json:"style"`
	CustomID string                  `json:"custom_id"`
}

// handleMessageCreate posts as the bot. With enforce_nonce, a nonce seen
// before in the channel returns the earlier message instead of posting,
// which is Discord's documented dedupe.
func (s *Server) handleMessageCreate(w http.ResponseWriter, r *http.Request) {
	var body messageCreateBody
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, codeInvalidFormBody, "Invalid Form Body")
		return
	}
	nonce := nonceString(body.Nonce)
	switch {
	case strings.TrimSpace(body.Content) == "":
		writeError(w, http.StatusBadRequest, codeEmptyMessage, "Cannot send an empty message")
		return
	case utf8.RuneCountInString(body.Content) > 2000:
		writeError(w, http.StatusBadRequest, codeInvalidFormBody, "Invalid Form Body: content must be 2000 or fewer in length")
		return
	case len(nonce) > 25:
		writeError(w, http.StatusBadRequest, codeInvalidFormBody, "Invalid Form Body: nonce")
		return
	}
	channelID := r.PathValue("channel")
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ok := s.channels[channelID]
	if !ok {
		writeError(w, http.StatusNotFound, codeUnknownChannel, "Unknown Channel")
		return
	}
	key := channelID + "/" + nonce
	if body.EnforceNonce && nonce != "" {
		if id, seen := s.nonces[key]; seen {
			writeJSON(w, http.StatusOK, s.mustMessageLocked(channelID, id))
			return
		}
	}
	m := &discordgo.Message{
		ID: s.newIDLocked(), ChannelID: channelID, GuildID: ch.GuildID, Content: body.Content,
		Timestamp: time.Now().UTC(), Author: copyUser(&s.bot), Type: discordgo.MessageTypeDefault,
		MessageReference: body.MessageReference,
	}
	if nonce != "" {
		s.nonces[key] = m.ID
	}
	s.messages[channelID] = append(s.messages[channelID], m)
	s.sent[channelID] = append(s.sent[channelID], SentMessage{
		ID: m.ID, Content: m.Content, Nonce: nonce, EnforceNonce: body.EnforceNonce, AllowedMentions: body.AllowedMentions,
		Buttons: buttons(body.Components),
	})
	// Discord echoes the bot's own messages on the gateway too.
	s.dispatchLocked("MESSAGE_CREATE", m)
	writeJSON(w, http.StatusOK, m)
}

// buttons are the buttons of a message's action rows, in order.
func buttons(rows []sentRow) []Button {
	var out []Button
	for _, r := range rows {
		if r.Type != discordgo.ActionsRowComponent {
			continue
		}
		out = append(out, r.Components...)
	}
	return out
}

// nonceString reads a nonce, which Discord accepts as a string or integer.
func nonceString(raw json.RawMessage) string {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str
	}
	return string(raw)
}

// threadStartBody is what the fake reads from the Start Thread endpoints.
type threadStartBody struct {
	Name string                `json:"name"`
	Type discordgo.ChannelType `json:"type"`
}

func (s *Server) handleThreadFromMessage(w http.ResponseWriter, r *http.Request) {
	var body threadStartBody
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || !validThreadName(body.Name) {
		writeError(w, http.StatusBadRequest, codeInvalidFormBody, "Invalid Form Body: name")
		return
	}
	channelID, messageID := r.PathValue("channel"), r.PathValue("message")
	s.mu.Lock()
	defer s.mu.Unlock()
	parent, ok := s.channels[channelID]
	if !ok {
		writeError(w, http.StatusNotFound, codeUnknownChannel, "Unknown Channel")
		return
	}
	if !slices.ContainsFunc(s.messages[channelID], func(m *discordgo.Message) bool { return m.ID == messageID }) {
		writeError(w, http.StatusNotFound, codeUnknownMessage, "Unknown Message")
		return
	}
	if _, exists := s.channels[messageID]; exists {
		writeError(w, http.StatusBadRequest, codeThreadAlreadyExists, "A thread has already been created for this message")
		return
	}
	// A thread started from a message has the message's id and is public.
	th := s.newThreadLocked(messageID, parent, body.Name, discordgo.ChannelTypeGuildPublicThread)
	s.dispatchLocked("THREAD_CREATE", threadCreate(th))
	// Discord then sends the whole starter message again, author included,
	// now carrying its thread and still no edited_timestamp: an update that
	// is not an edit.
	starter := s.mustMessageLocked(channelID, messageID)
	starter.Thread = th
	s.dispatchLocked("MESSAGE_UPDATE", starter)
	writeJSON(w, http.StatusCreated, th)
}

func (s *Server) handleThreadWithoutMessage(w http.ResponseWriter, r *http.Request) {
	var body threadStartBody
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || !validThreadName(body.Name) {
		writeError(w, http.StatusBadRequest, codeInvalidFormBody, "Invalid Form Body: name")
		return
	}
	if body.Type == 0 {
		// Discord's documented default, the trap discord.md pitfall 1 names.
		body.Type = discordgo.ChannelTypeGuildPrivateThread
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	parent, ok := s.channels[r.PathValue("channel")]
	if !ok {
		writeError(w, http.StatusNotFound, codeUnknownChannel, "Unknown Channel")
		return
	}
	th := s.newThreadLocked(s.newIDLocked(), parent, body.Name, body.Type)
	s.dispatchLocked("THREAD_CREATE", threadCreate(th))
	writeJSON(w, http.StatusCreated, th)
}

// validThreadName applies Discord's 1-100 code point rule.
func validThreadName(name string) bool {
	n := utf8.RuneCountInString(name)
	return n >= 1 && n <= 100
}

func (s *Server) handleThreadJoin(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ch, ok := s.channels[r.PathValue("channel")]; !ok || !ch.IsThread() {
		writeError(w, http.StatusNotFound, codeUnknownChannel, "Unknown Channel")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleTyping(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.channels[r.PathValue("channel")]; !ok {
		writeError(w, http.StatusNotFound, codeUnknownChannel, "Unknown Channel")
		return
	}
	s.typing[r.PathValue("channel")]++
	w.WriteHeader(http.StatusNoContent)
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers with Discord's error shape.
func writeError(w http.ResponseWriter, status, code int, message string) {
	writeJSON(w, status, map[string]any{"code": code, "message": message})
}

// compareIDs orders snowflakes numerically (length, then text).
func compareIDs(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// copyMessage returns a copy a caller may keep while the fake changes the
// original.
func copyMessage(m *discordgo.Message) *discordgo.Message {
	c := *m
	if m.EditedTimestamp != nil {
		t := *m.EditedTimestamp
		c.EditedTimestamp = &t
	}
	c.Mentions = slices.Clone(m.Mentions)
	if m.Author != nil {
		c.Author = copyUser(m.Author)
	}
	return &c
}

// copyUser returns a copy of u.
func copyUser(u *discordgo.User) *discordgo.User {
	c := *u
	return &c
}

// copyChannel returns a copy of ch.
func copyChannel(ch *discordgo.Channel) *discordgo.Channel {
	c := *ch
	if ch.ThreadMetadata != nil {
		md := *ch.ThreadMetadata
		c.ThreadMetadata = &md
	}
	return &c
}
