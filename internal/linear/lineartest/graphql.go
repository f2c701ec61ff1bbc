package lineartest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
)

// gqlError is one entry of a GraphQL errors array.
type gqlError struct {
	Message    string         `json:"message"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

// Error codes as Linear sends them.
func invalidInput(msg string) *gqlError {
	return &gqlError{Message: "Argument Validation Error", Extensions: map[string]any{
		"code": "INVALID_INPUT", "type": "invalid input", "userPresentableMessage": msg,
	}}
}

func notFound(entity string) *gqlError {
	return &gqlError{Message: "Entity not found: " + entity, Extensions: map[string]any{
		"code": "INPUT_ERROR", "type": "invalid input", "userPresentableMessage": "Could not find referenced " + entity + ".",
	}}
}

func writeErrors(w http.ResponseWriter, status int, errs ...gqlError) {
	writeJSON(w, status, map[string]any{"data": nil, "errors": errs})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// maxRequestBody caps a GraphQL request, as any real server would.
const maxRequestBody = 1 << 20

func (s *Server) handleGraphQL(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	if err != nil {
		return
	}
	var req struct {
		Query         string         `json:"query"`
		OperationName string         `json:"operationName"`
		Variables     map[string]any `json:"variables"`
	}
	// Plain decoding, not UseNumber: the validator would take a
	// json.Number (a string kind) for a String variable.
	decodeErr := json.Unmarshal(raw, &req)
	// The record gets its own copy: validation coerces variables in place.
	var recorded struct {
		Variables map[string]any `json:"variables"`
	}
	_ = json.Unmarshal(raw, &recorded)
	s.mu.Lock()
	s.requests = append(s.requests, Request{
		Operation: req.OperationName, Query: req.Query, Variables: recorded.Variables,
		Authorization: r.Header.Get("Authorization"),
	})
	s.mu.Unlock()

	fault, faulty := s.takeFault(req.OperationName)
	if faulty && fault.Delay > 0 {
		t := time.NewTimer(fault.Delay)
		select {
		case <-r.Context().Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
	if faulty && fault.failing() && !fault.AfterHandling {
		fault.write(w)
		return
	}
	if decodeErr != nil {
		writeErrors(w, http.StatusBadRequest, gqlError{Message: "Invalid JSON body", Extensions: map[string]any{"code": "BAD_REQUEST"}})
		return
	}
	org, ok := s.organization(r.Header.Get("Authorization"))
	if !ok {
		writeErrors(w, http.StatusUnauthorized, gqlError{
			Message: "Authentication required, not authenticated",
			Extensions: map[string]any{
				"code": "AUTHENTICATION_ERROR", "type": "authentication error", "statusCode": 401,
				"userPresentableMessage": "You need to authenticate to access this operation.",
			},
		})
		return
	}
	op, vars, gerr := s.prepare(req.Query, req.OperationName, req.Variables)
	if gerr != nil {
		writeErrors(w, http.StatusBadRequest, *gerr)
		return
	}
	data, errs := s.execute(org, op, vars)
	if faulty && fault.failing() {
		fault.write(w)
		return
	}
	if len(errs) > 0 {
		// Every root field weft uses is non-null, so an error nulls the
		// whole data object.
		writeJSON(w, http.StatusOK, map[string]any{"data": nil, "errors": errs})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data})
}

// organization maps an Authorization header to a workspace. OAuth tokens
// come as "Bearer <token>", personal API keys bare.
func (s *Server) organization(header string) (string, bool) {
	tok := strings.TrimPrefix(header, "Bearer ")
	s.mu.Lock()
	defer s.mu.Unlock()
	org, ok := s.tokens[tok]
	return org, ok && tok != ""
}

// prepare parses and validates the operation against the schema, as
// Linear would, and coerces its variables.
func (s *Server) prepare(query, name string, rawVars map[string]any) (*ast.OperationDefinition, map[string]any, *gqlError) {
	validation := func(msg string) *gqlError {
		return &gqlError{Message: msg, Extensions: map[string]any{"code": "GRAPHQL_VALIDATION_FAILED", "type": "graphql error"}}
	}
	doc, err := parser.ParseQuery(&ast.Source{Name: "request", Input: query})
	if err != nil {
		return nil, nil, validation(err.Error())
	}
	if errs := validator.ValidateWithRules(s.schema, doc, nil); len(errs) > 0 {
		return nil, nil, validation(errs.Error())
	}
	var op *ast.OperationDefinition
	switch {
	case name != "":
		op = doc.Operations.ForName(name)
	case len(doc.Operations) == 1:
		op = doc.Operations[0]
	}
	if op == nil {
		return nil, nil, validation("unknown operation " + name)
	}
	vars, err := validator.VariableValues(s.schema, op, rawVars)
	if err != nil {
		return nil, nil, validation(err.Error())
	}
	return op, vars, nil
}

// obj is a resolved object; "__typename" names its GraphQL type for type
// conditions. A field's value may be a fieldFunc, called with the field's
// arguments when selected.
type obj map[string]any

type fieldFunc func(args map[string]any) any

// project keeps what the selection set asks for, the way a GraphQL server
// answers: aliases, fragments with type conditions and argument-taking
// fields included.
func project(set ast.SelectionSet, v any, vars map[string]any) any {
	switch val := v.(type) {
	case []any:
		out := make([]any, len(val))
		for i := range val {
			out[i] = project(set, val[i], vars)
		}
		return out
	case obj:
		out := map[string]any{}
		projectInto(out, set, val, vars)
		return out
	default:
		return v
	}
}

func projectInto(out map[string]any, set ast.SelectionSet, o obj, vars map[string]any) {
	for _, sel := range set {
		switch sel := sel.(type) {
		case *ast.Field:
			key := sel.Alias
			if key == "" {
				key = sel.Name
			}
			value := o[sel.Name]
			if fn, ok := value.(fieldFunc); ok {
				value = fn(sel.ArgumentMap(vars))
			}
			if len(sel.SelectionSet) > 0 {
				value = project(sel.SelectionSet, value, vars)
			}
			out[key] = value
		case *ast.InlineFragment:
			if sel.TypeCondition == "" || sel.TypeCondition == o["__typename"] {
				projectInto(out, sel.SelectionSet, o, vars)
			}
		case *ast.FragmentSpread:
			if sel.Definition != nil && sel.Definition.TypeCondition == o["__typename"] {
				projectInto(out, sel.Definition.SelectionSet, o, vars)
			}
		}
	}
}
