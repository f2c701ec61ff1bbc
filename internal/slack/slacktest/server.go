// Package slacktest is a fake of Slack for tests and demos: the Web API
// methods weft calls (with Slack's ok:false errors, 429s with Retry-After,
// cursors and message metadata, and faults in fakekit's vocabulary by
// method), signed Events API deliveries with Slack's retries, and a Socket
// Mode websocket. The real slack-go client talks to
// it through its API URL option. Tests post messages as users, which
// delivers the events, inject faults, and read back what the bot did. Only
// tests and the demo may import it.
package slacktest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weft-dev/weft/internal/fakekit"
)

// Credentials and ids of the fake workspace and its one app.
const (
	BotToken      = "xoxb-slacktest-bot"
	AppToken      = "xapp-slacktest-app"
	SigningSecret = "slacktest-signing-secret"
	TeamID        = "T0SLACKTEST"
	TeamName      = "slacktest"
	AppID         = "A0WEFTAPP"
	BotUserID     = "U0WEFTBOT"
	BotID         = "B0WEFTBOT"
)

// Bot is the app's bot user in the fake's first workspace, as Post takes
// it to post as weft.
var Bot = User{ID: BotUserID, Name: "weft", BotID: BotID, AppID: AppID}

// Team is a workspace the app is in: its bot user there is its own, as in
// Slack, where an app's bot user differs from one workspace to the next.
type Team struct {
	ID, Name         string
	BotUserID, BotID string
}

// Bot is the app's bot user in the workspace.
func (tm Team) Bot() User { return User{ID: tm.BotUserID, Name: "weft", BotID: tm.BotID, AppID: AppID} }

// plainTeam is a workspace added without AddTeam: its bot user's ids are
// made from its own.
func plainTeam(id string) Team {
	return Team{ID: id, Name: strings.ToLower(id), BotUserID: "U" + id, BotID: "B" + id}
}

// firstTeam is the workspace every fake starts with, BotToken's.
var firstTeam = Team{ID: TeamID, Name: TeamName, BotUserID: BotUserID, BotID: BotID}

// User is a person or a bot that posts in the fake.
type User struct {
	ID   string
	Name string
	// BotID and AppID are set for a bot; its messages carry them.
	BotID string
	AppID string
}

// Metadata is a message's metadata.
type Metadata struct {
	EventType    string         `json:"event_type"`
	EventPayload map[string]any `json:"event_payload,omitempty"`
}

// Message is a message in the fake, as the bot or a user posted it.
type Message struct {
	Channel  string
	TS       string
	ThreadTS string // empty at the top level; TS itself on a thread's parent
	User     string
	BotID    string
	AppID    string
	Text     string
	Subtype  string
	EditedTS string
	Deleted  bool
	Metadata *Metadata
	// Streaming is a message started by chat.startStream and not stopped.
	Streaming bool
	// Blocks are the message's Block Kit blocks as posted (JSON), if any.
	Blocks json.RawMessage
	// Files are the files shared with it (PostFiles).
	Files []sharedFile
}

// Call is one Web API request the fake answered.
type Call struct {
	Method string
	Token  string
	Form   url.Values
}

// Server is a fake Slack. All methods are safe for concurrent use.
type Server struct {
	// Faults are served by Web API method, as "chat.postMessage".
	fakekit.Faults

	t    fakekit.TB
	http *httptest.Server

	mu       sync.Mutex
	lastTS   int64 // microseconds since the epoch of the last ts handed out
	teams    map[string]Team
	tokens   map[string]string // bot token → its team's id
	channels map[string]*channel
	users    map[string]User // by id: everyone who posted or was added
	calls    fakekit.Log[Call]
	statuses []Status
	// changed wakes Wait: a status or title set, a socket connected or
	// gone.
	changed  fakekit.Signal
	pageCap  int
	oauth    *OAuth            // answers oauth.v2.access, once attached
	noStream map[string]string // channel → the error its streaming calls get

	closeOnce sync.Once
	events    *events
	socket    *socketState
	assistant assistantState        // under mu
	interact  interactURLs          // under mu
	files     map[string]sharedFile // by url_private's path, under mu
	fileSeq   int                   // under mu
	// ephemerals are chat.postEphemeral's messages, under mu.
	ephemerals []Ephemeral
}

