// Package tools is the agent's tool registry (Registry, Tool, Call) and its
// own tools: memory (save_memory, read_memory) and get_thread_replies. A
// platform's own tools live in its seam folder and register here as Tools.
package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/uuid"
)

// Call is one invocation of a tool by the model.
type Call struct {
	ThreadID  uuid.UUID
	AgentName string
	Arguments json.RawMessage
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
}

// Registry is the set of tools a turn offers the model, in registration order.
type Registry struct {
	tools []Tool
}

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
	i := slices.IndexFunc(r.tools, func(t Tool) bool { return t.Name == name })
	if i < 0 {
		return Tool{}, false
	}
	return r.tools[i], true
}

// All returns the tools in registration order.
func (r *Registry) All() []Tool { return slices.Clone(r.tools) }

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
