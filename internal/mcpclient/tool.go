package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

// Prefix begins the name of every MCP tool the model sees:
// mcp__SERVER__TOOL, as Claude Code names them.
const Prefix = "mcp__"

// ToolName is the name the model sees for server's tool.
func ToolName(server, tool string) string { return Prefix + server + "__" + tool }

// list reads the server's tools/list and replaces the tools it offers.
func (s *server) list(ctx context.Context, cs *mcp.ClientSession) error {
	lctx, cancel := context.WithTimeout(ctx, s.cfg.Weft.CallTimeout())
	defer cancel()
	var out []tools.Tool
	for t, err := range cs.Tools(lctx, nil) {
		if err != nil {
			return fmt.Errorf("tools/list: %w", err)
		}
		if tool, ok := s.convert(ctx, t); ok {
			out = append(out, tool)
		}
	}
	s.mu.Lock()
	s.tools = out
	s.mu.Unlock()
	return nil
}

// convert makes t a tool of the agent's registry; false leaves it out: not
// on the allow-list, or its input schema is not one a provider takes.
func (s *server) convert(ctx context.Context, t *mcp.Tool) (tools.Tool, bool) {
	if t == nil || !s.cfg.Weft.Offers(t.Name) {
		return tools.Tool{}, false
	}
	name := ToolName(s.name, t.Name)
	schema, err := inputSchema(t.InputSchema)
	if err == nil && (len(name) > 64 || !validToolName(t.Name)) {
		err = errors.New("the name is not one a model provider takes (letters, digits, _ and -, 64 in all)")
	}
	if err != nil {
		s.logger.WarnContext(ctx, "mcp tool left out", slog.String("tool", t.Name), slog.Any("error", err))
		return tools.Tool{}, false
	}
	readOnly := t.Annotations != nil && t.Annotations.ReadOnlyHint
	desc := t.Description
	if desc == "" && t.Annotations != nil {
		desc = t.Annotations.Title
	}
	return tools.Tool{
		Name:          name,
		Description:   desc,
		Schema:        schema,
		Handler:       s.handler(t.Name),
		SideEffects:   !readOnly,
		NeedsApproval: s.cfg.Weft.NeedsApproval(readOnly),
		Server:        s.name,
		ServerTool:    t.Name,
		Organisations: s.cfg.Weft.Organisations,
	}, true
}

// validToolName is what providers take in a tool name, after the prefix.
func validToolName(n string) bool {
	if n == "" {
		return false
	}
	for _, r := range n {
		if !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// inputSchema checks that a tool's input schema is a JSON Schema of an
// object and returns it as sent: passed through, never rewritten.
func inputSchema(v any) (json.RawMessage, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("input schema is not a JSON Schema: %w", err)
	}
	if s.Type != "object" {
		return nil, fmt.Errorf(`input schema's type is %q, not "object"`, s.Type)
	}
	if _, err := s.Resolve(nil); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	return raw, nil
}

// handler calls the server's tool named name on the live session.
func (s *server) handler(name string) tools.Handler {
	return func(ctx context.Context, c tools.Call) (string, error) {
		s.mu.Lock()
		cs := s.session
		s.mu.Unlock()
		if cs == nil {
			return "", fmt.Errorf("the MCP server %s is not connected now", s.name)
		}
		args := c.Arguments
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(args, &obj); err != nil {
			return "", fmt.Errorf("the arguments are not a JSON object: %w", err)
		}
		timeout := s.cfg.Weft.CallTimeout()
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		// Ending cctx (the timeout, or the turn's context on an abort or a
		// lost lease) makes the SDK send notifications/cancelled.
		res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: name, Arguments: args})
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return "", context.Cause(ctx)
		case errors.Is(cctx.Err(), context.DeadlineExceeded):
			return "", fmt.Errorf("the call to %s took longer than %s and was cancelled", name, timeout)
		default:
			return "", fmt.Errorf("the call to %s failed: %w", name, err)
		}
		if res.IsError {
			// An error's text is what the model reads of it.
			return "", errors.New(Render(res, nil))
		}
		return Render(res, c.Attach), nil
	}
}

// MaxImageBytes bounds an image a result may show the model: 5 MiB is the
// largest Anthropic takes. A larger one is a placeholder.
const MaxImageBytes = 5 << 20

// maxImages bounds the images of one result the model is shown, as every
// later model call of the thread sends them again.
const maxImages = 4

// imageTypes are the media types both providers accept.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// Render is a call's result as the model reads it: its text, its
// structuredContent as JSON, the images attach takes (those of a type and
// size the providers accept, a few at most; none when attach is nil), and
// a placeholder for the rest (other images, audio, binary resources).
func Render(res *mcp.CallToolResult, attach func(thread.Image)) string {
	var parts []string
	attached := 0
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			if attach != nil && attached < maxImages && imageTypes[c.MIMEType] && len(c.Data) <= MaxImageBytes {
				attach(thread.Image{MediaType: c.MIMEType, Data: c.Data})
				attached++
				parts = append(parts, fmt.Sprintf("[image %s, %d bytes, attached]", c.MIMEType, len(c.Data)))
				continue
			}
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s: %s]", c.Name, c.URI))
		case *mcp.EmbeddedResource:
			if r := c.Resource; r != nil && r.Text != "" {
				parts = append(parts, r.Text)
			} else if r != nil {
				parts = append(parts, fmt.Sprintf("[resource %s, %s, %d bytes, not shown]", r.URI, r.MIMEType, len(r.Blob)))
			}
		}
	}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil && !slicesContains(parts, string(b)) {
			parts = append(parts, string(b))
		}
	}
	return strings.Join(parts, "\n")
}

// slicesContains reports whether a text part already holds the
// structuredContent, which servers often repeat as text.
func slicesContains(parts []string, s string) bool {
	for _, p := range parts {
		if p == s || compactJSON(p) == s {
			return true
		}
	}
	return false
}

func compactJSON(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}
