package thread

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// MemoryBlock is one labelled piece of what an agent remembers between threads.
type MemoryBlock struct {
	Label     string
	Content   string
	UpdatedAt time.Time
}

// MemoryReader reads an agent's memory blocks. Package db implements it.
type MemoryReader interface {
	MemoryBlocks(ctx context.Context, agentName string) ([]MemoryBlock, error)
}

// DefaultPersona is the system prompt's opening when none is configured.
const DefaultPersona = "You are weft, a helpful engineering agent. You work in Linear issues and Discord threads. " +
	"Be concise and concrete. Use your tools when they help; ask the user when you genuinely need an answer."

// MemoryManager writes a thread's system prompt: the persona, then the agent's
// memory blocks, then where the conversation takes place.
type MemoryManager struct {
	Persona string
	Memory  MemoryReader // nil: no memory blocks
}

// SystemPrompt builds the system prompt for a new thread of the draft's shape.
func (m *MemoryManager) SystemPrompt(ctx context.Context, d *Draft) (string, error) {
	var b strings.Builder
	persona := m.Persona
	if persona == "" {
		persona = DefaultPersona
	}
	b.WriteString(persona)
	if m.Memory != nil {
		blocks, err := m.Memory.MemoryBlocks(ctx, d.Thread.AgentName)
		if err != nil {
			return "", fmt.Errorf("read memory blocks: %w", err)
		}
		if len(blocks) > 0 {
			b.WriteString("\n\n<memory>\n")
			for _, blk := range blocks {
				fmt.Fprintf(&b, "<block label=%q>\n%s\n</block>\n", blk.Label, blk.Content)
			}
			b.WriteString("</memory>")
		}
	}
	b.WriteString("\n\n<context>\n")
	switch {
	case d.Linear != nil:
		l := d.Linear
		fmt.Fprintf(&b, "You are answering in a Linear agent session")
		if l.IssueIdentifier != "" || l.IssueTitle != "" {
			fmt.Fprintf(&b, " on issue %s %q", l.IssueIdentifier, l.IssueTitle)
		}
		b.WriteString(". Your thoughts, actions and answers appear as activities in the issue.\n")
	case d.Discord != nil:
		fmt.Fprintf(&b, "You are answering in the Discord thread %q. Keep replies readable in chat.\n", d.Discord.ThreadName)
	default:
		b.WriteString("You work autonomously on the goal below. Call complete_thread with the result when it is done.\n")
	}
	fmt.Fprintf(&b, "Goal: %s\n</context>", d.Thread.Goal)
	return b.String(), nil
}
