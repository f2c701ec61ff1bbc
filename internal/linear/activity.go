package linear

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/surface"
)

// ActivityType is the kind of an agent activity (content.type in Linear).
type ActivityType string

// The activity types an agent may create, and the user's prompt, which only
// appears when reading a session's history.
const (
	ActivityThought     ActivityType = "thought"
	ActivityAction      ActivityType = "action"
	ActivityElicitation ActivityType = "elicitation"
	ActivityResponse    ActivityType = "response"
	ActivityError       ActivityType = "error"
	ActivityPrompt      ActivityType = "prompt"
)

// Activity is one activity the agent posts into a session.
type Activity struct {
	// ID is a UUID chosen by the caller (the outbox row's id), which makes
	// a retried create idempotent. Empty means CreateActivity picks one.
	ID   string
	Type ActivityType
	// Body is the Markdown text of a thought, elicitation, response or
	// error.
	Body string
	// Action, Parameter and Result describe a tool call (ActivityAction);
	// Result is empty while the call is still running.
	Action, Parameter, Result string
	// Ephemeral activities are replaced by the next one; Linear allows it
	// for thoughts and actions only.
	Ephemeral bool
	// Options, on an elicitation, are offered as choices (signal "select").
	// The user may still answer in free text.
	Options []string
}

// SessionActivity is one activity of a session's history, the user's
// prompts included.
type SessionActivity struct {
	ID        string
	Type      ActivityType
	Body      string
	Action    string
	Parameter string
	Result    string
	// Signal is the activity's signal, e.g. "stop" on a prompt.
	Signal    string
	Ephemeral bool
	CreatedAt time.Time
}

// CreateActivity posts an activity into the agent session and returns its
// id. Creating an activity whose id exists already counts as delivered: an
// earlier attempt (this call's or the outbox's) got through even if its
// answer was lost, and activities are append-only, so the first one stands.
func (c *Client) CreateActivity(ctx context.Context, sessionID string, a Activity) (string, error) {
	const op = "create activity"
	if a.ID == "" {
		a.ID = uuid.NewString()
	}
	content, signal, metadata, err := activityContent(a)
	if err != nil {
		return "", &surface.Error{Platform: platform, Kind: surface.KindInvalid, Op: op, Err: err}
	}
	if sessionID == "" {
		return "", &surface.Error{Platform: platform, Kind: surface.KindInvalid, Op: op, Err: errors.New("empty session id")}
	}
	err = c.do(ctx, op, func(ctx context.Context) error {
		resp, err := agentActivityCreate(ctx, c.gql, sessionID, content, a.ID, a.Ephemeral, signal, metadata)
		if err == nil && !resp.AgentActivityCreate.Success {
			return errNotSuccessful
		}
		return err
	})
	var e *surface.Error
	if errors.As(err, &e) && e.Kind == surface.KindConflict {
		return a.ID, nil
	}
	if err != nil {
		return "", err
	}
	return a.ID, nil
}

// errNotSuccessful is what a mutation answering success: false becomes. It
// is classified as a server error, so the call is retried; a retry of an
// activity that was created after all then ends as a conflict, delivered.
var errNotSuccessful = errors.New("mutation answered success: false")

