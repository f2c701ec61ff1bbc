// Package discordtest is a fake of Discord's REST API and gateway for tests
// and demos. The real discordgo session talks to it: REST over an
// httptest.Server under /api/v9, and the gateway as a websocket at the URL
// GET /gateway returns. Tests post messages as users (which also dispatches
// the gateway events), drop the connection, give faults in fakekit's
// vocabulary, and read back
// what the bot sent. Only tests and the demo may import it.
package discordtest

import (
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/weft-dev/weft/internal/fakekit"
	"github.com/weft-dev/weft/internal/thread"
)

// Token is the bot token the fake accepts, without the "Bot " prefix.
const Token = "discordtest-token"

// apiPrefix is the path of Discord's REST API at the version discordgo uses
// (its APIVersion, a variable, is "9").
const apiPrefix = "/api/v9"

// User is a person or bot that posts in the fake.
type User struct {
	ID   string
	Name string
	Bot  bool
}

// Server is a fake Discord. All methods are safe for concurrent use.
type Server struct {
	// Faults are served by "METHOD path", the path relative to the API
	// root, as "POST /channels/123/messages".
	fakekit.Faults

	t    fakekit.TB
	http *httptest.Server
	bot  discordgo.User
	app  string

	closeOnce sync.Once
	conns     sync.WaitGroup // gateway connections being served

	mu        sync.Mutex
	lastID    uint64
	channels  map[string]*discordgo.Channel
	messages  map[string][]*discordgo.Message // per channel, oldest first
	nonces    map[string]string               // channel/nonce → message id
	sent      map[string][]SentMessage
	edits     map[string][]Edit
	typing    map[string]int
	requests  fakekit.Log[Request]
	overwrite []CommandOverwrite
	webhooks  map[string][]WebhookMessage    // by interaction token
	members   map[string][]*discordgo.Member // by guild
	gateway   gatewayState
	// files are the attachments served, by path; downloads are the paths
	// fetched.
	files     map[string]File
	downloads []string
}

// NewServer starts a fake Discord. With a non-nil t it is closed in
// t.Cleanup and logs its failures there; with nil (a demo) the caller must
// Close it.
func NewServer(t fakekit.TB) *Server {
	s := &Server{
		t:        t,
		channels: make(map[string]*discordgo.Channel),
		messages: make(map[string][]*discordgo.Message),
		nonces:   make(map[string]string),
		sent:     make(map[string][]SentMessage),
		edits:    make(map[string][]Edit),
		typing:   make(map[string]int),
		webhooks: make(map[string][]WebhookMessage),
		gateway:  newGatewayState(),
	}
	s.bot = discordgo.User{ID: s.newID(), Username: "weft", Bot: true}
	s.app = s.newID()
	s.http = httptest.NewServer(s.routes())
	fakekit.CloseAtEnd(t, s.Close)
	return s
}

// Close stops the server and every gateway connection. It is idempotent.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.gateway.closed = true
		for c := range s.gateway.conns {
			c.ws.Close()
		}
		s.mu.Unlock()
		s.conns.Wait()
		s.http.Close()
	})
}

// URL is the base URL to use as discord.Config.APIBaseURL.
func (s *Server) URL() string { return s.http.URL }

// GatewayURL is the websocket URL GET /gateway answers with.
func (s *Server) GatewayURL() string {
	return "ws" + strings.TrimPrefix(s.http.URL, "http") + "/ws"
}

// BotUser is the bot's own user, as READY reports it.
func (s *Server) BotUser() User { return User{ID: s.bot.ID, Name: s.bot.Username, Bot: true} }

// ApplicationID is the bot's application id.
func (s *Server) ApplicationID() string { return s.app }

// AddChannel creates a text channel in a guild and returns its id. An empty
// guildID makes a DM channel.
func (s *Server) AddChannel(guildID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := &discordgo.Channel{ID: s.newIDLocked(), GuildID: guildID, Name: "general", Type: discordgo.ChannelTypeGuildText}
	if guildID == "" {
		ch.Type = discordgo.ChannelTypeDM
	}
	s.channels[ch.ID] = ch
	return ch.ID
}

// Request is one REST request the fake received.
type Request struct {
	Method string
	Path   string // without the /api/v9 prefix
	Query  string
	Status int
	At     time.Time
}

// Requests returns every REST request so far, in arrival order.
func (s *Server) Requests() []Request { return s.requests.All() }

// SentMessage is a message the bot created over REST, with what it asked.
type SentMessage struct {
	ID              string
	Content         string
	Nonce           string
	EnforceNonce    bool
	AllowedMentions *discordgo.MessageAllowedMentions // nil if absent
	// Buttons are the message components' buttons it was sent with.
	Buttons []Button
}

// Sent returns the messages the bot created in a channel, oldest first,
// with their content as it stands (edited; deleted ones left out). A send
// deduplicated by its nonce is not listed twice.
func (s *Server) Sent(channelID string) []SentMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SentMessage(nil), s.sent[channelID]...)
}

// Typing returns how often the bot triggered typing in a channel.
func (s *Server) Typing(channelID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.typing[channelID]
}

// Messages returns a channel's history as the fake holds it, oldest first.
func (s *Server) Messages(channelID string) []*discordgo.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*discordgo.Message, 0, len(s.messages[channelID]))
	for _, m := range s.messages[channelID] {
		out = append(out, copyMessage(m))
	}
	return out
}

// Channel returns a channel or thread as the fake holds it.
func (s *Server) Channel(id string) (*discordgo.Channel, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ok := s.channels[id]
	if !ok {
		return nil, false
	}
	return copyChannel(ch), true
}

