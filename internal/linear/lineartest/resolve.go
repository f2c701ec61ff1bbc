package lineartest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/vektah/gqlparser/v2/ast"
)

// execute runs the operation's root fields against the fake's state.
func (s *Server) execute(org string, op *ast.OperationDefinition, vars map[string]any) (any, []gqlError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []gqlError
	// resolver adapts a root resolver to a fieldFunc collecting its error.
	resolver := func(f func(args map[string]any) (any, *gqlError)) fieldFunc {
		return func(args map[string]any) any {
			v, err := f(args)
			if err != nil {
				errs = append(errs, *err)
			}
			return v
		}
	}
	var root obj
	if op.Operation == ast.Mutation {
		root = obj{
			"agentActivityCreate": resolver(s.agentActivityCreate),
			"agentSessionUpdate":  resolver(s.agentSessionUpdate),
			"issueUpdate":         resolver(s.issueUpdate),
		}
	} else {
		root = obj{
			"viewer": resolver(func(map[string]any) (any, *gqlError) {
				return obj{"__typename": "User", "id": AppUserID, "name": "weft", "displayName": "weft",
					"organization": obj{"__typename": "Organization", "id": org, "name": "Test workspace"}}, nil
			}),
			"issue":        resolver(s.issueField),
			"team":         resolver(s.teamField),
			"agentSession": resolver(s.agentSessionField),
		}
	}
	return project(op.SelectionSet, root, vars), errs
}

func (s *Server) findIssue(id string) *Issue {
	if i, ok := s.issues[id]; ok {
		return i
	}
	for _, i := range s.issues {
		if strings.EqualFold(i.Identifier, id) {
			return i
		}
	}
	return nil
}

func (s *Server) issueField(args map[string]any) (any, *gqlError) {
	i := s.findIssue(str(args["id"]))
	if i == nil {
		return nil, notFound("Issue")
	}
	return s.issueObj(i), nil
}

func (s *Server) issueObj(i *Issue) obj {
	o := obj{"__typename": "Issue", "id": i.ID, "identifier": i.Identifier, "title": i.Title, "url": i.URL}
	if i.Description != "" {
		o["description"] = i.Description
	}
	if t := s.teams[i.TeamID]; t != nil {
		o["team"] = s.teamObj(t)
		for _, st := range t.States {
			if st.ID == i.StateID {
				o["state"] = stateObj(st)
			}
		}
	}
	if i.ProjectID != "" {
		o["project"] = obj{"__typename": "Project", "id": i.ProjectID, "name": i.ProjectName}
	}
	if i.DelegateID != "" {
		o["delegate"] = obj{"__typename": "User", "id": i.DelegateID}
	}
	comments := slices.Clone(i.Comments)
	o["comments"] = fieldFunc(func(args map[string]any) any {
		nodes := make([]any, 0, len(comments))
		for _, c := range comments {
			co := obj{"__typename": "Comment", "id": c.ID, "body": c.Body, "createdAt": c.CreatedAt.Format(time.RFC3339Nano)}
			if c.AuthorName != "" {
				co["user"] = obj{"__typename": "User", "name": c.AuthorName}
			}
			co["editedAt"] = nil
			if !c.EditedAt.IsZero() {
				co["editedAt"] = c.EditedAt.Format(time.RFC3339Nano)
			}
			nodes = append(nodes, co)
		}
		return page(nodes, args)
	})
	return o
}

func (s *Server) teamField(args map[string]any) (any, *gqlError) {
	t := s.teams[str(args["id"])]
	if t == nil {
		return nil, notFound("Team")
	}
	return s.teamObj(t), nil
}

func (s *Server) teamObj(t *Team) obj {
	states := slices.Clone(t.States)
	return obj{"__typename": "Team", "id": t.ID, "key": t.Key, "name": t.Name,
		"states": fieldFunc(func(args map[string]any) any {
			// Only the filter weft uses: type eq / in.
			var typeFilter map[string]any
			if f, ok := args["filter"].(map[string]any); ok {
				typeFilter, _ = f["type"].(map[string]any)
			}
			var nodes []any
			for _, st := range states {
				if matches(typeFilter, st.Type) {
					nodes = append(nodes, stateObj(st))
				}
			}
			return page(nodes, args)
		})}
}

func stateObj(st State) obj {
	return obj{"__typename": "WorkflowState", "id": st.ID, "name": st.Name, "type": st.Type, "position": st.Position}
}

func matches(cmp map[string]any, v string) bool {
	if eq, ok := cmp["eq"].(string); ok && eq != v {
		return false
	}
	if in, ok := cmp["in"].([]any); ok && !slices.Contains(in, any(v)) {
		return false
	}
	return true
}

func (s *Server) agentSessionField(args map[string]any) (any, *gqlError) {
	id := str(args["id"])
	if _, ok := s.sessions[id]; !ok {
		return nil, notFound("AgentSession")
	}
	var nodes []any
	for _, a := range s.sessionActivities(id) {
		nodes = append(nodes, activityObj(a))
	}
	return obj{"__typename": "AgentSession", "id": id,
		"activities": fieldFunc(func(args map[string]any) any { return page(nodes, args) })}, nil
}

// page applies first/after to nodes (objects with an "id"); the cursor is
// the id of the last node returned.
func page(nodes []any, args map[string]any) obj {
	start := 0
	if after := str(args["after"]); after != "" {
		for i, n := range nodes {
			if n.(obj)["id"] == after {
				start = i + 1
			}
		}
	}
	end := len(nodes)
	if first, ok := toInt(args["first"]); ok && start+first < end {
		end = start + first
	}
	info := obj{"__typename": "PageInfo", "hasNextPage": end < len(nodes)}
	if end > start {
		info["endCursor"] = nodes[end-1].(obj)["id"]
	}
	return obj{"nodes": append([]any{}, nodes[start:end]...), "pageInfo": info}
}

