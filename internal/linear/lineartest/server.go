// Package lineartest is a fake of Linear's API for tests and demos: a
// GraphQL endpoint that validates every operation against weft's schema
// subset and records what it is asked to do, an OAuth token endpoint,
// faults in fakekit's vocabulary by operation name, and a signer for
// webhook deliveries.
//
// Nothing outside tests and the demo command may import it.
package lineartest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/weft-dev/weft/internal/fakekit"
	"github.com/weft-dev/weft/internal/linear"
)

// Credentials and ids a new Server knows.
const (
	// AccessToken is accepted for OrganizationID.
	AccessToken    = "lin_oauth_test_access_token"
	OrganizationID = "0b5e9c3a-8f1d-4c2e-9a7b-000000000001"
	// AppUserID is the agent's user, returned by viewer.
	AppUserID    = "0b5e9c3a-8f1d-4c2e-9a7b-000000000002"
	ClientID     = "weft-test-client-id"
	ClientSecret = "weft-test-client-secret"
)

// Server is a fake Linear API on an httptest server. Its methods are safe
// for concurrent use.
type Server struct {
	// Faults are served by GraphQL operation name.
	fakekit.Faults

	srv    *httptest.Server
	schema *ast.Schema
	docs   documents

	mu            sync.Mutex
	tokens        map[string]string // access token → organization id
	refreshTokens map[string]string // refresh token → organization id
	codes         map[string]string // authorization code → redirect URI
	teams         map[string]*Team
	issues        map[string]*Issue
	sessions      map[string]string // session id → issue id
	activities    []Activity
	// activityIDs and bySession index activities (positions in
	// activities), so a fake holding many stays as quick as the real API.
	activityIDs    map[string]bool
	bySession      map[string][]int
	sessionUpdates []SessionUpdate
	issueUpdates   []IssueUpdate
	requests       fakekit.Log[record]
	windows        map[string]*requestWindow // by organization
	last           time.Time                 // of now()
	uploads        map[string]upload         // by path
	uploadRequests []string
}

// NewServer starts a fake. With a non-nil t it is closed when the test
// ends; with nil (a demo) the caller calls Close.
func NewServer(t fakekit.TB) *Server {
	schema, err := gqlparser.LoadSchema(&ast.Source{Name: "schema.graphql", Input: linear.SchemaSDL()})
	if err != nil {
		if t != nil {
			t.Fatalf("lineartest: load schema: %v", err)
		}
		panic("lineartest: load schema: " + err.Error())
	}
	s := &Server{
		schema:        schema,
		tokens:        map[string]string{AccessToken: OrganizationID},
		refreshTokens: map[string]string{},
		codes:         map[string]string{},
		teams:         map[string]*Team{},
		issues:        map[string]*Issue{},
		sessions:      map[string]string{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /graphql", s.handleGraphQL)
	mux.HandleFunc("POST /oauth/token", s.handleToken)
	mux.HandleFunc("GET /uploads/", s.serveUpload)
	s.srv = httptest.NewServer(mux)
	fakekit.CloseAtEnd(t, s.Close)
	return s
}

// Close shuts the server down. It is safe to call more than once.
func (s *Server) Close() { s.srv.Close() }

// URL is the GraphQL endpoint, for linear.NewClient.
func (s *Server) URL() string { return s.srv.URL + "/graphql" }

// TokenURL is the OAuth token endpoint, for linear.NewOAuthClient.
func (s *Server) TokenURL() string { return s.srv.URL + "/oauth/token" }

// Team is a seeded team with its workflow states.
type Team struct {
	ID, Key, Name string
	States        []State
}

// State is a workflow state; Type is triage, backlog, unstarted, started,
// completed or canceled.
type State struct {
	ID, Name, Type string
	Position       float64
}

// Issue is a seeded issue. StateID must be one of its team's states.
type Issue struct {
	ID, Identifier, Title, Description, URL string
	TeamID, StateID                         string
	ProjectID, ProjectName                  string
	DelegateID                              string
	Comments                                []Comment
}

// Comment is a seeded comment; an empty AuthorName makes it an
// integration's comment, without a user.
type Comment struct {
	ID, Body, AuthorName string
	CreatedAt            time.Time
	EditedAt             time.Time // zero: never edited
}

// Activity is an agent activity as the fake received it (or as seeded).
type Activity struct {
	ID, SessionID string
	// Type is content.type: thought, action, elicitation, response, error
	// or prompt.
	Type                            string
	Body, Action, Parameter, Result string
	Ephemeral                       bool
	Signal                          string
	// Options are the values of signalMetadata.options (signal "select").
	Options   []string
	CreatedAt time.Time
}

// Types lists the activities' types in order ("thought", "action", ...).
func Types(acts []Activity) []string {
	out := make([]string, len(acts))
	for i, a := range acts {
		out[i] = a.Type
	}
	return out
}

// ExternalURL is one entry of a session's externalUrls.
type ExternalURL struct{ Label, URL string }

// SessionUpdate is one agentSessionUpdate the fake applied.
type SessionUpdate struct {
	SessionID    string
	ExternalURLs []ExternalURL
	// Plan is the plan as sent, nil when the update left it alone.
	Plan []byte
}

// IssueUpdate is one issueUpdate the fake applied.
type IssueUpdate struct{ IssueID, StateID string }

// Request is one GraphQL request the fake received, valid or not.
type Request struct {
	Operation     string
	Query         string
	Variables     map[string]any
	Authorization string
}

// record is a received Request with its variables as they arrived. The
// handler cannot keep its own decoded map, which validation coerces in
// place, so the record keeps the bytes and Requests decodes them: off the
// request path, and a fresh copy for each caller.
type record struct {
	Request
	variables json.RawMessage
}

// AddToken makes the GraphQL endpoint accept token for the workspace.
func (s *Server) AddToken(token, organizationID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = organizationID
}

// RevokeToken makes the GraphQL endpoint refuse token, as after an
// uninstall.
func (s *Server) RevokeToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.tokens, token)
}

