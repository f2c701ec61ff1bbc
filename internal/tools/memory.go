package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/toolschema"
)

// MemoryStore reads and writes an agent's memory blocks. *db.Store
// implements it.
type MemoryStore interface {
	MemoryBlocks(ctx context.Context, agentName string) ([]thread.MemoryBlock, error)
	SaveMemory(ctx context.Context, agentName, label, content string) error
}

// saveMemoryArgs are save_memory's arguments.
type saveMemoryArgs struct {
	Label   string `json:"label" jsonschema:"short lowercase label, e.g. team_conventions"`
	Content string `json:"content" jsonschema:"what to remember"`
}

// readMemoryArgs are read_memory's arguments.
type readMemoryArgs struct {
	Label string `json:"label,omitempty"`
}

// Memory returns save_memory and read_memory: what the agent keeps between
// threads, folded into every new thread's system prompt.
func Memory(store MemoryStore) []Tool {
	return []Tool{
		{
			Name:        "save_memory",
			Description: "Remember something for future conversations, under a short label (lowercase, digits, '_', '-', '.'). Saving under an existing label replaces it.",
			Schema:      toolschema.For[saveMemoryArgs](),
			Handler: func(ctx context.Context, c Call) (string, error) {
				args, err := Decode[saveMemoryArgs](c)
				if err != nil {
					return "", err
				}
				if err := store.SaveMemory(ctx, c.AgentName, args.Label, args.Content); err != nil {
					return "", fmt.Errorf("save memory %q: %w", args.Label, err)
				}
				return fmt.Sprintf("Saved memory %q.", args.Label), nil
			},
		},
		{
			Name:        "read_memory",
			Description: "Read what you remembered: one block by label, or all blocks when no label is given.",
			Schema:      toolschema.For[readMemoryArgs](),
			Handler: func(ctx context.Context, c Call) (string, error) {
				args, err := Decode[readMemoryArgs](c)
				if err != nil {
					return "", err
				}
				blocks, err := store.MemoryBlocks(ctx, c.AgentName)
				if err != nil {
					return "", fmt.Errorf("read memory: %w", err)
				}
				var b strings.Builder
				for _, blk := range blocks {
					if args.Label == "" || blk.Label == args.Label {
						fmt.Fprintf(&b, "[%s]\n%s\n", blk.Label, blk.Content)
					}
				}
				if b.Len() == 0 {
					return "No memory saved yet.", nil
				}
				return b.String(), nil
			},
		},
	}
}