type channel struct {
	team     string
	id       string
	typ      string // channel, group, im, mpim
	messages []*Message
	members  []string // user ids, in the order they joined
}

// Status is one assistant.threads.setStatus call.
type Status struct {
	Channel, ThreadTS, Status string
	// LoadingMessages are the loading_messages sent with it.
	LoadingMessages []string
}

// NewServer starts a fake Slack. With a non-nil t it is closed in
// t.Cleanup and logs its failures there; with nil (a demo) the caller must
// Close it.
func NewServer(t fakekit.TB) *Server {
	s := &Server{
		t:        t,
		teams:    map[string]Team{TeamID: firstTeam},
		tokens:   map[string]string{BotToken: TeamID},
		channels: make(map[string]*channel),
		users:    make(map[string]User),
	}
	s.events = newEvents(s)
	s.socket = newSocketState()
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", s.serveAPI)
	mux.HandleFunc("/socket", s.serveSocket)
	mux.HandleFunc("/files-pri/", s.serveFile)
	mux.HandleFunc("/signin", s.serveSignIn)
	s.http = httptest.NewServer(mux)
	fakekit.CloseAtEnd(t, s.Close)
	return s
}

// Close stops deliveries, drops socket connections and shuts the server.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.events.close()
		s.socket.close()
		s.http.CloseClientConnections()
		s.http.Close()
	})
}

// URL is the server's base URL.
func (s *Server) URL() string { return s.http.URL }

// APIURL is the Web API base URL for slack.OptionAPIURL, ending in "/".
func (s *Server) APIURL() string { return s.http.URL + "/api/" }

func (s *Server) logf(format string, args ...any) {
	if s.t != nil {
		s.t.Logf("slacktest: "+format, args...)
	}
}

// AddTeam adds a workspace the app is in (the fake starts with TeamID's);
// it has no bot token until AddToken (or an OAuth install) gives it one.
func (s *Server) AddTeam(tm Team) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.teams[tm.ID] = tm
}

// AddToken makes token a bot token of the workspace teamID: calls with it
// act there, and see only that workspace's channels.
func (s *Server) AddToken(teamID, token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.teams[teamID]; !ok {
		s.teams[teamID] = plainTeam(teamID)
	}
	s.tokens[token] = teamID
}

// RevokeToken makes token invalid_auth, as uninstalling the app does.
func (s *Server) RevokeToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.tokens, token)
}

// TeamOf is a workspace the fake knows.
func (s *Server) TeamOf(teamID string) (Team, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tm, ok := s.teams[teamID]
	return tm, ok
}

// AddChannel creates a conversation of type typ in TeamID's workspace:
// "channel", "group", "im" (a DM with the bot; its id should start with D)
// or "mpim". Posting in an unknown id creates a "channel" there.
func (s *Server) AddChannel(id, typ string) { s.AddTeamChannel(TeamID, id, typ) }

// AddTeamChannel creates a conversation of type typ in a workspace.
func (s *Server) AddTeamChannel(teamID, id, typ string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.channelLocked(id)
	ch.typ, ch.team = typ, teamID
}

func (s *Server) channelLocked(id string) *channel {
	ch, ok := s.channels[id]
	if !ok {
		typ := "channel"
		if strings.HasPrefix(id, "D") {
			typ = "im"
		}
		ch = &channel{team: TeamID, id: id, typ: typ}
		s.channels[id] = ch
	}
	return ch
}

// channelTeam is the workspace of a channel (TeamID's for one unknown).
func (s *Server) channelTeam(id string) Team {
	s.mu.Lock()
	defer s.mu.Unlock()
	team := TeamID
	if ch, ok := s.channels[id]; ok {
		team = ch.team
	}
	return s.teams[team]
}

// visibleLocked reports whether a call of team sees a channel: only its
// own workspace's, as Slack answers another's with channel_not_found.
func (s *Server) visibleLocked(team Team, channelID string) bool {
	ch, ok := s.channels[channelID]
	return ok && ch.team == team.ID
}

// SetPageCap caps every read's page size, as Slack does (at 15) for apps
// distributed outside its Marketplace; zero removes the cap.
func (s *Server) SetPageCap(n int) {
	s.mu.Lock()
	s.pageCap = n
	s.mu.Unlock()
}

