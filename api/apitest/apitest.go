// Package apitest checks weft's HTTP answers against the API's OpenAPI
// document, so that a status, a field or a content type the document does
// not list fails the test that met it.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/weft-dev/weft/api"
	"github.com/weft-dev/weft/internal/httpapi"
)

// spec is the loaded document and its router, built once.
type spec struct {
	doc    *openapi3.T
	router routers.Router
}

var load = sync.OnceValues(func() (*spec, error) {
	doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPI())
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	closeObjects(doc)
	router, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, err
	}
	return &spec{doc: doc, router: router}, nil
})

// closeObjects forbids properties an object schema does not list, for
// these tests only: the published document leaves objects open, so clients
// tolerate fields added later, but an answer weft sends must carry none the
// document does not describe yet.
func closeObjects(doc *openapi3.T) {
	seen := map[*openapi3.Schema]bool{}
	var walk func(ref *openapi3.SchemaRef)
	walk = func(ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		s := ref.Value
		seen[s] = true
		if len(s.Properties) > 0 && s.AdditionalProperties.Has == nil && s.AdditionalProperties.Schema == nil {
			s.AdditionalProperties.Has = new(false)
		}
		for _, p := range s.Properties {
			walk(p)
		}
		walk(s.Items)
		for _, group := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
			for _, sub := range group {
				walk(sub)
			}
		}
	}
	for _, ref := range doc.Components.Schemas {
		walk(ref)
	}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for _, resp := range op.Responses.Map() {
				if resp.Value != nil {
					for _, mt := range resp.Value.Content {
						walk(mt.Schema)
					}
				}
			}
		}
	}
}

// Handler wraps h so that each of its answers is checked against the
// document:
//   - an answer to a documented operation must have a documented status,
//     content type, headers and body (kin-openapi's response validation,
//     with every object closed), and no body where none is documented;
//   - a request the document refuses (a bad parameter or body) must be
//     refused, with a 4xx;
//   - a path the document does not list must answer 404 and a method it
//     does not list for a path 405 with Allow, both as documented errors;
//   - an error body's code must be the one of its status.
func Handler(t testing.TB, h http.Handler) http.Handler {
	t.Helper()
	s, err := load()
	if err != nil {
		t.Fatalf("apitest: load openapi.json: %v", err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Body != nil {
			body, _ = io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		check := r.Clone(r.Context())
		check.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		for _, msg := range s.check(check, rec) {
			t.Errorf("apitest: %s %s → %d: %s\n%s", r.Method, r.URL.Path, rec.Code, msg, rec.Body.String())
		}
		maps.Copy(w.Header(), rec.Header())
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}

// check returns what is wrong with rec as an answer to r.
func (s *spec) check(r *http.Request, rec *httptest.ResponseRecorder) []string {
	var problems []string
	problems = append(problems, checkCode(rec)...)
	route, params, err := s.router.FindRoute(r)
	// The router makes new errors with the sentinels' reasons.
	var re *routers.RouteError
	errors.As(err, &re)
	if re != nil && (re.Reason == routers.ErrPathNotFound.Error() || re.Reason == routers.ErrMethodNotAllowed.Error()) {
		// kin-openapi's router tells a wrong method from an unknown path
		// only on paths without parameters; either answer is an error.
		return append(problems, s.checkUnrouted(rec)...)
	}
	if err != nil {
		return append(problems, "find route: "+err.Error())
	}
	in := &openapi3filter.RequestValidationInput{
		Request: r, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
	}
	// Refused: a 4xx, or the 503 of an API turned off.
	if err := openapi3filter.ValidateRequest(r.Context(), in); err != nil && (rec.Code < 400 || rec.Code == http.StatusInternalServerError) {
		problems = append(problems, "the document refuses the request, the API did not: "+err.Error())
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: rec.Code, Header: rec.Header(),
		Options: &openapi3filter.Options{IncludeResponseStatus: true},
	}
	out.SetBodyBytes(rec.Body.Bytes())
	if err := openapi3filter.ValidateResponse(r.Context(), out); err != nil {
		problems = append(problems, err.Error())
	}
	if resp := route.Operation.Responses.Status(rec.Code); resp != nil && resp.Value != nil &&
		len(resp.Value.Content) == 0 && rec.Body.Len() > 0 {
		problems = append(problems, "a body where the document has none")
	}
	return problems
}

// checkUnrouted checks an answer to a request no documented operation
// serves: a 404 or a 405 with Allow, as the document's components say.
func (s *spec) checkUnrouted(rec *httptest.ResponseRecorder) []string {
	name := map[int]string{http.StatusNotFound: "RouteNotFound", http.StatusMethodNotAllowed: "MethodNotAllowed"}[rec.Code]
	if name == "" {
		return []string{"an undocumented route must answer 404 or 405"}
	}
	if rec.Code == http.StatusMethodNotAllowed && rec.Header().Get("Allow") == "" {
		return []string{"a 405 without Allow"}
	}
	mt, _, _ := mime.ParseMediaType(rec.Header().Get("Content-Type"))
	media := s.doc.Components.Responses[name].Value.Content.Get(mt)
	if media == nil {
		return []string{"undocumented content type " + mt}
	}
	var v any
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		return []string{"body is not JSON: " + err.Error()}
	}
	if err := media.Schema.Value.VisitJSON(v); err != nil {
		return []string{err.Error()}
	}
	return nil
}

// checkCode checks that a JSON error's code is the one of its status.
// (The probes' 503 is a status report, not an error, and has no code.)
func checkCode(rec *httptest.ResponseRecorder) []string {
	mt, _, _ := mime.ParseMediaType(rec.Header().Get("Content-Type"))
	if rec.Code < 400 || mt != "application/json" {
		return nil
	}
	var e struct {
		Code *httpapi.Code `json:"code"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
		return []string{"error body is not JSON: " + err.Error()}
	}
	if e.Code != nil && e.Code.Status() != rec.Code {
		return []string{"code " + string(*e.Code) + " belongs to another status"}
	}
	return nil
}
