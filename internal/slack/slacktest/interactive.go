package slacktest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Reply is what weft answered a slash command or an interaction with:
// over HTTP its status and body, over the socket whether it acknowledged
// the envelope and the ack's payload.
type Reply struct {
	Via    string // "http" or "socket"
	Status int
	Acked  bool
	Body   json.RawMessage
}

// interactURLs are where slash commands and interactivity go over HTTP.
type interactURLs struct {
	commands, interactions string
}

// InteractTo sends slash commands to commandsURL (weft's
// /webhooks/slack/commands) and interactivity payloads to interactionsURL
// (/webhooks/slack/interactions) when no socket is connected.
func (s *Server) InteractTo(commandsURL, interactionsURL string) {
	s.mu.Lock()
	s.interact = interactURLs{commands: commandsURL, interactions: interactionsURL}
	s.mu.Unlock()
}

// setBlocksLocked keeps a posted message's blocks: invalid JSON is kept
// out, as Slack refuses invalid_blocks.
func (s *Server) setBlocksLocked(m Message, raw string) Message {
	if !json.Valid([]byte(raw)) {
		return m
	}
	if p := s.findLocked(m.Channel, m.TS); p != nil {
		p.Blocks = json.RawMessage(raw)
		m.Blocks = p.Blocks
	}
	return m
}

// Command is u typing the slash command /weft with text in a channel:
// over the socket if one is connected (a slash_commands envelope), else a
// signed form POST to InteractTo's commands URL. It waits for the answer.
func (s *Server) Command(u User, channelID, text string) (Reply, error) {
	team := s.channelTeam(channelID)
	fields := map[string]string{"token": "deprecated-verification-token", "team_id": team.ID, "team_domain": team.Name,
		"channel_id": channelID, "channel_name": channelID, "user_id": u.ID, "user_name": u.Name, "command": "/weft",
		"text": text, "api_app_id": AppID, "is_enterprise_install": "false",
		"response_url": s.http.URL + "/commands/" + channelID, "trigger_id": "trigger-" + s.nowTS()}
	if s.socket.connected() {
		payload, _ := json.Marshal(fields)
		return s.socket.envelope("slash_commands", payload, 0), nil
	}
	form := url.Values{}
	for k, v := range fields {
		form.Set(k, v)
	}
	s.mu.Lock()
	target := s.interact.commands
	s.mu.Unlock()
	return s.postForm(target, []byte(form.Encode()))
}

// Interaction is an interactivity payload, as Slack sends it.
type Interaction map[string]any

// BlockAction is u clicking the element actionID of message m (as weft
// posted it) with value: a block_actions payload, with a fresh action_ts.
// The element must be in m's blocks, found with its block_id, as Slack
// only sends actions of elements it showed.
func (s *Server) BlockAction(u User, m Message, actionID, value string) (Interaction, error) {
	blockID, typ, ok := findElement(m.Blocks, actionID)
	if !ok {
		return nil, fmt.Errorf("slacktest: no element %q in the message's blocks", actionID)
	}
	team := s.channelTeam(m.Channel)
	container := map[string]any{"type": "message", "message_ts": m.TS, "channel_id": m.Channel, "is_ephemeral": false}
	if m.ThreadTS != "" {
		container["thread_ts"] = m.ThreadTS
	}
	return Interaction{
		"type": "block_actions", "api_app_id": AppID, "token": "deprecated-verification-token",
		"team":       map[string]any{"id": team.ID, "domain": team.Name},
		"user":       map[string]any{"id": u.ID, "username": u.Name, "name": u.Name, "team_id": team.ID},
		"channel":    map[string]any{"id": m.Channel, "name": m.Channel},
		"container":  container,
		"message":    s.render(m, false),
		"trigger_id": "trigger-" + s.nowTS(), "response_url": s.http.URL + "/actions/" + m.Channel,
		"actions": []map[string]any{{"action_id": actionID, "block_id": blockID, "type": typ, "value": value,
			"action_ts": s.nowTS()}},
	}, nil
}

// FeedbackClick is u clicking one of the feedback buttons under m: the
// positive one or the negative one, found in m's context_actions block
// with the value it carries.
func (s *Server) FeedbackClick(u User, m Message, positive bool) (Interaction, error) {
	var blocks []struct {
		Type     string `json:"type"`
		Elements []struct {
			Type     string `json:"type"`
			ActionID string `json:"action_id"`
			Positive struct {
				Value string `json:"value"`
			} `json:"positive_button"`
			Negative struct {
				Value string `json:"value"`
			} `json:"negative_button"`
		} `json:"elements"`
	}
	if err := json.Unmarshal(m.Blocks, &blocks); err != nil {
		return nil, fmt.Errorf("slacktest: message blocks: %w", err)
	}
	for _, b := range blocks {
		if b.Type != "context_actions" {
			continue
		}
		for _, e := range b.Elements {
			if e.Type != "feedback_buttons" {
				continue
			}
			value := e.Negative.Value
			if positive {
				value = e.Positive.Value
			}
			return s.BlockAction(u, m, e.ActionID, value)
		}
	}
	return nil, fmt.Errorf("slacktest: no feedback_buttons in a context_actions block of the message")
}

