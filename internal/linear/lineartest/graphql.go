package lineartest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/weft-dev/weft/internal/fakekit"
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

// response is a GraphQL response body. Data is always present, null when
// the request failed.
type response struct {
	Data   any        `json:"data"`
	Errors []gqlError `json:"errors,omitempty"`
}

func writeErrors(w http.ResponseWriter, status int, errs ...gqlError) {
	writeJSON(w, status, response{Errors: errs})
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
		Query         string          `json:"query"`
		OperationName string          `json:"operationName"`
		Variables     json.RawMessage `json:"variables"`
	}
	decodeErr := json.Unmarshal(raw, &req)
	// Plain decoding, not UseNumber: the validator would take a
	// json.Number (a string kind) for a String variable.
	var vars map[string]any
	if decodeErr == nil && len(req.Variables) > 0 {
		decodeErr = json.Unmarshal(req.Variables, &vars)
	}
	doc, cached := s.docs.get(req.Query)
	rec := record{Request: Request{Operation: req.OperationName, Query: req.Query,
		Authorization: r.Header.Get("Authorization")}, variables: req.Variables}
	if cached {
		// The cached text, so that thousands of records share one string.
		rec.Query = doc.query
	}
	s.requests.Add(rec)

	// answer is the request's normal answer: authenticated, validated and
	// executed.
	answer := func(w http.ResponseWriter) {
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
		s.rateHeaders(w.Header(), org)
		if !cached {
			var gerr *gqlError
			if doc, gerr = s.parse(req.Query); gerr != nil {
				writeErrors(w, http.StatusBadRequest, *gerr)
				return
			}
		}
		op, coerced, gerr := s.prepare(doc.doc, req.OperationName, vars)
		if gerr != nil {
			writeErrors(w, http.StatusBadRequest, *gerr)
			return
		}
		data, errs := s.execute(org, op, coerced)
		if len(errs) > 0 {
			// Every root field weft uses is non-null, so an error nulls the
			// whole data object.
			writeJSON(w, http.StatusOK, response{Errors: errs})
			return
		}
		writeJSON(w, http.StatusOK, response{Data: data})
	}
	if fault, ok := s.Take(req.OperationName); ok {
		fakekit.Serve(w, r, fault, answer, writeFault)
		return
	}
	answer(w)
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

// validationError is Linear's answer to a document or variables that do
// not fit the schema.
func validationError(msg string) *gqlError {
	return &gqlError{Message: msg, Extensions: map[string]any{"code": "GRAPHQL_VALIDATION_FAILED", "type": "graphql error"}}
}

// parse parses and validates the document against the schema, as Linear
// would, and caches it if it is valid.
func (s *Server) parse(query string) (*document, *gqlError) {
	doc, err := parser.ParseQuery(&ast.Source{Name: "request", Input: query})
	if err != nil {
		return nil, validationError(err.Error())
	}
	if errs := validator.ValidateWithRules(s.schema, doc, nil); len(errs) > 0 {
		return nil, validationError(errs.Error())
	}
	d := &document{query: query, doc: doc}
	s.docs.put(d)
	return d, nil
}

// prepare picks the named operation of a valid document and coerces the
// request's variables against it, which is per request even for a cached
// document.
func (s *Server) prepare(doc *ast.QueryDocument, name string, rawVars map[string]any) (*ast.OperationDefinition, map[string]any, *gqlError) {
	var op *ast.OperationDefinition
	switch {
	case name != "":
		op = doc.Operations.ForName(name)
	case len(doc.Operations) == 1:
		op = doc.Operations[0]
	}
	if op == nil {
		return nil, nil, validationError("unknown operation " + name)
	}
	vars, err := validator.VariableValues(s.schema, op, rawVars)
	if err != nil {
		return nil, nil, validationError(err.Error())
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
		out := make(map[string]any, len(set))
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
