package discordtest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
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

// heartbeatInterval is long so the client's heartbeats never drive a test.
const heartbeatInterval = 45_000

// Identify is what a client sent in IDENTIFY.
type Identify struct {
	Token   string
	Intents discordgo.Intent
	Shard   *[2]int
}

// gatewayState is the fake's gateway bookkeeping, guarded by Server.mu
// (identifies, a Log, by its own lock).
type gatewayState struct {
	closed     bool
	conns      map[*gatewayConn]bool // value: live (READY or RESUMED sent)
	sessions   map[string]bool       // session id → still resumable
	seq        int64
	identifies fakekit.Log[Identify]
	resumes    int
}

func newGatewayState() gatewayState {
	return gatewayState{conns: make(map[*gatewayConn]bool), sessions: make(map[string]bool)}
}

// gatewayConn is one client websocket.
type gatewayConn struct {
	ws  *websocket.Conn
	wmu sync.Mutex // gorilla allows one writer at a time
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
	return s.gateway.resumes
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
	c := &gatewayConn{ws: ws}
	s.mu.Lock()
	if s.gateway.closed {
		s.mu.Unlock()
		ws.Close()
		return
	}
	s.gateway.conns[c] = false
	s.conns.Add(1)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.gateway.conns, c)
		s.mu.Unlock()
		ws.Close()
		s.conns.Done()
	}()

	if err := c.send(opHello, 0, "", map[string]int{"heartbeat_interval": heartbeatInterval}); err != nil {
		return
	}
	for {
		var in struct {
			Op   int             `json:"op"`
			Data json.RawMessage `json:"d"`
		}
		if err := ws.ReadJSON(&in); err != nil {
			return
		}
		switch in.Op {
		case opHeartbeat:
			err = c.send(opHeartbeatAck, 0, "", nil)
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
	sessionID := s.newIDLocked()
	s.gateway.sessions[sessionID] = true
	s.gateway.identifies.Add(Identify(id))
	s.gateway.seq++
	ready := map[string]any{
		"v":                  10,
		"session_id":         sessionID,
		"resume_gateway_url": s.GatewayURL(),
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
	if !s.gateway.sessions[rs.SessionID] {
		return c.send(opInvalidSession, 0, "", false)
	}
	s.gateway.resumes++
	s.gateway.seq++
	if err := c.send(opDispatch, s.gateway.seq, "RESUMED", map[string]any{}); err != nil {
		return err
	}
	s.gateway.conns[c] = true
	return nil
}