// activityContent validates a and builds Linear's content object, signal
// and signal metadata for it.
func activityContent(a Activity) (content json.RawMessage, signal string, metadata json.RawMessage, err error) {
	if _, err := uuid.Parse(a.ID); err != nil {
		return nil, "", nil, fmt.Errorf("activity id %q is not a UUID", a.ID)
	}
	if a.Ephemeral && a.Type != ActivityThought && a.Type != ActivityAction {
		return nil, "", nil, fmt.Errorf("a %s activity cannot be ephemeral", a.Type)
	}
	if len(a.Options) > 0 && a.Type != ActivityElicitation {
		return nil, "", nil, fmt.Errorf("options need an elicitation, not a %s", a.Type)
	}
	var body any
	switch a.Type {
	case ActivityThought, ActivityElicitation, ActivityResponse, ActivityError:
		if strings.TrimSpace(a.Body) == "" {
			return nil, "", nil, fmt.Errorf("a %s activity needs a body", a.Type)
		}
		body = struct {
			Type ActivityType `json:"type"`
			Body string       `json:"body"`
		}{a.Type, a.Body}
	case ActivityAction:
		if strings.TrimSpace(a.Action) == "" {
			return nil, "", nil, errors.New("an action activity needs an action")
		}
		body = struct {
			Type      ActivityType `json:"type"`
			Action    string       `json:"action"`
			Parameter string       `json:"parameter"`
			Result    string       `json:"result,omitempty"`
		}{a.Type, a.Action, a.Parameter, a.Result}
	default:
		return nil, "", nil, fmt.Errorf("unknown activity type %q", a.Type)
	}
	if content, err = json.Marshal(body); err != nil {
		return nil, "", nil, err
	}
	if len(a.Options) > 0 {
		type option struct {
			Value string `json:"value"`
		}
		opts := make([]option, len(a.Options))
		for i, o := range a.Options {
			opts[i] = option{o}
		}
		if metadata, err = json.Marshal(struct {
			Options []option `json:"options"`
		}{opts}); err != nil {
			return nil, "", nil, err
		}
		signal = "select"
	}
	return content, signal, metadata, nil
}

// maxActivityPages bounds SessionActivities: 20 pages of 50 is far more
// history than a prompt can use, and a bug in paging must not loop forever.
const maxActivityPages = 20

// SessionActivities returns the session's activities, oldest first. Linear
// recommends them over comments as the record of what the user said,
// because comments can be edited afterwards.
func (c *Client) SessionActivities(ctx context.Context, sessionID string) ([]SessionActivity, error) {
	const op = "list session activities"
	var out []SessionActivity
	after := ""
	for range maxActivityPages {
		var resp *agentSessionActivitiesResponse
		err := c.do(ctx, op, func(ctx context.Context) error {
			var err error
			resp, err = agentSessionActivities(ctx, c.gql, sessionID, after)
			return err
		})
		if err != nil {
			return nil, err
		}
		conn := resp.AgentSession.Activities
		for _, n := range conn.Nodes {
			out = append(out, sessionActivity(n))
		}
		if !conn.PageInfo.HasNextPage || conn.PageInfo.EndCursor == "" {
			break
		}
		after = conn.PageInfo.EndCursor
	}
	slices.SortStableFunc(out, func(a, b SessionActivity) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out, nil
}

func sessionActivity(n agentSessionActivitiesAgentSessionActivitiesAgentActivityConnectionNodesAgentActivity) SessionActivity {
	a := SessionActivity{ID: n.Id, Signal: n.Signal, Ephemeral: n.Ephemeral, CreatedAt: n.CreatedAt}
	switch content := n.Content.(type) {
	case *agentSessionActivitiesAgentSessionActivitiesAgentActivityConnectionNodesAgentActivityContentAgentActivityThoughtContent:
		a.Type, a.Body = ActivityThought, content.Body
	case *agentSessionActivitiesAgentSessionActivitiesAgentActivityConnectionNodesAgentActivityContentAgentActivityActionContent:
		a.Type, a.Action, a.Parameter, a.Result = ActivityAction, content.Action, content.Parameter, content.Result
	case *agentSessionActivitiesAgentSessionActivitiesAgentActivityConnectionNodesAgentActivityContentAgentActivityElicitationContent:
		a.Type, a.Body = ActivityElicitation, content.Body
	case *agentSessionActivitiesAgentSessionActivitiesAgentActivityConnectionNodesAgentActivityContentAgentActivityResponseContent:
		a.Type, a.Body = ActivityResponse, content.Body
	case *agentSessionActivitiesAgentSessionActivitiesAgentActivityConnectionNodesAgentActivityContentAgentActivityErrorContent:
		a.Type, a.Body = ActivityError, content.Body
	case *agentSessionActivitiesAgentSessionActivitiesAgentActivityConnectionNodesAgentActivityContentAgentActivityPromptContent:
		a.Type, a.Body = ActivityPrompt, content.Body
	}
	return a
}
