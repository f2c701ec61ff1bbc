package slacktest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weft-dev/weft/internal/fakekit"
)

// Delivery is one attempt to deliver an event, over HTTP or the socket.
type Delivery struct {
	EventID string
	Type    string // the inner event's type, with ".subtype" if any
	Attempt int    // 0 for the first, then Slack's retry number
	Via     string // "http" or "socket"
	Status  int    // HTTP status; 0 for a failed request or the socket
	Acked   bool
}

// events delivers events to the app as Slack does: signed POSTs with up to
// three retries, or envelopes on a Socket Mode connection.
type events struct {
	s      *Server
	client *http.Client

	mu         sync.Mutex
	url        string
	retries    []time.Duration
	next       int
	prefix     string            // this fake's own, so event ids are unique across fakes
	sent       map[string][]byte // event id → envelope, for redelivery
	types      map[string]string
	deliveries []Delivery
	closed     bool
	wg         sync.WaitGroup
	stop       chan struct{}
}

// defaultRetries are the waits before Slack's three retries (nearly at
// once, 1 min, 5 min), shortened for tests; SetRetryDelays changes them.
var defaultRetries = []time.Duration{50 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond}

// ackTimeout is how long Slack waits for an HTTP answer or a socket ack.
const ackTimeout = 3 * time.Second

func newEvents(s *Server) *events {
	// A fake's event ids differ from another's: a demo played again on
	// the same database must not be taken for Slack's redeliveries.
	var b [3]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return &events{s: s, prefix: strings.ToUpper(hex.EncodeToString(b[:])), client: &http.Client{Timeout: ackTimeout}, retries: defaultRetries,
		sent: map[string][]byte{}, types: map[string]string{}, stop: make(chan struct{})}
}

func (e *events) close() {
	e.mu.Lock()
	if !e.closed {
		e.closed = true
		close(e.stop)
	}
	e.mu.Unlock()
	e.wg.Wait()
}

// DeliverTo sends the Events API's deliveries to url (weft's
// /webhooks/slack); empty stops them.
func (s *Server) DeliverTo(url string) {
	s.events.mu.Lock()
	s.events.url = url
	s.events.mu.Unlock()
}

// SetRetryDelays sets the waits before each retry of a failed delivery;
// Slack's are about 0, 1 min and 5 min.
func (s *Server) SetRetryDelays(d ...time.Duration) {
	s.events.mu.Lock()
	s.events.retries = d
	s.events.mu.Unlock()
}

// Deliveries is every delivery attempt so far, in order.
func (s *Server) Deliveries() []Delivery {
	s.events.mu.Lock()
	defer s.events.mu.Unlock()
	return append([]Delivery(nil), s.events.deliveries...)
}

// Sign returns the headers Slack sends with body at ts: the request
// timestamp and the v0 signature with SigningSecret.
func Sign(body []byte, ts time.Time) http.Header {
	return SignWith(SigningSecret, body, ts)
}

// SignWith signs with another secret (a forgery, in tests).
func SignWith(secret string, body []byte, ts time.Time) http.Header {
	stamp := strconv.FormatInt(ts.Unix(), 10)
	return http.Header{
		"Content-Type":              {"application/json"},
		"X-Slack-Request-Timestamp": {stamp},
		"X-Slack-Signature":         {"v0=" + fakekit.HMACHex([]byte(secret), []byte("v0:"+stamp+":"), body)},
	}
}

// Envelope is an event_callback body around inner, with a new event id,
// from the workspace of inner's channel (TeamID's when it has none).
func (s *Server) Envelope(inner map[string]any) (eventID string, body []byte) {
	ch, _ := inner["channel"].(string)
	return s.teamEnvelope(s.channelTeam(ch), inner)
}

func (s *Server) teamEnvelope(team Team, inner map[string]any) (eventID string, body []byte) {
	s.events.mu.Lock()
	s.events.next++
	eventID = fmt.Sprintf("Ev%s%08d", s.events.prefix, s.events.next)
	s.events.mu.Unlock()
	body, _ = json.Marshal(map[string]any{
		"token": "deprecated-verification-token", "team_id": team.ID, "api_app_id": AppID,
		"event": inner, "type": "event_callback", "event_id": eventID, "event_time": time.Now().Unix(),
		"authorizations":        []map[string]any{{"team_id": team.ID, "user_id": team.BotUserID, "is_bot": true, "is_enterprise_install": false}},
		"is_ext_shared_channel": false, "event_context": "EC" + eventID,
	})
	return eventID, body
}

// Uninstall removes the app from a workspace as Slack does: every bot
// token of the workspace stops working (invalid_auth), then app_uninstalled
// is delivered. It returns the event's id.
func (s *Server) Uninstall(teamID string) string {
	s.mu.Lock()
	for tok, team := range s.tokens {
		if team == teamID {
			delete(s.tokens, tok)
		}
	}
	team, ok := s.teams[teamID]
	s.mu.Unlock()
	if !ok {
		team = plainTeam(teamID)
	}
	id, body := s.teamEnvelope(team, map[string]any{"type": "app_uninstalled", "event_ts": fmt.Sprint(time.Now().Unix())})
	s.dispatch(id, "app_uninstalled", body)
	return id
}

