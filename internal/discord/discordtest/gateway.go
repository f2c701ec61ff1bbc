package discordtest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/weft-dev/weft/internal/fakekit"
)

// Gateway opcodes the fake speaks.
const (
	opDispatch       = 0
	opHeartbeat      = 1
	opIdentify       = 2
	opResume         = 6
	opInvalidSession = 9
	opHello          = 10
	opHeartbeatAck   = 11
)

// defaultHeartbeatInterval is long so the client's heartbeats never drive
// a test that does not ask for them (SetHeartbeatInterval).
const defaultHeartbeatInterval = 45 * time.Second

// resumePath is the path of READY's resume_gateway_url, apart from the
// connect URL's so tests see which one a client used.
const resumePath = "/ws/resume"

// Identify is what a client sent in IDENTIFY, on which URL path, and when
// the fake received it.
type Identify struct {
	Token   string
	Intents discordgo.Intent
	Shard   *[2]int
	Path    string
	At      time.Time
}

// Resume is a RESUME the fake received: on which URL path, whether it was
// accepted, and when.
type Resume struct {
	Path     string
	Accepted bool
	At       time.Time
}

// gatewayState is the fake's gateway bookkeeping, guarded by Server.mu
// (identifies, a Log, by its own lock).
type gatewayState struct {
	closed     bool
	conns      map[*gatewayConn]bool // value: live (READY or RESUMED sent)
	sessions   map[string]bool       // session id → still resumable
	seq        int64
	identifies fakekit.Log[Identify]
	resumes    []Resume
	// heartbeat is the interval HELLO names.
	heartbeat time.Duration
	// invalidIdentifies is how many IDENTIFYs to come get INVALID_SESSION.
	invalidIdentifies int
	invalidSessions   []time.Time
	clientCloses      []int
}

func newGatewayState() gatewayState {
	return gatewayState{conns: make(map[*gatewayConn]bool), sessions: make(map[string]bool), heartbeat: defaultHeartbeatInterval}
}

// gatewayConn is one client websocket.
type gatewayConn struct {
	ws   *websocket.Conn
	path string
	wmu  sync.Mutex // gorilla allows one writer at a time
	// Guarded by Server.mu:
	session string // the session it identified or resumed
	stalled bool   // heartbeats go unanswered (StallHeartbeats)
}

// send writes one gateway payload.
func (c *gatewayConn) send(op int, seq int64, typ string, data any) error {
	payload := struct {
		Op   int    `json:"op"`
		Seq  int64  `json:"s,omitempty"`
		Type string `json:"t,omitempty"`
		Data any    `json:"d"`
	}{op, seq, typ, data}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.ws.WriteJSON(payload)
}

// Identifies returns every IDENTIFY received so far.
func (s *Server) Identifies() []Identify { return s.gateway.identifies.All() }

// WaitIdentifies blocks until at least n IDENTIFYs arrived, and returns
// them, or until ctx ends.
func (s *Server) WaitIdentifies(ctx context.Context, n int) ([]Identify, error) {
	return s.gateway.identifies.Wait(ctx, func(ids []Identify) bool { return len(ids) >= n })
}

// Resumes returns how many RESUMEs were accepted.
func (s *Server) Resumes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.gateway.resumes {
		if r.Accepted {
			n++
		}
	}
	return n
}

// ResumeLog returns every RESUME received, accepted or not.
func (s *Server) ResumeLog() []Resume {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Resume(nil), s.gateway.resumes...)
}

// ResumePath is the URL path of READY's resume_gateway_url.
func (s *Server) ResumePath() string { return resumePath }

// SetHeartbeatInterval sets the interval HELLO names on later connections.
func (s *Server) SetHeartbeatInterval(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gateway.heartbeat = d
}

// InvalidateIdentifies answers the next n IDENTIFYs with INVALID_SESSION
// (d: false) instead of READY, as Discord does when identifying too fast.
func (s *Server) InvalidateIdentifies(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gateway.invalidIdentifies = n
}

// InvalidSessions returns when each INVALID_SESSION was sent.
func (s *Server) InvalidSessions() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.gateway.invalidSessions...)
}

// StallHeartbeats makes the connections open now zombies: their heartbeats
// go unanswered, while the connection stays up. Later connections answer.
func (s *Server) StallHeartbeats() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.gateway.conns {
		c.stalled = true
	}
}

// ClientCloses returns the close codes clients closed with. As on Discord,
// 1000 and 1001 end the session: it can no longer be resumed.
func (s *Server) ClientCloses() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.gateway.clientCloses...)
}

// clientClosed records a client's close frame.
func (s *Server) clientClosed(c *gatewayConn, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gateway.clientCloses = append(s.gateway.clientCloses, code)
	if (code == websocket.CloseNormalClosure || code == websocket.CloseGoingAway) && c.session != "" {
		s.gateway.sessions[c.session] = false
	}
}