// nextTSLocked hands out a ts later than every earlier one, in Slack's form
// "seconds.micros".
func (s *Server) nextTSLocked() string {
	now := time.Now().UnixMicro()
	if now <= s.lastTS {
		now = s.lastTS + 1
	}
	s.lastTS = now
	return fmt.Sprintf("%d.%06d", now/1e6, now%1e6)
}

// store records a message from u and returns a copy.
func (s *Server) storeLocked(u User, channelID, threadTS, text string, md *Metadata) Message {
	ch := s.channelLocked(channelID)
	if threadTS != "" {
		// A parent carries thread_ts once it has replies.
		if p := s.findLocked(channelID, threadTS); p != nil && p.ThreadTS == "" {
			p.ThreadTS = p.TS
		}
	}
	if u.ID != "" {
		if _, ok := s.users[u.ID]; !ok || u.Name != "" {
			s.users[u.ID] = u
		}
		ch.join(u.ID) // one posts where one is a member
	}
	m := &Message{Channel: channelID, TS: s.nextTSLocked(), ThreadTS: threadTS, User: u.ID, BotID: u.BotID, AppID: u.AppID, Text: text, Metadata: md}
	if u.BotID != "" && u.AppID == "" {
		m.Subtype = "bot_message"
	}
	ch.messages = append(ch.messages, m)
	return *m
}

// findLocked is the message at ts in a channel, or nil.
func (s *Server) findLocked(channelID, ts string) *Message {
	ch, ok := s.channels[channelID]
	if !ok {
		return nil
	}
	for _, m := range ch.messages {
		if m.TS == ts {
			return m
		}
	}
	return nil
}

// Messages is every message of a channel, oldest first, deleted ones
// included (marked).
func (s *Server) Messages(channelID string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ok := s.channels[channelID]
	if !ok {
		return nil
	}
	out := make([]Message, 0, len(ch.messages))
	for _, m := range ch.messages {
		out = append(out, *m)
	}
	return out
}

// Thread is a thread's parent and replies, oldest first, deleted ones
// left out.
func (s *Server) Thread(channelID, threadTS string) []Message {
	var out []Message
	for _, m := range s.Messages(channelID) {
		if !m.Deleted && (m.TS == threadTS || m.ThreadTS == threadTS) {
			out = append(out, m)
		}
	}
	return out
}

// BotMessages is what the bot posted in a channel, oldest first.
func (s *Server) BotMessages(channelID string) []Message {
	bot := s.channelTeam(channelID).BotUserID
	var out []Message
	for _, m := range s.Messages(channelID) {
		if m.User == bot && !m.Deleted {
			out = append(out, m)
		}
	}
	return out
}

// Statuses is every assistant.threads.setStatus call, in order.
func (s *Server) Statuses() []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.statuses)
}

// Calls is every Web API request for method (all of them for ""), in order.
func (s *Server) Calls(method string) []Call { return callsOf(s.calls.All(), method) }

// Wait blocks until cond holds, checking it at once and each time a
// status or title is set or a Socket Mode connection opens or closes, or
// until ctx ends.
func (s *Server) Wait(ctx context.Context, cond func() bool) error {
	return s.changed.Wait(ctx, cond)
}

// WaitCalls blocks until at least n requests for method (any for "")
// arrived, and returns them, or until ctx ends.
func (s *Server) WaitCalls(ctx context.Context, method string, n int) ([]Call, error) {
	all, err := s.calls.Wait(ctx, func(all []Call) bool { return len(callsOf(all, method)) >= n })
	return callsOf(all, method), err
}