// AddTeam seeds a team.
func (s *Server) AddTeam(t Team) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t.States = slices.Clone(t.States)
	s.teams[t.ID] = &t
}

// AddIssue seeds an issue.
func (s *Server) AddIssue(i Issue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i.Comments = slices.Clone(i.Comments)
	s.issues[i.ID] = &i
}

// Issue returns the issue's current state.
func (s *Server) Issue(id string) (Issue, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.issues[id]
	if !ok {
		return Issue{}, false
	}
	return *i, true
}

// AddSession seeds an agent session on an issue (issueID may be empty).
func (s *Server) AddSession(sessionID, issueID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sessions[sessionID] = issueID
}

// AddActivity seeds an activity, e.g. a user's prompt, into a session's
// history. Empty ID and CreatedAt are filled in.
func (s *Server) AddActivity(sessionID string, a Activity) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a.SessionID = sessionID
	if a.ID == "" {
		a.ID = uuid.NewString()
	}
	if a.CreatedAt.IsZero() {
		a.CreatedAt = s.now()
	}
	s.addActivity(a)
}

// addActivity stores a and indexes it; s.mu is held.
func (s *Server) addActivity(a Activity) {
	if s.activityIDs == nil {
		s.activityIDs, s.bySession = map[string]bool{}, map[string][]int{}
	}
	s.activityIDs[a.ID] = true
	s.bySession[a.SessionID] = append(s.bySession[a.SessionID], len(s.activities))
	s.activities = append(s.activities, a)
}

// sessionActivities are the session's activities in order; s.mu is held.
func (s *Server) sessionActivities(sessionID string) []Activity {
	var out []Activity
	for _, i := range s.bySession[sessionID] {
		out = append(out, s.activities[i])
	}
	return out
}

// Activities returns the session's activities in the order they were
// created.
func (s *Server) Activities(sessionID string) []Activity {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessionActivities(sessionID)
}

// SessionUpdates returns the session updates applied so far.
func (s *Server) SessionUpdates() []SessionUpdate {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sessionUpdates)
}

// IssueUpdates returns the issue updates applied so far.
func (s *Server) IssueUpdates() []IssueUpdate {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.issueUpdates)
}

// Requests returns every GraphQL request received so far.
func (s *Server) Requests() []Request {
	recs := s.requests.All()
	out := make([]Request, len(recs))
	for i, rec := range recs {
		out[i] = rec.Request
		// A body that did not decode may leave no variables to show.
		_ = json.Unmarshal(rec.variables, &out[i].Variables)
	}
	return out
}

// AddAuthCode makes code redeemable, once, at the token endpoint with the
// given redirect URI, as if a user had just approved the app.
func (s *Server) AddAuthCode(code, redirectURI string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.codes[code] = redirectURI
}

// now returns strictly increasing times, so that creation order is the
// sort order even within one clock tick; s.mu must be held.
func (s *Server) now() time.Time {
	t := time.Now().UTC()
	if !t.After(s.last) {
		t = s.last.Add(time.Microsecond)
	}
	s.last = t
	return t
}