func activityObj(a Activity) obj {
	content := obj{"__typename": contentTypename(a.Type)}
	if a.Type == "action" {
		content["action"], content["parameter"] = a.Action, a.Parameter
		if a.Result != "" {
			content["result"] = a.Result
		}
	} else {
		content["body"] = a.Body
	}
	o := obj{"__typename": "AgentActivity", "id": a.ID, "createdAt": a.CreatedAt.Format(time.RFC3339Nano),
		"ephemeral": a.Ephemeral, "content": content}
	if a.Signal != "" {
		o["signal"] = a.Signal
	}
	return o
}

func contentTypename(typ string) string {
	if typ == "" {
		return ""
	}
	return "AgentActivity" + strings.ToUpper(typ[:1]) + typ[1:] + "Content"
}

// agentActivityCreate validates the content the way Linear documents it
// ("validated server-side, and invalid shapes will be rejected").
func (s *Server) agentActivityCreate(args map[string]any) (any, *gqlError) {
	in, _ := args["input"].(map[string]any)
	sessionID := str(in["agentSessionId"])
	if _, ok := s.sessions[sessionID]; !ok {
		return nil, notFound("AgentSession")
	}
	content, ok := in["content"].(map[string]any)
	if !ok {
		return nil, invalidInput("content must be an object")
	}
	a := Activity{
		ID: str(in["id"]), SessionID: sessionID, Type: str(content["type"]),
		Body: str(content["body"]), Action: str(content["action"]), Parameter: str(content["parameter"]),
		Result: str(content["result"]), Signal: str(in["signal"]),
	}
	a.Ephemeral, _ = in["ephemeral"].(bool)
	switch a.Type {
	case "thought", "elicitation", "response", "error":
		if a.Body == "" {
			return nil, invalidInput(a.Type + " content needs a body")
		}
	case "action":
		if a.Action == "" || content["parameter"] == nil {
			return nil, invalidInput("action content needs action and parameter")
		}
	case "prompt":
		return nil, invalidInput("an agent cannot create a prompt activity")
	default:
		return nil, invalidInput(fmt.Sprintf("unknown activity type %q", a.Type))
	}
	if a.Ephemeral && a.Type != "thought" && a.Type != "action" {
		return nil, invalidInput("only thought and action activities can be ephemeral")
	}
	if a.Signal == "select" {
		md, _ := in["signalMetadata"].(map[string]any)
		opts, _ := md["options"].([]any)
		if a.Type != "elicitation" || len(opts) == 0 {
			return nil, invalidInput("select needs an elicitation with signalMetadata.options")
		}
		for _, o := range opts {
			om, _ := o.(map[string]any)
			if str(om["value"]) == "" {
				return nil, invalidInput("every option needs a value")
			}
			a.Options = append(a.Options, str(om["value"]))
		}
	}
	if a.ID == "" {
		a.ID = uuid.NewString()
	} else if _, err := uuid.Parse(a.ID); err != nil {
		return nil, invalidInput("id must be a UUID")
	}
	if s.activityIDs[a.ID] {
		// The error third parties report from Linear (linear.md §3.1).
		return nil, &gqlError{Message: "conflict on insert of AgentActivity", Extensions: map[string]any{
			"code": "INPUT_ERROR", "type": "invalid input",
			"userPresentableMessage": "Entity AgentActivity with id " + a.ID + " already exists.",
		}}
	}
	a.CreatedAt = s.now()
	s.addActivity(a)
	return obj{"__typename": "AgentActivityPayload", "success": true, "agentActivity": activityObj(a)}, nil
}

func (s *Server) agentSessionUpdate(args map[string]any) (any, *gqlError) {
	id := str(args["id"])
	if _, ok := s.sessions[id]; !ok {
		return nil, notFound("AgentSession")
	}
	in, _ := args["input"].(map[string]any)
	u := SessionUpdate{SessionID: id}
	if urls, ok := in["externalUrls"].([]any); ok {
		seen := map[string]bool{}
		for _, raw := range urls {
			m, _ := raw.(map[string]any)
			e := ExternalURL{Label: str(m["label"]), URL: str(m["url"])}
			if seen[e.URL] {
				return nil, invalidInput("external URLs must be unique")
			}
			seen[e.URL] = true
			u.ExternalURLs = append(u.ExternalURLs, e)
		}
	}
	if plan, ok := in["plan"]; ok && plan != nil {
		u.Plan, _ = json.Marshal(plan)
	}
	s.sessionUpdates = append(s.sessionUpdates, u)
	return obj{"__typename": "AgentSessionPayload", "success": true}, nil
}

func (s *Server) issueUpdate(args map[string]any) (any, *gqlError) {
	i := s.findIssue(str(args["id"]))
	if i == nil {
		return nil, notFound("Issue")
	}
	in, _ := args["input"].(map[string]any)
	if stateID := str(in["stateId"]); stateID != "" {
		t := s.teams[i.TeamID]
		if t == nil || !slices.ContainsFunc(t.States, func(st State) bool { return st.ID == stateID }) {
			return nil, invalidInput("state does not belong to the issue's team")
		}
		i.StateID = stateID
		s.issueUpdates = append(s.issueUpdates, IssueUpdate{IssueID: i.ID, StateID: stateID})
	}
	return obj{"__typename": "IssuePayload", "success": true, "issue": s.issueObj(i)}, nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func toInt(v any) (int, bool) {
	switch n := v.(type) {
	case int64:
		return int(n), true
	case int:
		return n, true
	case float64:
		return int(n), true
	}
	return 0, false
}