// callsOf is the calls for method among all (every one for "").
func callsOf(all []Call, method string) []Call {
	var out []Call
	for _, c := range all {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// serveAPI answers one Web API call: auth, faults, then the method.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusOK, errBody("invalid_form_data"))
		return
	}
	form := r.Form
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		form = url.Values{}
	}
	token := form.Get("token")
	if b, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		token = b
	}
	s.calls.Add(Call{Method: method, Token: token, Form: form})
	s.mu.Lock()
	oauth := s.oauth
	s.mu.Unlock()
	if method == "oauth.v2.access" && oauth != nil {
		oauth.access(w, r) // authenticated by the client's id and secret
		return
	}

	h, ok := s.methods()[method]
	if !ok {
		writeJSON(w, http.StatusOK, errBody("unknown_method"))
		return
	}
	s.mu.Lock()
	team, ok := s.teams[s.tokens[token]]
	s.mu.Unlock()
	if method == "apps.connections.open" {
		ok = token == AppToken
	}
	switch {
	case token == "":
		writeJSON(w, http.StatusOK, errBody("not_authed"))
		return
	case !ok:
		writeJSON(w, http.StatusOK, errBody("invalid_auth"))
		return
	}
	answer := func(w http.ResponseWriter) { h(team, form, w) }
	if f, ok := s.Take(method); ok {
		fakekit.Serve(w, r, f, answer, writeFault)
		return
	}
	answer(w)
}

// handler answers a method for a token of team.
type handler func(team Team, form url.Values, w http.ResponseWriter)

func (s *Server) methods() map[string]handler {
	return map[string]handler{
		"auth.test":                   s.authTest,
		"chat.postMessage":            s.postMessage,
		"chat.update":                 s.update,
		"chat.postEphemeral":          s.postEphemeral,
		"chat.startStream":            s.startStream,
		"chat.appendStream":           s.appendStream,
		"chat.stopStream":             s.stopStream,
		"conversations.replies":       s.replies,
		"conversations.history":       s.history,
		"assistant.threads.setStatus": s.setStatus,
		// assistant.go: the AI app surfaces.
		"assistant.threads.setTitle":            s.setTitle,
		"assistant.threads.setSuggestedPrompts": s.setSuggestedPrompts,
		"users.info":                            s.usersInfo,
		"conversations.members":                 s.members,
		"apps.connections.open":                 s.connectionsOpen,
	}
}

func (s *Server) authTest(team Team, _ url.Values, w http.ResponseWriter) {
	writeJSON(w, http.StatusOK, map[string]any{
		"ok": true, "url": "https://" + team.Name + ".slack.com/", "team": team.Name, "user": Bot.Name,
		"team_id": team.ID, "user_id": team.BotUserID, "bot_id": team.BotID,
	})
}

// eventTypeRE is what Slack accepts as a metadata event_type.
var eventTypeRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// maxText is where Slack truncates a message's text.
const maxText = 40000

func (s *Server) postMessage(team Team, form url.Values, w http.ResponseWriter) {
	chID, text, threadTS := form.Get("channel"), form.Get("text"), form.Get("thread_ts")
	if chID == "" {
		writeJSON(w, http.StatusOK, errBody("channel_not_found"))
		return
	}
	if strings.TrimSpace(text) == "" && form.Get("blocks") == "" {
		writeJSON(w, http.StatusOK, errBody("no_text"))
		return
	}
	var warnings []string
	var md *Metadata
	if raw := form.Get("metadata"); raw != "" {
		var m Metadata
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			writeJSON(w, http.StatusOK, errBody("invalid_metadata_format"))
			return
		}
		if eventTypeRE.MatchString(m.EventType) {
			md = &m
		} else {
			warnings = append(warnings, "invalid_metadata_schema")
		}
	}
	if len(text) > maxText {
		text = text[:maxText]
		warnings = append(warnings, "message_truncated")
	}
	s.mu.Lock()
	if !s.visibleLocked(team, chID) {
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, errBody("channel_not_found"))
		return
	}
	m := s.storeLocked(team.Bot(), chID, threadTS, text, md)
	if raw := form.Get("blocks"); raw != "" {
		m = s.setBlocksLocked(m, raw)
	}
	s.mu.Unlock()
	s.messageSent(m)
	body := map[string]any{"ok": true, "channel": chID, "ts": m.TS, "message": s.render(m, true)}
	if len(warnings) > 0 {
		body["response_metadata"] = map[string]any{"warnings": warnings}
	}
	writeJSON(w, http.StatusOK, body)
}