// findElement is the block_id and type of the element actionID among
// blocks.
func findElement(raw json.RawMessage, actionID string) (blockID, typ string, ok bool) {
	var blocks []struct {
		BlockID  string `json:"block_id"`
		Elements []struct {
			Type     string `json:"type"`
			ActionID string `json:"action_id"`
		} `json:"elements"`
		Accessory *struct {
			Type     string `json:"type"`
			ActionID string `json:"action_id"`
		} `json:"accessory"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return "", "", false
	}
	for _, b := range blocks {
		for _, e := range b.Elements {
			if e.ActionID == actionID {
				return b.BlockID, e.Type, true
			}
		}
		if b.Accessory != nil && b.Accessory.ActionID == actionID {
			return b.BlockID, b.Accessory.Type, true
		}
	}
	return "", "", false
}

// Interact delivers an interactivity payload as Slack does: over the
// socket if one is connected (an interactive envelope; attempt > 0 marks
// a redelivery), else a signed form POST (payload=JSON) to InteractTo's
// interactions URL. Sending the same payload again is Slack delivering
// the click again.
func (s *Server) Interact(p Interaction, attempt int) (Reply, error) {
	payload, err := json.Marshal(p)
	if err != nil {
		return Reply{}, err
	}
	if s.socket.connected() {
		return s.socket.envelope("interactive", payload, attempt), nil
	}
	s.mu.Lock()
	target := s.interact.interactions
	s.mu.Unlock()
	return s.postForm(target, []byte(url.Values{"payload": {string(payload)}}.Encode()))
}

// postForm makes one signed form POST and reads the answer.
func (s *Server) postForm(target string, body []byte) (Reply, error) {
	if target == "" {
		return Reply{}, fmt.Errorf("slacktest: no URL to deliver to (InteractTo)")
	}
	req, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return Reply{}, err
	}
	req.Header = Sign(body, time.Now())
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := s.events.client.Do(req)
	if err != nil {
		return Reply{Via: "http"}, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return Reply{Via: "http", Status: resp.StatusCode, Acked: resp.StatusCode/100 == 2, Body: b}, nil
}

// envelope writes one envelope of typ to a connection and waits for its
// ack (within ackWait) and the payload it carries.
func (st *socketState) envelope(typ string, payload []byte, attempt int) Reply {
	r := Reply{Via: "socket"}
	st.mu.Lock()
	var conn = st.anyConnLocked()
	st.next++
	envID := "env-" + typ + "-" + itoa(st.next)
	ch := make(chan struct{})
	st.acks[envID] = ch
	wmu := st.conns[conn]
	wait := st.ackWait
	st.mu.Unlock()
	if conn == nil {
		return r
	}
	reason := ""
	if attempt > 0 {
		reason = "timeout"
	}
	wmu.Lock()
	err := conn.WriteJSON(map[string]any{"envelope_id": envID, "type": typ, "payload": json.RawMessage(payload),
		"accepts_response_payload": typ == "slash_commands", "retry_attempt": attempt, "retry_reason": reason})
	wmu.Unlock()
	if err == nil {
		select {
		case <-ch:
			r.Acked = true
		case <-time.After(wait):
		}
	}
	st.mu.Lock()
	delete(st.acks, envID)
	r.Body = st.ackPayloads[envID]
	delete(st.ackPayloads, envID)
	st.mu.Unlock()
	return r
}

// SocketConnected reports whether weft holds a Socket Mode connection.
func (s *Server) SocketConnected() bool { return s.socket.connected() }

// Ephemeral is a message chat.postEphemeral showed one person.
type Ephemeral struct {
	Channel, ThreadTS, User, Text string
}

// Ephemerals are the messages chat.postEphemeral showed, oldest first.
func (s *Server) Ephemerals() []Ephemeral {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Ephemeral(nil), s.ephemerals...)
}

// postEphemeral is chat.postEphemeral: a message one person in a channel
// sees, never stored among the channel's messages.
func (s *Server) postEphemeral(team Team, form url.Values, w http.ResponseWriter) {
	chID, user, text := form.Get("channel"), form.Get("user"), form.Get("text")
	if strings.TrimSpace(text) == "" && form.Get("blocks") == "" {
		writeJSON(w, http.StatusOK, errBody("no_text"))
		return
	}
	if user == "" {
		writeJSON(w, http.StatusOK, errBody("user_not_in_channel"))
		return
	}
	s.mu.Lock()
	if !s.visibleLocked(team, chID) {
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, errBody("channel_not_found"))
		return
	}
	ts := s.nextTSLocked()
	s.ephemerals = append(s.ephemerals, Ephemeral{Channel: chID, ThreadTS: form.Get("thread_ts"), User: user, Text: text})
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "message_ts": ts})
}
