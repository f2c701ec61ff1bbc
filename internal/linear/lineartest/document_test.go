package lineartest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDocumentCache checks that caching valid documents changes nothing a
// client can see: every document is still validated before it is first
// used, and every request's operation and variables are still checked.
func TestDocumentCache(t *testing.T) {
	t.Parallel()

	type answer struct {
		status int
		code   string
		data   map[string]any
	}
	// ask calls the handler directly, so the test can look at the cache.
	ask := func(t *testing.T, s *Server, query, name string, vars map[string]any) answer {
		t.Helper()
		body, err := json.Marshal(map[string]any{"query": query, "operationName": name, "variables": vars})
		require.NoError(t, err)
		r := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(string(body)))
		r.Header.Set("Authorization", "Bearer "+AccessToken)
		w := httptest.NewRecorder()
		s.handleGraphQL(w, r)
		var out struct {
			Data   map[string]any `json:"data"`
			Errors []gqlError     `json:"errors"`
		}
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &out), w.Body.String())
		a := answer{status: w.Code, data: out.Data}
		if len(out.Errors) > 0 {
			a.code, _ = out.Errors[0].Extensions["code"].(string)
		}
		return a
	}
	const issueQuery = `query issue($id: String!) { issue(id: $id) { id title } }`
	setup := func(t *testing.T) *Server {
		t.Helper()
		s := NewServer(t)
		s.AddIssue(Issue{ID: "issue-1", Identifier: "ENG-1", Title: "Fix the login redirect"})
		return s
	}

	t.Run("CachedDocumentIsReused", func(t *testing.T) {
		t.Parallel()
		s := setup(t)
		require.Equal(t, http.StatusOK, ask(t, s, issueQuery, "issue", map[string]any{"id": "issue-1"}).status)
		first, ok := s.docs.get(issueQuery)
		require.True(t, ok, "a valid document is cached")

		a := ask(t, s, issueQuery, "issue", map[string]any{"id": "ENG-1"})
		require.Equal(t, http.StatusOK, a.status)
		require.Equal(t, map[string]any{"issue": map[string]any{"id": "issue-1", "title": "Fix the login redirect"}}, a.data)
		again, _ := s.docs.get(issueQuery)
		require.Same(t, first, again, "the second request used the cached document")
		require.Equal(t, 1, s.docs.len())
	})

	t.Run("InvalidDocumentRejectedAfterValidOneOfSameName", func(t *testing.T) {
		t.Parallel()
		s := setup(t)
		require.Equal(t, http.StatusOK, ask(t, s, `query q { viewer { id } }`, "q", nil).status)
		for range 2 {
			a := ask(t, s, `query q { viewer { id email } }`, "q", nil)
			require.Equal(t, http.StatusBadRequest, a.status)
			require.Equal(t, "GRAPHQL_VALIDATION_FAILED", a.code)
		}
		require.Equal(t, 1, s.docs.len(), "invalid documents are not cached")
	})

	t.Run("VariablesCheckedOnEveryRequest", func(t *testing.T) {
		t.Parallel()
		s := setup(t)
		require.Equal(t, http.StatusOK, ask(t, s, issueQuery, "issue", map[string]any{"id": "issue-1"}).status)
		for name, vars := range map[string]map[string]any{
			"WrongType": {"id": 7},
			"Missing":   nil,
			"Null":      {"id": nil},
		} {
			a := ask(t, s, issueQuery, "issue", vars)
			require.Equal(t, http.StatusBadRequest, a.status, name)
			require.Equal(t, "GRAPHQL_VALIDATION_FAILED", a.code, name)
		}
		a := ask(t, s, issueQuery, "issue", map[string]any{"id": "nope"})
		require.Equal(t, "INPUT_ERROR", a.code, "variables are not carried over from an earlier request")
	})

	t.Run("OperationChosenPerRequest", func(t *testing.T) {
		t.Parallel()
		s := setup(t)
		const two = `query a { viewer { id } } query b { viewer { name } }`
		require.Equal(t, map[string]any{"viewer": map[string]any{"id": AppUserID}}, ask(t, s, two, "a", nil).data)
		require.Equal(t, map[string]any{"viewer": map[string]any{"name": "weft"}}, ask(t, s, two, "b", nil).data)
		a := ask(t, s, two, "", nil)
		require.Equal(t, "GRAPHQL_VALIDATION_FAILED", a.code, "two operations and no name")
	})

	t.Run("Bounded", func(t *testing.T) {
		t.Parallel()
		s := setup(t)
		for i := range maxDocuments + 10 {
			q := fmt.Sprintf(`query { v%d: viewer { id } }`, i)
			a := ask(t, s, q, "", nil)
			require.Equal(t, http.StatusOK, a.status)
			require.Equal(t, map[string]any{fmt.Sprintf("v%d", i): map[string]any{"id": AppUserID}}, a.data)
		}
		require.Equal(t, maxDocuments, s.docs.len())
	})

	t.Run("SharedAcrossConcurrentRequests", func(t *testing.T) {
		t.Parallel()
		s := setup(t)
		s.AddSession("s1", "issue-1")
		s.AddActivity("s1", Activity{Type: "prompt", Body: "why?"})
		// Fragments and arguments: what a request reads of the shared AST.
		const q = `query q($id: String!) { agentSession(id: $id) { activities(first: 50) { nodes { id content { __typename ... on AgentActivityPromptContent { body } } } } } }`
		body := `{"query":` + strconv.Quote(q) + `,"operationName":"q","variables":{"id":"s1"}}`
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 20 {
					r := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(body))
					r.Header.Set("Authorization", AccessToken)
					w := httptest.NewRecorder()
					s.handleGraphQL(w, r)
					if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"body":"why?"`) {
						t.Errorf("answer %d: %s", w.Code, w.Body.String())
						return
					}
				}
			})
		}
		wg.Wait()
		require.Equal(t, 1, s.docs.len())
	})

	t.Run("RecordsVariablesAsSent", func(t *testing.T) {
		t.Parallel()
		s := setup(t)
		vars := map[string]any{"id": "issue-1"}
		ask(t, s, issueQuery, "issue", vars)
		ask(t, s, issueQuery, "issue", nil)
		reqs := s.Requests()
		require.Equal(t, vars, reqs[0].Variables)
		require.Nil(t, reqs[1].Variables)
		reqs[0].Variables["id"] = "changed"
		require.Equal(t, vars, s.Requests()[0].Variables, "each caller gets its own copy")
	})
}