// render is a message as the Web API and events show it; metadata's
// payload only when asked for (include_all_metadata).
func (s *Server) render(m Message, payload bool) map[string]any {
	out := map[string]any{"type": "message", "ts": m.TS, "text": m.Text}
	if m.User != "" {
		out["user"] = m.User
	}
	if m.ThreadTS != "" {
		out["thread_ts"] = m.ThreadTS
	}
	if m.Subtype != "" {
		out["subtype"] = m.Subtype
	}
	if m.BotID != "" {
		out["bot_id"] = m.BotID
		if m.AppID != "" {
			out["app_id"] = m.AppID
			out["bot_profile"] = map[string]any{"id": m.BotID, "app_id": m.AppID, "team_id": s.channelTeam(m.Channel).ID}
		}
	}
	if m.EditedTS != "" {
		out["edited"] = map[string]any{"user": m.User, "ts": m.EditedTS}
	}
	if len(m.Blocks) > 0 {
		out["blocks"] = m.Blocks
	}
	if len(m.Files) > 0 {
		files := make([]map[string]any, len(m.Files))
		for i, f := range m.Files {
			files[i] = f.render(s.http.URL)
		}
		out["files"] = files
	}
	if m.Metadata != nil {
		md := map[string]any{"event_type": m.Metadata.EventType}
		if payload {
			md["event_payload"] = m.Metadata.EventPayload
		}
		out["metadata"] = md
	}
	if m.ThreadTS == m.TS && m.TS != "" {
		n := 0
		s.mu.Lock()
		if ch, ok := s.channels[m.Channel]; ok {
			for _, r := range ch.messages {
				if r.ThreadTS == m.TS && r.TS != m.TS && !r.Deleted {
					n++
				}
			}
		}
		s.mu.Unlock()
		out["reply_count"] = n
	}
	return out
}

// page is a read's cursor and size, as Slack takes them.
type page struct {
	start int // index of the first message of the page
	limit int
}

// readPage parses cursor and limit; a bad cursor is invalid_cursor.
func (s *Server) readPage(form url.Values, defaultLimit int) (page, string) {
	p := page{limit: defaultLimit}
	if l := form.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 {
			return p, "invalid_limit"
		}
		if n > 0 {
			p.limit = min(n, 1000)
		}
	}
	s.mu.Lock()
	if s.pageCap > 0 {
		p.limit = min(p.limit, s.pageCap)
	}
	s.mu.Unlock()
	if c := form.Get("cursor"); c != "" {
		raw, err := base64.StdEncoding.DecodeString(c)
		if err != nil {
			return p, "invalid_cursor"
		}
		n, ok := strings.CutPrefix(string(raw), "next:")
		i, err := strconv.Atoi(n)
		if !ok || err != nil || i < 0 {
			return p, "invalid_cursor"
		}
		p.start = i
	}
	return p, ""
}

// inRange applies oldest/latest/inclusive to a ts.
func inRange(ts string, form url.Values) bool {
	t := tsMicros(ts)
	incl := form.Get("inclusive") == "1" || form.Get("inclusive") == "true"
	if o := form.Get("oldest"); o != "" {
		if ot := tsMicros(o); t < ot || t == ot && !incl {
			return false
		}
	}
	if l := form.Get("latest"); l != "" {
		if lt := tsMicros(l); t > lt || t == lt && !incl {
			return false
		}
	}
	return true
}

// tsMicros is a ts in microseconds, for ordering.
func tsMicros(ts string) int64 {
	sec, frac, _ := strings.Cut(ts, ".")
	s, _ := strconv.ParseInt(sec, 10, 64)
	frac = (frac + "000000")[:6]
	us, _ := strconv.ParseInt(frac, 10, 64)
	return s*1e6 + us
}

// answerPage writes the page of msgs that p selects.
func (s *Server) answerPage(w http.ResponseWriter, msgs []Message, p page, payload bool) {
	if p.start > len(msgs) {
		writeJSON(w, http.StatusOK, errBody("invalid_cursor"))
		return
	}
	end := min(p.start+p.limit, len(msgs))
	out := make([]map[string]any, 0, end-p.start)
	for _, m := range msgs[p.start:end] {
		out = append(out, s.render(m, payload))
	}
	body := map[string]any{"ok": true, "messages": out, "has_more": end < len(msgs)}
	next := ""
	if end < len(msgs) {
		next = base64.StdEncoding.EncodeToString([]byte("next:" + strconv.Itoa(end)))
	}
	body["response_metadata"] = map[string]any{"next_cursor": next}
	writeJSON(w, http.StatusOK, body)
}

