package lineartest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"time"

	"github.com/google/uuid"
)

// Signer signs webhook deliveries the way Linear does: hex HMAC-SHA256 of
// the raw body with the webhook's signing secret.
type Signer struct {
	Secret []byte
}

// Sign returns the Linear-Signature header for body.
func (s Signer) Sign(body []byte) string {
	m := hmac.New(sha256.New, s.Secret)
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Delivery is a signed webhook request.
type Delivery struct {
	Body   []byte
	Header http.Header
}

// Request returns the delivery as an incoming request to target, for
// calling a webhook handler's ServeHTTP.
func (d Delivery) Request(target string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, target, bytes.NewReader(d.Body))
	for k, v := range d.Header {
		r.Header[k] = v
	}
	return r
}

// Deliver signs payload (marshalled to JSON) as a delivery of eventType,
// with the headers Linear sends: a fresh Linear-Delivery id each time, and
// the unsigned Linear-Timestamp header next to the signed body timestamp.
func (s Signer) Deliver(eventType string, payload any) Delivery {
	body, err := json.Marshal(payload)
	if err != nil {
		panic("lineartest: marshal payload: " + err.Error())
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("User-Agent", "Linear-Webhook")
	h.Set("Linear-Delivery", uuid.NewString())
	h.Set("Linear-Event", eventType)
	h.Set("Linear-Timestamp", strconv.FormatInt(time.Now().UnixMilli(), 10))
	h.Set("Linear-Signature", s.Sign(body))
	return Delivery{Body: body, Header: h}
}

// SessionOpts describes the session of an AgentSessionEvent. Empty fields
// get defaults: the Server's OrganizationID and AppUserID, random ids, an
// issue ENG-1 on team ENG, a human creator, and the current time.
type SessionOpts struct {
	SessionID, OrganizationID, AppUserID                           string
	IssueID, IssueIdentifier, IssueTitle, IssueDescription, TeamID string
	CommentID, CommentBody                                         string
	CreatorID, CreatorName                                         string
	// Automation leaves the creator out, as for sessions started by an
	// automation or another agent.
	Automation    bool
	PromptContext string
	// CreatedAt is the event's creation time; Timestamp the signed
	// webhookTimestamp (set it in the past to make a stale delivery).
	CreatedAt, Timestamp time.Time
}

func (o *SessionOpts) defaults() {
	def := func(v *string, d string) {
		if *v == "" {
			*v = d
		}
	}
	def(&o.SessionID, uuid.NewString())
	def(&o.OrganizationID, OrganizationID)
	def(&o.AppUserID, AppUserID)
	def(&o.IssueID, uuid.NewString())
	def(&o.IssueIdentifier, "ENG-1")
	def(&o.IssueTitle, "Fix the login redirect")
	def(&o.TeamID, uuid.NewString())
	def(&o.CommentID, uuid.NewString())
	def(&o.CommentBody, "This thread is for an agent session with weft.")
	def(&o.CreatorID, uuid.NewString())
	def(&o.CreatorName, "Ada Lovelace")
	if o.CreatedAt.IsZero() {
		o.CreatedAt = time.Now()
	}
	if o.Timestamp.IsZero() {
		o.Timestamp = time.Now()
	}
}

// envelope builds the body shared by created and prompted events (field
// names from Linear's AgentSessionEventWebhookPayload).
func (o SessionOpts) envelope(action string) map[string]any {
	session := map[string]any{
		"id": o.SessionID, "status": "pending", "type": "commentThread",
		"appUserId": o.AppUserID, "organizationId": o.OrganizationID,
		"createdAt": o.CreatedAt.UTC().Format(time.RFC3339Nano), "updatedAt": o.CreatedAt.UTC().Format(time.RFC3339Nano),
		"url":     "https://linear.app/test/issue/" + o.IssueIdentifier,
		"issueId": o.IssueID,
		"issue": map[string]any{
			"id": o.IssueID, "identifier": o.IssueIdentifier, "title": o.IssueTitle, "description": o.IssueDescription,
			"url": "https://linear.app/test/issue/" + o.IssueIdentifier, "teamId": o.TeamID,
			"team": map[string]any{"id": o.TeamID, "key": "ENG", "name": "Engineering"},
		},
		"commentId": o.CommentID,
		"comment":   map[string]any{"id": o.CommentID, "body": o.CommentBody, "issueId": o.IssueID, "userId": o.CreatorID},
	}
	if !o.Automation {
		session["creatorId"] = o.CreatorID
		session["creator"] = o.user()
	}
	return map[string]any{
		"type": "AgentSessionEvent", "action": action,
		"createdAt":      o.CreatedAt.UTC().Format(time.RFC3339Nano),
		"organizationId": o.OrganizationID, "oauthClientId": ClientID, "appUserId": o.AppUserID,
		"webhookId":        "0b5e9c3a-8f1d-4c2e-9a7b-00000000beef",
		"webhookTimestamp": o.Timestamp.UnixMilli(),
		"agentSession":     session,
	}
}

func (o SessionOpts) user() map[string]any {
	return map[string]any{"id": o.CreatorID, "name": o.CreatorName, "email": "ada@example.com",
		"url": "https://linear.app/test/profiles/ada"}
}

// Created is a signed "created" event: the agent was mentioned or
// delegated. o is returned with its ids filled in, for follow-ups, and its
// times zeroed so that those are stamped when they are built.
func (s Signer) Created(o SessionOpts) (Delivery, SessionOpts) {
	o.defaults()
	p := o.envelope("created")
	p["previousComments"] = []any{}
	p["guidance"] = []any{map[string]any{
		"body":   "Always follow coding standards",
		"origin": map[string]any{"type": "Team", "team": map[string]any{"id": o.TeamID, "key": "ENG", "name": "Engineering", "displayName": "Engineering"}},
	}}
	if o.PromptContext != "" {
		p["promptContext"] = o.PromptContext
	}
	d := s.Deliver("AgentSessionEvent", p)
	o.CreatedAt, o.Timestamp = time.Time{}, time.Time{}
	return d, o
}

// Prompted is a signed "prompted" event: the user wrote body into the
// session, as the prompt activity activityID.
func (s Signer) Prompted(o SessionOpts, activityID, body string) Delivery {
	return s.prompted(o, activityID, body, nil)
}

// Stop is a signed stop request: a prompted event with signal "stop".
func (s Signer) Stop(o SessionOpts, activityID string) Delivery {
	return s.prompted(o, activityID, "Stop", "stop")
}

func (s Signer) prompted(o SessionOpts, activityID, body string, signal any) Delivery {
	o.defaults()
	p := o.envelope("prompted")
	p["agentActivity"] = map[string]any{
		"id": activityID, "agentSessionId": o.SessionID,
		"content": map[string]any{"type": "prompt", "body": body},
		"signal":  signal, "sourceCommentId": uuid.NewString(),
		"createdAt": o.Timestamp.UTC().Format(time.RFC3339Nano), "updatedAt": o.Timestamp.UTC().Format(time.RFC3339Nano),
		"userId": o.CreatorID, "user": o.user(),
	}
	return s.Deliver("AgentSessionEvent", p)
}

// Revoked is a signed OAuthApp "revoked" event for the workspace.
func (s Signer) Revoked(organizationID string, createdAt time.Time) Delivery {
	return s.Deliver("OAuthApp", map[string]any{
		"type": "OAuthApp", "action": "revoked", "createdAt": createdAt.UTC().Format(time.RFC3339Nano),
		"organizationId": organizationID, "oauthClientId": ClientID,
		"webhookId": "0b5e9c3a-8f1d-4c2e-9a7b-00000000beef", "webhookTimestamp": time.Now().UnixMilli(),
	})
}