// mentionPattern finds user mentions in content.
var mentionPattern = regexp.MustCompile(`<@!?(\d+)>`)

// PostUserMessage posts content in a channel as author, stores it in the
// history, and dispatches MESSAGE_CREATE to connected gateways. Mentions of
// the bot (<@id>) fill the message's mentions as Discord does.
func (s *Server) PostUserMessage(channelID string, author User, content string) *discordgo.Message {
	return s.postUserMessage(channelID, author, content, nil)
}

func (s *Server) postUserMessage(channelID string, author User, content string, atts []*discordgo.MessageAttachment) *discordgo.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.mustChannelLocked(channelID)
	m := &discordgo.Message{
		ID:        s.newIDLocked(),
		ChannelID: channelID,
		GuildID:   ch.GuildID,
		Content:   content,
		Timestamp: time.Now().UTC(),
		Author:    &discordgo.User{ID: author.ID, Username: author.Name, Bot: author.Bot},
		Type:      discordgo.MessageTypeDefault,
	}
	m.Attachments = atts
	for _, match := range mentionPattern.FindAllStringSubmatch(content, -1) {
		u := &discordgo.User{ID: match[1]}
		if match[1] == s.bot.ID {
			u = copyUser(&s.bot)
		}
		m.Mentions = append(m.Mentions, u)
	}
	s.messages[channelID] = append(s.messages[channelID], m)
	s.addMemberLocked(ch.GuildID, author, "")
	s.dispatchLocked("MESSAGE_CREATE", m)
	return copyMessage(m)
}

// EditMessage changes a message's content, sets its edit time, and
// dispatches MESSAGE_UPDATE.
func (s *Server) EditMessage(channelID, messageID, content string) *discordgo.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.mustMessageLocked(channelID, messageID)
	m.Content = content
	edited := time.Now().UTC()
	m.EditedTimestamp = &edited
	s.dispatchLocked("MESSAGE_UPDATE", m)
	return copyMessage(m)
}

// DeleteMessage removes a message and dispatches MESSAGE_DELETE.
func (s *Server) DeleteMessage(channelID, messageID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.mustMessageLocked(channelID, messageID)
	history := s.messages[channelID]
	for i, h := range history {
		if h == m {
			s.messages[channelID] = append(history[:i:i], history[i+1:]...)
			break
		}
	}
	s.dispatchLocked("MESSAGE_DELETE", map[string]string{"id": m.ID, "channel_id": channelID, "guild_id": m.GuildID})
}

// AddThread creates a public thread in a channel, as a user would, and
// dispatches THREAD_CREATE; it returns the thread's id.
func (s *Server) AddThread(parentID, name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	parent := s.mustChannelLocked(parentID)
	th := s.newThreadLocked(s.newIDLocked(), parent, name, discordgo.ChannelTypeGuildPublicThread)
	s.dispatchLocked("THREAD_CREATE", threadCreate(th))
	return th.ID
}

// ArchiveThread archives a thread and dispatches THREAD_UPDATE.
func (s *Server) ArchiveThread(threadID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	th := s.mustChannelLocked(threadID)
	th.ThreadMetadata.Archived = true
	th.ThreadMetadata.ArchiveTimestamp = time.Now().UTC()
	s.dispatchLocked("THREAD_UPDATE", th)
}

// DeleteThread removes a thread and dispatches THREAD_DELETE, which carries
// only the ids, type and parent.
func (s *Server) DeleteThread(threadID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	th := s.mustChannelLocked(threadID)
	delete(s.channels, threadID)
	s.dispatchLocked("THREAD_DELETE", map[string]any{"id": th.ID, "guild_id": th.GuildID, "parent_id": th.ParentID, "type": th.Type})
}

// newThreadLocked stores a thread channel.
func (s *Server) newThreadLocked(id string, parent *discordgo.Channel, name string, typ discordgo.ChannelType) *discordgo.Channel {
	th := &discordgo.Channel{
		ID: id, GuildID: parent.GuildID, ParentID: parent.ID, Name: name, Type: typ, OwnerID: s.bot.ID,
		ThreadMetadata: &discordgo.ThreadMetadata{AutoArchiveDuration: 4320},
	}
	s.channels[id] = th
	return th
}

// threadCreate is a THREAD_CREATE payload.
func threadCreate(th *discordgo.Channel) any {
	return struct {
		*discordgo.Channel
		NewlyCreated bool `json:"newly_created"`
	}{th, true}
}

// newID returns a fresh snowflake.
func (s *Server) newID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.newIDLocked()
}

// newIDLocked returns a snowflake for now, strictly above every earlier one.
func (s *Server) newIDLocked() string {
	id := thread.SnowflakeAt(time.Now())
	if id <= s.lastID {
		id = s.lastID + 1
	}
	s.lastID = id
	return strconv.FormatUint(id, 10)
}

// mustChannelLocked returns a channel the test refers to, failing loudly if
// it does not exist: that is a bug in the test.
func (s *Server) mustChannelLocked(id string) *discordgo.Channel {
	ch, ok := s.channels[id]
	if !ok {
		panic("discordtest: unknown channel " + id)
	}
	return ch
}

// mustMessageLocked returns a message the test refers to.
func (s *Server) mustMessageLocked(channelID, id string) *discordgo.Message {
	for _, m := range s.messages[channelID] {
		if m.ID == id {
			return m
		}
	}
	panic("discordtest: unknown message " + id + " in channel " + channelID)
}

// logf logs to the test, if any.
func (s *Server) logf(format string, args ...any) {
	if s.t != nil {
		s.t.Logf("discordtest: "+format, args...)
	}
}