func (s *Server) replies(team Team, form url.Values, w http.ResponseWriter) {
	chID, ts := form.Get("channel"), form.Get("ts")
	p, bad := s.readPage(form, 1000)
	if bad != "" {
		writeJSON(w, http.StatusOK, errBody(bad))
		return
	}
	s.mu.Lock()
	ok := s.visibleLocked(team, chID)
	s.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusOK, errBody("channel_not_found"))
		return
	}
	if ts == "" {
		writeJSON(w, http.StatusOK, errBody("invalid_arguments"))
		return
	}
	var parent *Message
	var replies []Message
	for _, m := range s.Messages(chID) {
		switch {
		case m.TS == ts:
			parent = &m
		case m.ThreadTS == ts && !m.Deleted && inRange(m.TS, form):
			replies = append(replies, m)
		}
	}
	if parent == nil || parent.Deleted && len(replies) == 0 {
		writeJSON(w, http.StatusOK, errBody("thread_not_found"))
		return
	}
	if parent.Deleted {
		// Slack keeps a deleted parent with replies as a tombstone.
		parent.Text, parent.Subtype, parent.User, parent.Metadata = "This message was deleted.", "tombstone", "USLACKBOT", nil
	}
	msgs := append([]Message{*parent}, replies...)
	s.answerPage(w, msgs, p, truthy(form.Get("include_all_metadata")))
}

func (s *Server) history(team Team, form url.Values, w http.ResponseWriter) {
	chID := form.Get("channel")
	p, bad := s.readPage(form, 100)
	if bad != "" {
		writeJSON(w, http.StatusOK, errBody(bad))
		return
	}
	s.mu.Lock()
	ok := s.visibleLocked(team, chID)
	s.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusOK, errBody("channel_not_found"))
		return
	}
	var msgs []Message
	all := s.Messages(chID)
	for i := len(all) - 1; i >= 0; i-- {
		m := all[i]
		if !m.Deleted && (m.ThreadTS == "" || m.ThreadTS == m.TS) && inRange(m.TS, form) {
			msgs = append(msgs, m)
		}
	}
	s.answerPage(w, msgs, p, truthy(form.Get("include_all_metadata")))
}

func truthy(v string) bool { return v == "1" || v == "true" }

func (s *Server) setStatus(team Team, form url.Values, w http.ResponseWriter) {
	chID := form.Get("channel_id")
	s.mu.Lock()
	ok := s.visibleLocked(team, chID)
	if ok {
		s.statuses = append(s.statuses, Status{Channel: chID, ThreadTS: form.Get("thread_ts"), Status: form.Get("status"),
			LoadingMessages: loadingMessages(form.Get("loading_messages"))})
	}
	s.mu.Unlock()
	s.changed.Notify()
	if !ok {
		writeJSON(w, http.StatusOK, errBody("channel_not_found"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
}

func errBody(code string) map[string]any { return map[string]any{"ok": false, "error": code} }

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// Post is a message from u in a channel (in threadTS's thread when set),
// as a person or another bot posts it; it returns the message as stored.
func (s *Server) Post(u User, channelID, threadTS, text string) Message {
	s.mu.Lock()
	m := s.storeLocked(u, channelID, threadTS, text, nil)
	s.mu.Unlock()
	s.messageSent(m)
	return m
}

// Edit changes a message's text, as its author editing it does, and
// delivers message_changed.
func (s *Server) Edit(channelID, ts, text string) (Message, bool) {
	s.mu.Lock()
	m := s.findLocked(channelID, ts)
	if m == nil || m.Deleted {
		s.mu.Unlock()
		return Message{}, false
	}
	previous := m.Text
	m.Text, m.EditedTS = text, s.nextTSLocked()
	out := *m
	s.mu.Unlock()
	s.messageChanged(out, previous)
	return out, true
}

// Delete removes a message, as its author deleting it does, and delivers
// message_deleted.
func (s *Server) Delete(channelID, ts string) (Message, bool) {
	s.mu.Lock()
	m := s.findLocked(channelID, ts)
	if m == nil || m.Deleted {
		s.mu.Unlock()
		return Message{}, false
	}
	m.Deleted = true
	out := *m
	s.mu.Unlock()
	s.messageDeleted(out)
	return out, true
}
