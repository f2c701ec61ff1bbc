// Package tools is the agent's tool registry (Registry, Tool, Call) and its
// own memory tools (save_memory, read_memory). get_thread_replies is
// internal/replies' and a platform's own tools live in its seam folder;
// they register here as Tools.
package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/internal/thread"
)

// Call is one invocation of a tool by the model.
type Call struct {
	ThreadID  uuid.UUID
	AgentName string
	Arguments json.RawMessage
	// Attach, when set, takes the pictures the call's result carries (an
	// MCP tool's image content) for the model to see beside the text;
	// nil leaves them to the text's placeholders.
	Attach func(thread.Image)
}

// Handler runs a tool. Its error goes back to the model as the tool's
// result (and into the tool_call stitch); it does not end the turn.
type Handler func(ctx context.Context, c Call) (string, error)

// Tool is a function the model may call.
type Tool struct {
	Name        string
	Description string
	Schema      json.RawMessage // JSON Schema of the arguments object
	Handler     Handler
	// SideEffects marks a call that may change something outside weft
	// (an MCP tool not annotated read-only): it is never made twice.
	SideEffects bool
	// NeedsApproval marks a call that waits for a person's approval.
	NeedsApproval bool
	// Server and ServerTool name an MCP tool's server and its own name
	// there, as an approval request shows them; empty for weft's tools.
	Server, ServerTool string
	// Organisations are the organisations whose conversations are offered
	// the tool (an MCP server's "organisations"); empty is every one.
	Organisations []string
}

// OfferedTo reports whether conversations of organisation org are offered
// the tool.
func (t Tool) OfferedTo(org string) bool {
	return len(t.Organisations) == 0 || slices.Contains(t.Organisations, org)
}

// Registry is the set of tools a turn offers the model, in registration order.
type Registry struct {
	tools   []Tool
	sources []func() []Tool
}

// AddSource adds tools that come and go, such as an MCP server's: src is
// asked for them each time the registry is read, after the registered
// tools. Its names must not clash with registered ones; a clash is
// shadowed by the registered tool.
func (r *Registry) AddSource(src func() []Tool) { r.sources = append(r.sources, src) }

// NewRegistry returns a registry holding tools.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{}
	for _, t := range tools {
		if err := r.Register(t); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Register adds a tool; names are unique.
func (r *Registry) Register(t Tool) error {
	if t.Name == "" || t.Handler == nil {
		return fmt.Errorf("tools: register %q: a tool needs a name and a handler", t.Name)
	}
	if !json.Valid(t.Schema) {
		return fmt.Errorf("tools: register %q: schema is not JSON", t.Name)
	}
	if _, ok := r.Get(t.Name); ok {
		return fmt.Errorf("tools: register %q: name taken", t.Name)
	}
	r.tools = append(r.tools, t)
	return nil
}

// Get returns the tool named name.
func (r *Registry) Get(name string) (Tool, bool) {
	match := func(t Tool) bool { return t.Name == name }
	if i := slices.IndexFunc(r.tools, match); i >= 0 {
		return r.tools[i], true
	}
	for _, src := range r.sources {
		ts := src()
		if i := slices.IndexFunc(ts, match); i >= 0 {
			return ts[i], true
		}
	}
	return Tool{}, false
}

// All returns the tools in registration order, then the sources' tools.
func (r *Registry) All() []Tool {
	out := slices.Clone(r.tools)
	for _, src := range r.sources {
		for _, t := range src() {
			if !slices.ContainsFunc(out, func(o Tool) bool { return o.Name == t.Name }) {
				out = append(out, t)
			}
		}
	}
	return out
}

// Decode unmarshals a call's arguments into a T, for handlers.
func Decode[T any](c Call) (T, error) {
	var v T
	if len(c.Arguments) == 0 {
		return v, nil
	}
	if err := json.Unmarshal(c.Arguments, &v); err != nil {
		return v, fmt.Errorf("arguments are not valid: %w", err)
	}
	return v, nil
}
