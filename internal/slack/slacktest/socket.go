package slacktest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// socketState is the Socket Mode side: connections opened through
// apps.connections.open, envelopes out, acks in.
type socketState struct {
	mu      sync.Mutex
	enabled bool
	conns   map[*websocket.Conn]*sync.Mutex // each with its write lock
	acks    map[string]chan struct{}        // envelope id → closed on ack
	// ackPayloads are the payloads acks carried, by envelope id.
	ackPayloads map[string]json.RawMessage
	next        int
	ackWait     time.Duration
}

func newSocketState() *socketState {
	return &socketState{conns: map[*websocket.Conn]*sync.Mutex{}, acks: map[string]chan struct{}{}, ackPayloads: map[string]json.RawMessage{},
		ackWait: ackTimeout}
}

// EnableSocketMode turns Socket Mode on: apps.connections.open hands out
// websocket URLs, and events go to a connected socket instead of HTTP.
func (s *Server) EnableSocketMode() {
	s.socket.mu.Lock()
	s.socket.enabled = true
	s.socket.mu.Unlock()
}

// DisconnectSockets asks every connection to reconnect (type disconnect,
// reason refresh_requested), as Slack does every few hours.
func (s *Server) DisconnectSockets() {
	s.socket.mu.Lock()
	defer s.socket.mu.Unlock()
	for c, wmu := range s.socket.conns {
		wmu.Lock()
		_ = c.WriteJSON(map[string]any{"type": "disconnect", "reason": "refresh_requested", "debug_info": map[string]any{"host": "slacktest"}})
		wmu.Unlock()
	}
}

func (s *Server) connectionsOpen(_ Team, _ url.Values, w http.ResponseWriter) {
	s.socket.mu.Lock()
	on := s.socket.enabled
	s.socket.mu.Unlock()
	if !on {
		writeJSON(w, http.StatusOK, errBody("not_allowed_token_type"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "url": "ws" + s.http.URL[len("http"):] + "/socket"})
}

// upgrader accepts slack-go's dialer, which sends Origin
// https://api.slack.com (gorilla's default check would refuse it).
var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	st := s.socket
	wmu := &sync.Mutex{}
	st.mu.Lock()
	st.conns[conn] = wmu
	st.mu.Unlock()
	s.changed.Notify()
	defer func() {
		st.mu.Lock()
		delete(st.conns, conn)
		st.mu.Unlock()
		s.changed.Notify()
		conn.Close()
	}()
	wmu.Lock()
	err = conn.WriteJSON(map[string]any{"type": "hello", "num_connections": 1,
		"connection_info": map[string]any{"app_id": AppID}, "debug_info": map[string]any{"host": "slacktest", "approximate_connection_time": 18060}})
	wmu.Unlock()
	if err != nil {
		return
	}
	for {
		var ack struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if err := conn.ReadJSON(&ack); err != nil {
			return
		}
		st.mu.Lock()
		if ch, ok := st.acks[ack.EnvelopeID]; ok {
			if len(ack.Payload) > 0 && string(ack.Payload) != "null" {
				st.ackPayloads[ack.EnvelopeID] = ack.Payload // envelope reads and drops it
			}
			close(ch)
			delete(st.acks, ack.EnvelopeID)
		}
		st.mu.Unlock()
	}
}

func (st *socketState) connected() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.enabled && len(st.conns) > 0
}

// send writes one envelope to a connection and waits for its ack.
func (st *socketState) send(eventID string, payload []byte, attempt int, stop chan struct{}) bool {
	st.mu.Lock()
	var conn *websocket.Conn
	var wmu *sync.Mutex
	for c, m := range st.conns {
		conn, wmu = c, m
		break
	}
	st.next++
	envID := "env-" + eventID + "-" + itoa(st.next)
	ch := make(chan struct{})
	st.acks[envID] = ch
	wait := st.ackWait
	st.mu.Unlock()
	if conn == nil {
		return false
	}
	reason := ""
	if attempt > 0 {
		reason = "timeout"
	}
	wmu.Lock()
	err := conn.WriteJSON(map[string]any{"envelope_id": envID, "type": "events_api", "payload": json.RawMessage(payload),
		"accepts_response_payload": false, "retry_attempt": attempt, "retry_reason": reason})
	wmu.Unlock()
	if err != nil {
		return false
	}
	select {
	case <-ch:
		return true
	case <-stop:
	case <-time.After(wait):
	}
	st.mu.Lock()
	delete(st.acks, envID)
	st.mu.Unlock()
	return false
}

func (st *socketState) close() {
	st.mu.Lock()
	for c := range st.conns {
		c.Close()
	}
	st.mu.Unlock()
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// anyConnLocked is one open connection, nil without any.
func (st *socketState) anyConnLocked() *websocket.Conn {
	for c := range st.conns {
		return c
	}
	return nil
}
