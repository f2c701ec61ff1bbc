package lineartest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/fakekit"
)

// Signer signs webhook deliveries the way Linear does: hex HMAC-SHA256 of
// the raw body with the webhook's signing secret.
type Signer struct {
	Secret []byte
}

// Sign returns the Linear-Signature header for body.
func (s Signer) Sign(body []byte) string {
	return fakekit.HMACHex(s.Secret, body)
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
	return s.deliver(eventType, payload, time.Now())
}

// deliver is Deliver with the Linear-Timestamp header set to sent, which
// for a session event is its signed webhookTimestamp.
func (s Signer) deliver(eventType string, payload any, sent time.Time) Delivery {
	body, err := json.Marshal(payload)
	if err != nil {
		panic("lineartest: marshal payload: " + err.Error())
	}
	return Delivery{Body: body, Header: http.Header{
		"Content-Type":     {"application/json; charset=utf-8"},
		"User-Agent":       {"Linear-Webhook"},
		"Linear-Delivery":  {uuid.NewString()},
		"Linear-Event":     {eventType},
		"Linear-Timestamp": {strconv.FormatInt(sent.UnixMilli(), 10)},
		"Linear-Signature": {s.Sign(body)},
	}}
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
	// webhookTimestamp and the Linear-Timestamp header (set it in the past
	// to make a stale delivery).
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

// webhookID names the fake's webhook configuration, the same in every body.
const webhookID = "0b5e9c3a-8f1d-4c2e-9a7b-00000000beef"

// The body of an AgentSessionEvent, field names from Linear's
// AgentSessionEventWebhookPayload. Structs rather than maps: a benchmark
// builds thousands of these a second, and encoding/json sorts map keys.
type (
	sessionEvent struct {
		Type             string       `json:"type"`
		Action           string       `json:"action"`
		CreatedAt        string       `json:"createdAt"`
		OrganizationID   string       `json:"organizationId"`
		OAuthClientID    string       `json:"oauthClientId"`
		AppUserID        string       `json:"appUserId"`
		WebhookID        string       `json:"webhookId"`
		WebhookTimestamp int64        `json:"webhookTimestamp"`
		AgentSession     agentSession `json:"agentSession"`
		// Created events only; a nil PreviousComments is left out, an
		// empty one sent as [].
		PreviousComments *[]struct{} `json:"previousComments,omitempty"`
		Guidance         []guidance  `json:"guidance,omitempty"`
		PromptContext    string      `json:"promptContext,omitempty"`
		// Prompted events only.
		AgentActivity *promptActivity `json:"agentActivity,omitempty"`
	}
	agentSession struct {
		ID             string       `json:"id"`
		Status         string       `json:"status"`
		Type           string       `json:"type"`
		AppUserID      string       `json:"appUserId"`
		OrganizationID string       `json:"organizationId"`
		CreatedAt      string       `json:"createdAt"`
		UpdatedAt      string       `json:"updatedAt"`
		URL            string       `json:"url"`
		IssueID        string       `json:"issueId"`
		Issue          webhookIssue `json:"issue"`
		CommentID      string       `json:"commentId"`
		Comment        struct {
			ID      string `json:"id"`
			Body    string `json:"body"`
			IssueID string `json:"issueId"`
			UserID  string `json:"userId"`
		} `json:"comment"`
		// Left out for sessions an automation started.
		CreatorID string       `json:"creatorId,omitempty"`
		Creator   *webhookUser `json:"creator,omitempty"`
	}
	webhookIssue struct {
		ID          string      `json:"id"`
		Identifier  string      `json:"identifier"`
		Title       string      `json:"title"`
		Description string      `json:"description"`
		URL         string      `json:"url"`
		TeamID      string      `json:"teamId"`
		Team        webhookTeam `json:"team"`
	}
	webhookTeam struct {
		ID          string `json:"id"`
		Key         string `json:"key"`
		Name        string `json:"name"`
		DisplayName string `json:"displayName,omitempty"`
	}
	webhookUser struct {
		ID    string `json:"id"`
		Name  string `json:"name"`
		Email string `json:"email"`
		URL   string `json:"url"`
	}
	guidance struct {
		Body   string `json:"body"`
		Origin struct {
			Type string      `json:"type"`
			Team webhookTeam `json:"team"`
		} `json:"origin"`
	}
	promptActivity struct {
		ID             string `json:"id"`
		AgentSessionID string `json:"agentSessionId"`
		Content        struct {
			Type string `json:"type"`
			Body string `json:"body"`
		} `json:"content"`
		// Signal is null unless the prompt is a stop request.
		Signal          *string     `json:"signal"`
		SourceCommentID string      `json:"sourceCommentId"`
		CreatedAt       string      `json:"createdAt"`
		UpdatedAt       string      `json:"updatedAt"`
		UserID          string      `json:"userId"`
		User            webhookUser `json:"user"`
	}
)

// envelope builds the body shared by created and prompted events.
func (o SessionOpts) envelope(action string) *sessionEvent {
	created := o.CreatedAt.UTC().Format(time.RFC3339Nano)
	url := "https://linear.app/test/issue/" + o.IssueIdentifier
	e := &sessionEvent{
		Type: "AgentSessionEvent", Action: action, CreatedAt: created,
		OrganizationID: o.OrganizationID, OAuthClientID: ClientID, AppUserID: o.AppUserID,
		WebhookID: webhookID, WebhookTimestamp: o.Timestamp.UnixMilli(),
		AgentSession: agentSession{
			ID: o.SessionID, Status: "pending", Type: "commentThread",
			AppUserID: o.AppUserID, OrganizationID: o.OrganizationID,
			CreatedAt: created, UpdatedAt: created, URL: url, IssueID: o.IssueID,
			Issue: webhookIssue{
				ID: o.IssueID, Identifier: o.IssueIdentifier, Title: o.IssueTitle, Description: o.IssueDescription,
				URL: url, TeamID: o.TeamID, Team: webhookTeam{ID: o.TeamID, Key: "ENG", Name: "Engineering"},
			},
			CommentID: o.CommentID,
		},
	}
	c := &e.AgentSession.Comment
	c.ID, c.Body, c.IssueID, c.UserID = o.CommentID, o.CommentBody, o.IssueID, o.CreatorID
	if !o.Automation {
		e.AgentSession.CreatorID = o.CreatorID
		e.AgentSession.Creator = o.user()
	}
	return e
}

func (o SessionOpts) user() *webhookUser {
	return &webhookUser{ID: o.CreatorID, Name: o.CreatorName, Email: "ada@example.com", URL: "https://linear.app/test/profiles/ada"}
}

// Created is a signed "created" event: the agent was mentioned or
// delegated. o is returned with its ids filled in, for follow-ups, and its
// times zeroed so that those are stamped when they are built.
func (s Signer) Created(o SessionOpts) (Delivery, SessionOpts) {
	o.defaults()
	e := o.envelope("created")
	e.PreviousComments = &[]struct{}{}
	g := guidance{Body: "Always follow coding standards"}
	g.Origin.Type = "Team"
	g.Origin.Team = webhookTeam{ID: o.TeamID, Key: "ENG", Name: "Engineering", DisplayName: "Engineering"}
	e.Guidance = []guidance{g}
	e.PromptContext = o.PromptContext
	d := s.deliver("AgentSessionEvent", e, o.Timestamp)
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
	stop := "stop"
	return s.prompted(o, activityID, "Stop", &stop)
}

func (s Signer) prompted(o SessionOpts, activityID, body string, signal *string) Delivery {
	o.defaults()
	e := o.envelope("prompted")
	at := o.Timestamp.UTC().Format(time.RFC3339Nano)
	a := &promptActivity{ID: activityID, AgentSessionID: o.SessionID, Signal: signal, SourceCommentID: uuid.NewString(),
		CreatedAt: at, UpdatedAt: at, UserID: o.CreatorID, User: *o.user()}
	a.Content.Type, a.Content.Body = "prompt", body
	e.AgentActivity = a
	return s.deliver("AgentSessionEvent", e, o.Timestamp)
}

// Revoked is a signed OAuthApp "revoked" event for the workspace.
func (s Signer) Revoked(organizationID string, createdAt time.Time) Delivery {
	return s.Deliver("OAuthApp", map[string]any{
		"type": "OAuthApp", "action": "revoked", "createdAt": createdAt.UTC().Format(time.RFC3339Nano),
		"organizationId": organizationID, "oauthClientId": ClientID,
		"webhookId": webhookID, "webhookTimestamp": time.Now().UnixMilli(),
	})
}
