package githubtest

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"net/http"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// operations is GitHub's REST description of the operations weft calls
// (openapi/README.md says where it comes from).
//
//go:embed openapi/operations.json
var operations []byte

// spec is operations, loaded and validated once.
var spec = sync.OnceValues(func() (routers.Router, error) {
	doc, err := openapi3.NewLoader().LoadFromData(operations)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	return legacy.NewRouter(doc)
})

// ValidateCall reports why GitHub's REST description does not allow c: an
// unknown path or method, a missing or ill-typed parameter, a query
// parameter the operation does not take, or a body that breaks its
// schema. It is nil for a request GitHub documents.
func ValidateCall(c Call) error {
	router, err := spec()
	if err != nil {
		return fmt.Errorf("githubtest: load the REST description: %w", err)
	}
	r, err := http.NewRequest(c.Method, "https://api.github.com"+c.URL, bytes.NewReader(c.Body))
	if err != nil {
		return err
	}
	r.Header = c.Header.Clone()
	if r.Header == nil {
		r.Header = http.Header{}
	}
	route, params, err := router.FindRoute(r)
	if err != nil {
		return err
	}
	declared := map[string]bool{}
	for _, p := range append(route.PathItem.Parameters, route.Operation.Parameters...) {
		if p.Value.In == openapi3.ParameterInQuery {
			declared[p.Value.Name] = true
		}
	}
	for name := range r.URL.Query() {
		if !declared[name] {
			return &openapi3filter.RequestError{Reason: "query parameter " + name + " is not declared"}
		}
	}
	return openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{
		Request: r, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
	})
}

// errorf is a test's Errorf: a request GitHub's description refuses fails
// the test that made it, from whichever goroutine it came.
type errorf interface {
	Errorf(format string, args ...any)
}

// checkCall checks a request against GitHub's REST description while a
// test runs (NewServer's t), failing the test for one it refuses. It
// reports whether the request may be answered: a refused one gets GitHub's
// 422 (or the 404 of an unknown route) instead.
func (s *Server) checkCall(c Call) bool {
	s.mu.Lock()
	on := s.checkOpenAPI
	s.mu.Unlock()
	if !on {
		return true
	}
	err := ValidateCall(c)
	if err == nil {
		return true
	}
	if e, ok := s.t.(errorf); ok {
		e.Errorf("githubtest: %s %s is not in GitHub's REST description: %v", c.Method, c.URL, err)
	} else {
		s.t.Logf("githubtest: %s %s is not in GitHub's REST description: %v", c.Method, c.URL, err)
	}
	return false
}

// SkipOpenAPICheck stops checking requests against GitHub's REST
// description, for a test that sends the fake requests GitHub would refuse
// on purpose.
func (s *Server) SkipOpenAPICheck() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checkOpenAPI = false
}
