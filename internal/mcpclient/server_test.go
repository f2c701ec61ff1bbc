package mcpclient

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// faultServerEnv makes the test binary run the fault server over stdio
// instead of the tests: the stdio tests start it as their MCP server.
const faultServerEnv = "WEFT_TEST_MCP_FAULT_SERVER"

// callsFileEnv names the file the stdio fault server counts write calls
// in, so a test can count calls made across restarts.
const callsFileEnv = "WEFT_TEST_MCP_CALLS_FILE"

func TestMain(m *testing.M) {
	if os.Getenv(faultServerEnv) == "1" {
		s := faultServer(&faults{callsFile: os.Getenv(callsFileEnv)})
		if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// faults is the fault server's state as a test sees it.
type faults struct {
	writes    atomic.Int64
	started   chan struct{} // sent to when hang starts
	cancelled chan struct{} // sent to when hang's context ends
	callsFile string
}

var objectSchema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)

// faultServer is a tiny MCP server, on the same SDK, whose tools misbehave
// on purpose: it dies, hangs, fails, offers a schema no provider takes
// and changes its tool list.
func faultServer(f *faults) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "faults", Version: "1"}, nil)
	text := func(t string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: t}}}
	}
	s.AddTool(&mcp.Tool{Name: "echo", Description: "say it back", InputSchema: objectSchema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ Text string }
			_ = json.Unmarshal(r.Params.Arguments, &a)
			return text("echo: " + a.Text), nil
		})
	s.AddTool(&mcp.Tool{Name: "write", Description: "change something", InputSchema: objectSchema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n := f.writes.Add(1)
			if f.callsFile != "" {
				fh, err := os.OpenFile(f.callsFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
				if err == nil {
					_, _ = fh.WriteString("write\n")
					_ = fh.Close()
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "written"}},
				StructuredContent: map[string]any{"writes": n}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "fail", InputSchema: objectSchema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r := text("no such row")
			r.IsError = true
			return r, nil
		})
	s.AddTool(&mcp.Tool{Name: "hang", InputSchema: objectSchema},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if f.started != nil {
				f.started <- struct{}{}
			}
			<-ctx.Done()
			if f.cancelled != nil {
				f.cancelled <- struct{}{}
			}
			return nil, ctx.Err()
		})
	s.AddTool(&mcp.Tool{Name: "die", InputSchema: objectSchema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(&mcp.Tool{Name: "image", InputSchema: objectSchema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a chart"},
				&mcp.ImageContent{MIMEType: "image/png", Data: []byte("png-bytes")}}}, nil
		})
	// A schema whose $ref leads nowhere: no provider could use it.
	s.AddTool(&mcp.Tool{Name: "bad_schema", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"$ref":"#/$defs/missing"}}}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("unreachable"), nil
		})
	s.AddTool(&mcp.Tool{Name: "grow", Description: "add a tool", InputSchema: objectSchema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.AddTool(&mcp.Tool{Name: "late" + strconv.Itoa(0), InputSchema: objectSchema},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("late"), nil })
			return text("grown"), nil
		})
	return s
}

// execCommand is a child process the test stops at its end.
func execCommand(t *testing.T, name string, args ...string) *exec.Cmd {
	t.Helper()
	return exec.CommandContext(t.Context(), name, args...)
}
