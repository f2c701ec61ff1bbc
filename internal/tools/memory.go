package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/toolschema"
)

// MemoryStore reads and writes memory blocks, and finds a thread's tenant
// and who spoke last (or, failing that, who started it). *db.Store
// implements it.
type MemoryStore interface {
	SaveMemory(ctx context.Context, s thread.MemoryScope, label, content string) error
	MemoryContext(ctx context.Context, threadID uuid.UUID, recent int) (*db.MemoryContext, error)
	// MemoryContextWithBlocks reads the context and the agent's blocks of
	// every scope it can name, in one round trip.
	MemoryContextWithBlocks(ctx context.Context, threadID uuid.UUID, recent int, agent string) (*db.MemoryContext, error)
}

// Memory scopes save_memory takes.
const (
	aboutOrganisation = "organisation"
	aboutPerson       = "person"
)

// saveMemoryArgs are save_memory's arguments.
type saveMemoryArgs struct {
	Label   string `json:"label" jsonschema:"short lowercase label, e.g. team_conventions"`
	Content string `json:"content" jsonschema:"what to remember"`
	About   string `json:"about,omitempty" jsonschema:"organisation (default): for everyone here; person: about the person you are talking to" enum:"organisation,person"`
}

// readMemoryArgs are read_memory's arguments.
type readMemoryArgs struct {
	Label string `json:"label,omitempty"`
}

// personScan is how many of a thread's latest stitches are searched for the
// person speaking.
const personScan = 50

// Memory returns save_memory and read_memory: what the agent keeps between
// threads, folded into every new thread's system prompt. Memory belongs to
// the organisation of the thread's tenant, or to one person in it: what is
// saved in one organisation never reaches another's.
func Memory(store MemoryStore) []Tool {
	return []Tool{
		{
			Name: "save_memory",
			Description: "Remember something for future conversations, under a short label (lowercase, digits, '_', '-', '.'). " +
				"Saving under an existing label replaces it. about=person keeps it for the person you are talking to only.",
			Schema: toolschema.For[saveMemoryArgs](),
			Handler: func(ctx context.Context, c Call) (string, error) {
				args, err := Decode[saveMemoryArgs](c)
				if err != nil {
					return "", err
				}
				if err := checkMemory(args.Label, args.Content); err != nil {
					return "", err
				}
				scope, _, err := memoryScope(ctx, store, c, false)
				if err != nil {
					return "", err
				}
				switch args.About {
				case "", aboutOrganisation:
					scope.Person = ""
				case aboutPerson:
					if scope.Person == "" {
						return "", fmt.Errorf("save memory %q: nobody to remember it about: no message here names its author", args.Label)
					}
				default:
					return "", fmt.Errorf("save memory %q: about must be %q or %q", args.Label, aboutOrganisation, aboutPerson)
				}
				if err := store.SaveMemory(ctx, scope, args.Label, args.Content); err != nil {
					return "", fmt.Errorf("save memory %q: %w", args.Label, err)
				}
				return fmt.Sprintf("Saved memory %q.", args.Label), nil
			},
		},
		{
			Name:        "read_memory",
			Description: "Read what you remembered here and about the person you are talking to: one block by label, or all blocks when no label is given.",
			Schema:      toolschema.For[readMemoryArgs](),
			Handler: func(ctx context.Context, c Call) (string, error) {
				args, err := Decode[readMemoryArgs](c)
				if err != nil {
					return "", err
				}
				// The scope and its blocks in one round trip.
				scope, mc, err := memoryScope(ctx, store, c, true)
				if err != nil {
					return "", err
				}
				blocks := mc.Blocks(scope.Person)
				var b strings.Builder
				for _, blk := range blocks {
					if args.Label != "" && blk.Label != args.Label {
						continue
					}
					if blk.Person != "" {
						fmt.Fprintf(&b, "[%s] (about the person you are talking to)\n%s\n", blk.Label, blk.Content)
						continue
					}
					fmt.Fprintf(&b, "[%s]\n%s\n", blk.Label, blk.Content)
				}
				if b.Len() == 0 {
					return "No memory saved yet.", nil
				}
				return b.String(), nil
			},
		},
	}
}

// What memory_blocks' CHECK constraints allow (migration 00006).
const (
	maxMemoryLabel   = 64
	maxMemoryContent = 64 << 10 // bytes
)

// checkMemory refuses a label or content the table would, saying what is
// allowed: Postgres's constraint text tells the model nothing it can fix.
func checkMemory(label, content string) error {
	const allowed = "a label is 1 to 64 lowercase letters, digits, '_', '-' and '.', and starts with a letter or digit, e.g. team_conventions"
	if label == "" {
		return fmt.Errorf("save memory: the label is empty; %s", allowed)
	}
	if len(label) > maxMemoryLabel {
		return fmt.Errorf("save memory %q: the label is %d characters, at most %d are allowed; %s", label, len(label), maxMemoryLabel, allowed)
	}
	for _, r := range label {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return fmt.Errorf("save memory %q: the label may hold only lowercase letters, digits, '_', '-' and '.' (found %q); %s", label, r, allowed)
		}
	}
	if strings.ContainsRune("_-.", rune(label[0])) {
		return fmt.Errorf("save memory %q: the label must start with a letter or digit; %s", label, allowed)
	}
	if len(content) > maxMemoryContent {
		return fmt.Errorf("save memory %q: the content is %d bytes, at most %d bytes are allowed; save less, or split it over several labels", label, len(content), maxMemoryContent)
	}
	return nil
}

// memoryScope is the calling thread's memory: its tenant's organisation
// and the author of its latest input, else the person who started it (as
// the thread's prompt was built for); with the context it was found from,
// which holds the agent's blocks, read with it, when withBlocks.
func memoryScope(ctx context.Context, store MemoryStore, c Call, withBlocks bool) (thread.MemoryScope, *db.MemoryContext, error) {
	read := store.MemoryContext
	if withBlocks {
		read = func(ctx context.Context, id uuid.UUID, recent int) (*db.MemoryContext, error) {
			return store.MemoryContextWithBlocks(ctx, id, recent, c.AgentName)
		}
	}
	mc, err := read(ctx, c.ThreadID, personScan)
	if err != nil {
		return thread.MemoryScope{}, nil, fmt.Errorf("memory: %w", err)
	}
	scope := thread.MemoryScope{Tenant: mc.Tenant, Agent: c.AgentName}
	for i := len(mc.Recent) - 1; i >= 0; i-- {
		if p := thread.Person(mc.Recent[i]); mc.Recent[i].Type.IsInput() && p != "" {
			scope.Person = p
			return scope, mc, nil
		}
	}
	scope.Person = mc.Starter()
	return scope, mc, nil
}