// Send delivers an inner event (a fresh envelope) as Slack would and
// returns its event id: over the socket if one is connected, else over
// HTTP to DeliverTo's URL, retried on failure.
func (s *Server) Send(inner map[string]any) string {
	id, body := s.Envelope(inner)
	typ, _ := inner["type"].(string)
	if st, ok := inner["subtype"].(string); ok {
		typ += "." + st
	}
	s.dispatch(id, typ, body)
	return id
}

// dispatch delivers an envelope for the first time.
func (s *Server) dispatch(id, typ string, body []byte) {
	e := s.events
	e.mu.Lock()
	e.sent[id], e.types[id] = body, typ
	e.mu.Unlock()
	e.dispatch(id, 0)
}

// Redeliver sends an event already delivered again, as Slack does after a
// timeout it saw: with the next retry number over HTTP, or as a new
// envelope of the same payload with a retry_attempt on the socket.
func (s *Server) Redeliver(eventID string) {
	s.events.dispatch(eventID, 1)
}

func (e *events) dispatch(id string, attempt int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	e.wg.Go(func() { e.deliver(id, attempt) })
}

// deliver sends one event until it is acknowledged or retries run out.
func (e *events) deliver(id string, attempt int) {
	e.mu.Lock()
	body, typ, url, retries := e.sent[id], e.types[id], e.url, e.retries
	e.mu.Unlock()
	for ; ; attempt++ {
		d := Delivery{EventID: id, Type: typ, Attempt: attempt}
		reason := ""
		if e.s.socket.connected() {
			d.Via = "socket"
			d.Acked = e.s.socket.send(id, body, attempt, e.stop)
		} else if url != "" {
			d.Via = "http"
			d.Status, reason = e.post(url, body, attempt)
			d.Acked = d.Status >= 200 && d.Status < 300
		}
		e.mu.Lock()
		e.deliveries = append(e.deliveries, d)
		e.mu.Unlock()
		if d.Acked || d.Via == "" || attempt >= len(retries) {
			return
		}
		if reason != "" {
			e.s.logf("delivery %s attempt %d failed: %s", id, attempt, reason)
		}
		select {
		case <-e.stop:
			return
		case <-time.After(retries[attempt]):
		}
	}
}

// post makes one signed HTTP delivery and returns its status, or 0 and
// Slack's retry reason.
func (e *events) post(url string, body []byte, attempt int) (int, string) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, "unknown_error"
	}
	req.Header = Sign(body, time.Now())
	if attempt > 0 {
		req.Header.Set("X-Slack-Retry-Num", strconv.Itoa(attempt))
		req.Header.Set("X-Slack-Retry-Reason", "http_error")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		if strings.Contains(err.Error(), "Timeout") {
			return 0, "http_timeout"
		}
		return 0, "connection_failed"
	}
	resp.Body.Close()
	return resp.StatusCode, ""
}

// The events a user's post makes, as Slack sends them with app_mention,
// message.channels and message.im subscribed.

func (s *Server) messageEvent(m Message) map[string]any {
	ev := s.render(m, true)
	ev["channel"] = m.Channel
	ev["event_ts"] = m.TS
	ev["channel_type"] = s.channelType(m.Channel)
	if m.User != "" {
		ev["team"] = s.channelTeam(m.Channel).ID
	}
	return ev
}

func (s *Server) channelType(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.channelLocked(id).typ
}

// messageSent delivers the events of a new message: a mention of the bot
// outside a DM arrives twice, as app_mention then message, with different
// event ids.
func (s *Server) messageSent(m Message) {
	if strings.Contains(m.Text, "<@"+s.channelTeam(m.Channel).BotUserID+">") && s.channelType(m.Channel) != "im" {
		ev := map[string]any{"type": "app_mention", "user": m.User, "text": m.Text, "ts": m.TS, "channel": m.Channel, "event_ts": m.TS}
		if m.ThreadTS != "" {
			ev["thread_ts"] = m.ThreadTS
		}
		if m.BotID != "" {
			ev["bot_id"] = m.BotID
		}
		if files, ok := s.render(m, false)["files"]; ok {
			ev["files"] = files
		}
		s.Send(ev)
	}
	s.Send(s.messageEvent(m))
}

func (s *Server) messageChanged(m Message, previous string) {
	now := s.nowTS()
	inner := s.render(m, false)
	prev := s.render(m, false)
	prev["text"] = previous
	delete(prev, "edited")
	s.Send(map[string]any{"type": "message", "subtype": "message_changed", "hidden": true, "channel": m.Channel,
		"channel_type": s.channelType(m.Channel), "ts": now, "event_ts": now, "message": inner, "previous_message": prev})
}

func (s *Server) messageDeleted(m Message) {
	now := s.nowTS()
	s.Send(map[string]any{"type": "message", "subtype": "message_deleted", "hidden": true, "channel": m.Channel,
		"channel_type": s.channelType(m.Channel), "ts": now, "event_ts": now, "deleted_ts": m.TS, "previous_message": s.render(m, false)})
}

func (s *Server) nowTS() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nextTSLocked()
}
