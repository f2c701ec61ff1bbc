package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/api"
	"github.com/weft-dev/weft/api/apitest"
	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/httpapi"
	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/mcpserver"
	"github.com/weft-dev/weft/internal/replies"
)

const token = "mcp-test-token"

// newServer is the MCP server on a fresh database.
func newServer(t *testing.T) (*mcp.Server, *db.Store) {
	t.Helper()
	store := dbtest.NewStore(t)
	svc, err := replies.New(replies.Config{Store: store, Registry: prometheus.NewRegistry(), Logger: logtest.New(t)})
	require.NoError(t, err)
	return mcpserver.New(mcpserver.Deps{Store: store, Replies: svc, Logger: logtest.New(t)}), store
}

// connectInMemory connects the SDK's client to s in memory.
func connectInMemory(t *testing.T, s *mcp.Server) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, serverT, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	return connect(t, clientT)
}

// serveHTTP serves s at /mcp of weft's real API, behind the token, each
// answer checked against the API's OpenAPI document.
func serveHTTP(t *testing.T, s *mcp.Server) *httptest.Server {
	t.Helper()
	logger := logtest.New(t)
	h := api.NewServer(api.Deps{Logger: logger, DB: nil, Token: token, MCP: mcpserver.Handler(s, logger)})
	srv := httptest.NewServer(apitest.Handler(t, h))
	t.Cleanup(srv.Close)
	return srv
}

// bearer adds an Authorization header to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// httpTransport is the SDK's streamable HTTP client transport sending tok.
func httpTransport(srv *httptest.Server, tok string) *mcp.StreamableClientTransport {
	return &mcp.StreamableClientTransport{
		Endpoint:   srv.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{token: tok, next: srv.Client().Transport}},
		MaxRetries: -1,
	}
}

func connect(t *testing.T, transport mcp.Transport) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "weft-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), transport, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// call calls a tool and decodes its structured result into out; it
// returns the result for error checks.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	if !res.IsError && out != nil {
		raw, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(raw, out))
	}
	return res
}

// toolError reads a tool error's code.
func toolError(t *testing.T, res *mcp.CallToolResult) httpapi.Code {
	t.Helper()
	require.True(t, res.IsError)
	var body struct {
		Code    httpapi.Code `json:"code"`
		Message string       `json:"message"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &body))
	require.NotEmpty(t, body.Message)
	return body.Code
}
