package linear

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Errors of Verify and Parse. The webhook handler answers all of them with
// a 4xx: Linear retries a failed delivery, and none of these gets better by
// retrying.
var (
	// ErrBadSignature: the Linear-Signature header does not match the body.
	ErrBadSignature = errors.New("linear: webhook signature mismatch")
	// ErrStale: the signed webhookTimestamp is more than a minute away from
	// now, so the delivery may be a replay.
	ErrStale = errors.New("linear: webhook timestamp outside the allowed window")
	// ErrMalformed: the body is not a webhook payload this package can read.
	ErrMalformed = errors.New("linear: malformed webhook payload")
)

// WebhookTolerance is how far a delivery's webhookTimestamp may be from now,
// either way: Linear's documented one minute.
const WebhookTolerance = time.Minute

// Headers Linear sets on a webhook delivery.
const (
	HeaderSignature = "Linear-Signature"
	HeaderDelivery  = "Linear-Delivery"
	HeaderEvent     = "Linear-Event"
)

// Verify authenticates a webhook delivery: body must be the raw request
// body, signatureHex the Linear-Signature header and secret the webhook's
// signing secret. The HMAC is checked (in constant time) before the body is
// parsed at all. Freshness comes from the body's webhookTimestamp, which
// the signature covers, never from the unsigned Linear-Timestamp header,
// which an attacker replaying a captured body could set to anything.
func Verify(secret, body []byte, signatureHex string, now time.Time) error {
	if err := checkSignature(secret, body, signatureHex); err != nil {
		return err
	}
	var env struct {
		WebhookTimestamp *float64 `json:"webhookTimestamp"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return checkFresh(env.WebhookTimestamp, now)
}

// VerifyParse is Verify then Parse, decoding the body once rather than
// twice: what a webhook handler needs.
func VerifyParse(secret, body []byte, signatureHex string, now time.Time) (Event, error) {
	if err := checkSignature(secret, body, signatureHex); err != nil {
		return nil, err
	}
	p, err := decode(body)
	if err != nil {
		return nil, err
	}
	if err := checkFresh(p.WebhookTimestamp, now); err != nil {
		return nil, err
	}
	return p.event(body)
}

func checkSignature(secret, body []byte, signatureHex string) error {
	if len(secret) == 0 {
		return fmt.Errorf("%w: no signing secret configured", ErrBadSignature)
	}
	got, err := hex.DecodeString(strings.TrimSpace(signatureHex))
	if err != nil || len(got) != sha256.Size {
		return ErrBadSignature
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	if !hmac.Equal(mac.Sum(nil), got) {
		return ErrBadSignature
	}
	return nil
}

// checkFresh checks a webhookTimestamp (nil: absent) is within
// WebhookTolerance of now.
func checkFresh(webhookTimestamp *float64, now time.Time) error {
	if webhookTimestamp == nil {
		return fmt.Errorf("%w: no webhookTimestamp", ErrMalformed)
	}
	// Milliseconds, compared as floats so that absurd values cannot
	// overflow a conversion to int64.
	skew := float64(now.UnixMilli()) - *webhookTimestamp
	if math.Abs(skew) > float64(WebhookTolerance.Milliseconds()) {
		return ErrStale
	}
	return nil
}

// Parse decodes a verified webhook body into one of *AgentSessionEvent,
// *OAuthAppRevoked, *PermissionChange or, for anything else, *UnknownEvent.
// It returns ErrMalformed (wrapped) for a body that is not JSON, has no
// type, or is an agent session event missing the ids it is identified by.
func Parse(body []byte) (Event, error) {
	p, err := decode(body)
	if err != nil {
		return nil, err
	}
	return p.event(body)
}

func decode(body []byte) (*payload, error) {
	var p payload
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return &p, nil
}

// event is the Event p describes; body is p's raw JSON.
func (p *payload) event(body []byte) (Event, error) {
	if p.Type == "" {
		return nil, fmt.Errorf("%w: no type", ErrMalformed)
	}
	env := p.envelope()
	switch {
	case p.Type == "AgentSessionEvent" && (p.Action == ActionCreated || p.Action == ActionPrompted):
		return p.agentSessionEvent(env)
	case p.Type == "OAuthApp" && p.Action == "revoked":
		return &OAuthAppRevoked{Envelope: env}, nil
	case p.Type == "PermissionChange":
		return &PermissionChange{
			Envelope:                env,
			CanAccessAllPublicTeams: p.CanAccessAllPublicTeams,
			AddedTeamIDs:            p.AddedTeamIDs,
			RemovedTeamIDs:          p.RemovedTeamIDs,
		}, nil
	default:
		return &UnknownEvent{Envelope: env, Body: append(json.RawMessage(nil), body...)}, nil
	}
}

// payload is the union of the webhook bodies Parse reads (linear.md §1.5,
// §1.7; Linear's AgentSessionEventWebhookPayload and friends).
type payload struct {
	Type             string   `json:"type"`
	Action           string   `json:"action"`
	OrganizationID   string   `json:"organizationId"`
	OAuthClientID    string   `json:"oauthClientId"`
	AppUserID        string   `json:"appUserId"`
	WebhookID        string   `json:"webhookId"`
	CreatedAt        string   `json:"createdAt"`
	WebhookTimestamp *float64 `json:"webhookTimestamp"`

	AgentSession     *sessionPayload   `json:"agentSession"`
	AgentActivity    *activityPayload  `json:"agentActivity"`
	PromptContext    string            `json:"promptContext"`
	PreviousComments []commentPayload  `json:"previousComments"`
	Guidance         []guidancePayload `json:"guidance"`

	CanAccessAllPublicTeams bool     `json:"canAccessAllPublicTeams"`
	AddedTeamIDs            []string `json:"addedTeamIds"`
	RemovedTeamIDs          []string `json:"removedTeamIds"`
}

type sessionPayload struct {
	ID              string          `json:"id"`
	Status          string          `json:"status"`
	URL             string          `json:"url"`
	IssueID         string          `json:"issueId"`
	CommentID       string          `json:"commentId"`
	SourceCommentID string          `json:"sourceCommentId"`
	CreatorID       string          `json:"creatorId"`
	Issue           *issuePayload   `json:"issue"`
	Comment         *commentPayload `json:"comment"`
	Creator         *userPayload    `json:"creator"`
}

type issuePayload struct {
	ID          string `json:"id"`
	Identifier  string `json:"identifier"`
	Title       string `json:"title"`
	Description string `json:"description"`
	URL         string `json:"url"`
	TeamID      string `json:"teamId"`
	ProjectID   string `json:"projectId"`
	Team        struct {
		ID   string `json:"id"`
		Key  string `json:"key"`
		Name string `json:"name"`
	} `json:"team"`
}

type commentPayload struct {
	ID      string `json:"id"`
	Body    string `json:"body"`
	UserID  string `json:"userId"`
	IssueID string `json:"issueId"`
}

type userPayload struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

type guidancePayload struct {
	Body   string `json:"body"`
	Origin struct {
		Type string `json:"type"`
		Team *struct {
			Name string `json:"name"`
		} `json:"team"`
	} `json:"origin"`
}

type activityPayload struct {
	ID              string          `json:"id"`
	Signal          string          `json:"signal"`
	SignalMetadata  json.RawMessage `json:"signalMetadata"`
	SourceCommentID string          `json:"sourceCommentId"`
	Body            string          `json:"body"`
	Content         struct {
		Body string `json:"body"`
	} `json:"content"`
	User *userPayload `json:"user"`
}

func (p *payload) envelope() Envelope {
	env := Envelope{
		Type: p.Type, Action: p.Action,
		OrganizationID: p.OrganizationID, OAuthClientID: p.OAuthClientID,
		AppUserID: p.AppUserID, WebhookID: p.WebhookID,
	}
	if t, err := time.Parse(time.RFC3339Nano, p.CreatedAt); err == nil {
		env.CreatedAt = t
	}
	if ts := p.WebhookTimestamp; ts != nil && *ts > 0 && *ts < math.MaxInt64 {
		env.Timestamp = time.UnixMilli(int64(*ts))
	}
	return env
}

func (p *payload) agentSessionEvent(env Envelope) (*AgentSessionEvent, error) {
	s := p.AgentSession
	if s == nil || s.ID == "" {
		return nil, fmt.Errorf("%w: agent session event without agentSession.id", ErrMalformed)
	}
	ev := &AgentSessionEvent{
		Envelope: env,
		Session: Session{
			ID: s.ID, Status: s.Status, URL: s.URL, IssueID: s.IssueID, CommentID: s.CommentID,
			SourceCommentID: s.SourceCommentID, CreatorID: s.CreatorID,
		},
		PromptContext: p.PromptContext,
		Creator:       s.Creator.user(),
	}
	if in := s.Issue; in != nil {
		ev.Issue = &IssueRef{
			ID: in.ID, Identifier: in.Identifier, Title: in.Title, Description: in.Description, URL: in.URL,
			TeamID: in.TeamID, TeamKey: in.Team.Key, TeamName: in.Team.Name, ProjectID: in.ProjectID,
		}
		if ev.Issue.TeamID == "" {
			ev.Issue.TeamID = in.Team.ID
		}
	}
	if s.Comment != nil {
		c := CommentRef(*s.Comment)
		ev.Comment = &c
	}
	for _, c := range p.PreviousComments {
		ev.PreviousComments = append(ev.PreviousComments, CommentRef(c))
	}
	for _, g := range p.Guidance {
		rule := GuidanceRule{Body: g.Body, Origin: strings.ToLower(g.Origin.Type)}
		if g.Origin.Team != nil {
			rule.TeamName = g.Origin.Team.Name
		}
		ev.Guidance = append(ev.Guidance, rule)
	}
	if p.Action == ActionPrompted {
		a := p.AgentActivity
		if a == nil || a.ID == "" {
			return nil, fmt.Errorf("%w: prompted event without agentActivity.id", ErrMalformed)
		}
		// The schema puts the user's text in content.body; Linear's prose
		// says agentActivity.body. Read the first, fall back to the second.
		body := a.Content.Body
		if body == "" {
			body = a.Body
		}
		ev.Prompt = &Prompt{
			ActivityID: a.ID, Body: body, Signal: a.Signal, SignalMetadata: a.SignalMetadata,
			SourceCommentID: a.SourceCommentID, User: a.User.user(),
		}
	}
	return ev, nil
}

func (u *userPayload) user() *UserRef {
	if u == nil || u.ID == "" {
		return nil
	}
	return &UserRef{ID: u.ID, Name: u.Name, Email: u.Email}
}