// DropConnection closes every gateway connection abruptly, as a network
// failure would, so clients reconnect. With invalidate, their sessions can
// no longer be resumed: a RESUME gets INVALID_SESSION and the client must
// IDENTIFY again. Events dispatched after DropConnection returns and before
// a client is back are lost to it, as on Discord; they remain in the REST
// history, which is what backfill reads.
func (s *Server) DropConnection(invalidate bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.gateway.conns {
		s.gateway.conns[c] = false
		c.ws.Close()
	}
	if invalidate {
		for id := range s.gateway.sessions {
			s.gateway.sessions[id] = false
		}
	}
}

// dispatchLocked sends an event to every live connection.
func (s *Server) dispatchLocked(typ string, data any) {
	for c, live := range s.gateway.conns {
		if !live {
			continue
		}
		s.gateway.seq++
		if err := c.send(opDispatch, s.gateway.seq, typ, data); err != nil {
			s.logf("dispatch %s: %v", typ, err)
		}
	}
}

// handleWebsocket serves one gateway connection: HELLO, then IDENTIFY or
// RESUME, then heartbeats until the connection ends.
func (s *Server) handleWebsocket(w http.ResponseWriter, r *http.Request) {
	upgrader := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &gatewayConn{ws: ws, path: r.URL.Path}
	s.mu.Lock()
	if s.gateway.closed {
		s.mu.Unlock()
		ws.Close()
		return
	}
	s.gateway.conns[c] = false
	s.conns.Add(1)
	interval := s.gateway.heartbeat
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.gateway.conns, c)
		s.mu.Unlock()
		ws.Close()
		s.conns.Done()
	}()

	if err := c.send(opHello, 0, "", map[string]int64{"heartbeat_interval": interval.Milliseconds()}); err != nil {
		return
	}
	for {
		var in struct {
			Op   int             `json:"op"`
			Data json.RawMessage `json:"d"`
		}
		if err := ws.ReadJSON(&in); err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				s.clientClosed(c, ce.Code)
			}
			return
		}
		switch in.Op {
		case opHeartbeat:
			s.mu.Lock()
			stalled := c.stalled
			s.mu.Unlock()
			if !stalled {
				err = c.send(opHeartbeatAck, 0, "", nil)
			}
		case opIdentify:
			err = s.identify(c, in.Data)
		case opResume:
			err = s.resume(c, in.Data)
		}
		if err != nil {
			return
		}
	}
}

// identify starts a new session and answers READY.
func (s *Server) identify(c *gatewayConn, raw json.RawMessage) error {
	var id struct {
		Token   string           `json:"token"`
		Intents discordgo.Intent `json:"intents"`
		Shard   *[2]int          `json:"shard"`
	}
	if err := json.Unmarshal(raw, &id); err != nil {
		return err
	}
	if id.Token != "Bot "+Token {
		// Discord closes with 4004 Authentication failed.
		_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4004, "Authentication failed."), time.Time{})
		return errors.New("authentication failed")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gateway.identifies.Add(Identify{Token: id.Token, Intents: id.Intents, Shard: id.Shard, Path: c.path, At: time.Now()})
	if s.gateway.invalidIdentifies > 0 {
		s.gateway.invalidIdentifies--
		s.gateway.invalidSessions = append(s.gateway.invalidSessions, time.Now())
		return c.send(opInvalidSession, 0, "", false)
	}
	sessionID := s.newIDLocked()
	s.gateway.sessions[sessionID] = true
	c.session = sessionID
	s.gateway.seq++
	ready := map[string]any{
		"v":                  10,
		"session_id":         sessionID,
		"resume_gateway_url": "ws" + strings.TrimPrefix(s.http.URL, "http") + resumePath,
		"user":               &s.bot,
		"guilds":             []any{},
		"private_channels":   []any{},
		"application":        map[string]any{"id": s.app, "flags": 0},
	}
	if err := c.send(opDispatch, s.gateway.seq, "READY", ready); err != nil {
		return err
	}
	s.gateway.conns[c] = true
	return nil
}

// resume continues a session, or refuses it with INVALID_SESSION (d:false,
// not resumable) so the client identifies again on the same connection.
// Missed events are not replayed: the fake keeps no per-session backlog, so
// tests see what backfill must recover.
func (s *Server) resume(c *gatewayConn, raw json.RawMessage) error {
	var rs struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal(raw, &rs); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	accepted := s.gateway.sessions[rs.SessionID]
	s.gateway.resumes = append(s.gateway.resumes, Resume{Path: c.path, Accepted: accepted, At: time.Now()})
	if !accepted {
		s.gateway.invalidSessions = append(s.gateway.invalidSessions, time.Now())
		return c.send(opInvalidSession, 0, "", false)
	}
	c.session = rs.SessionID
	s.gateway.seq++
	if err := c.send(opDispatch, s.gateway.seq, "RESUMED", map[string]any{}); err != nil {
		return err
	}
	s.gateway.conns[c] = true
	return nil
}
