package github_test

import (
	"bytes"
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/github/githubtest"
)

// spec is the vendored description of the operations the client calls
// (testdata/README.md), loaded once.
var spec = sync.OnceValues(func() (routers.Router, error) {
	doc, err := openapi3.NewLoader().LoadFromFile("githubtest/openapi/operations.json")
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	return legacy.NewRouter(doc)
})

// checkOpenAPI fails t for any call that GitHub's REST description does
// not allow: an unknown path or method, a missing or ill-typed parameter,
// a query parameter the operation does not take, or a body that breaks
// its schema.
func checkOpenAPI(t *testing.T, calls []githubtest.Call) {
	t.Helper()
	for _, c := range calls {
		if err := validateCall(c); err != nil {
			t.Errorf("%s %s is not in GitHub's REST description: %v", c.Method, c.URL, err)
		}
	}
}

func validateCall(c githubtest.Call) error {
	router, err := spec()
	if err != nil {
		return err
	}
	r, err := http.NewRequest(c.Method, "https://api.github.com"+c.URL, bytes.NewReader(c.Body))
	if err != nil {
		return err
	}
	r.Header = c.Header.Clone()
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

// TestOpenAPICheckRefuses shows the check can fail: requests GitHub's
// description does not allow are refused.
func TestOpenAPICheckRefuses(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]githubtest.Call{
		"unknown path":     {Method: "GET", URL: "/repos/acme/widgets/issues/1/timeline"},
		"wrong method":     {Method: "DELETE", URL: "/repos/acme/widgets/issues/1"},
		"undeclared query": {Method: "GET", URL: "/repos/acme/widgets/issues/1/comments?direction=desc"},
		"bad number":       {Method: "GET", URL: "/repos/acme/widgets/issues/one"},
		"bad reaction":     {Method: "POST", URL: "/repos/acme/widgets/issues/comments/5/reactions", Body: []byte(`{"content":"thumbsup"}`), Header: http.Header{"Content-Type": {"application/json"}}},
		"comment no body":  {Method: "POST", URL: "/repos/acme/widgets/issues/1/comments", Body: []byte(`{}`), Header: http.Header{"Content-Type": {"application/json"}}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if c.Header == nil {
				c.Header = http.Header{}
			}
			require.Error(t, validateCall(c))
		})
	}
	require.NoError(t, validateCall(githubtest.Call{Method: "POST", URL: "/repos/acme/widgets/issues/1/comments",
		Body: []byte(`{"body":"hi"}`), Header: http.Header{"Content-Type": {"application/json"}}}))
}
