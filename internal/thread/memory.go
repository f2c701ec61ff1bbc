package thread

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"
)

// MemoryBlock is one labelled piece of what an agent remembers between
// threads: its organisation's (Person empty) or one person's in it.
type MemoryBlock struct {
	Label     string
	Content   string
	UpdatedAt time.Time
	Person    string
}

// MemoryScope is whose memory a thread reads and writes: the organisation of
// its tenant (the operator's for no tenant) and, within it, one person.
type MemoryScope struct {
	Tenant Tenant
	Agent  string
	// Person is Person's key for the person speaking; empty for the
	// organisation's blocks alone.
	Person string
}

// Person keys a person within an organisation: the platform and the
// platform's user id of a stitch's author, or "" when it has none.
func Person(s Stitch) string {
	if s.Author == nil || s.Source == "" {
		return ""
	}
	return PersonOn(s.Source, s.Author.ID)
}

// PersonOn keys the user userID of platform p, or "" without an id.
func PersonOn(p Platform, userID string) string {
	if userID == "" {
		return ""
	}
	return string(p) + ":" + userID
}

// MemoryReader reads what a new thread's system prompt draws from the
// store. Package db implements it.
type MemoryReader interface {
	// PromptMemory reads, in one round trip, the persona the scope's
	// organisation chose ("" for none: the global one) and the scope's
	// memory blocks: its organisation's, then its person's, by label.
	PromptMemory(ctx context.Context, s MemoryScope) (persona string, blocks []MemoryBlock, err error)
}

// DefaultPersona is the system prompt's opening when none is configured.
const DefaultPersona = "You are weft, a helpful engineering agent. You work in Linear issues, Discord threads and Slack threads. " +
	"Be concise and concrete. Use your tools when they help; ask the user when you genuinely need an answer."

// MemoryManager writes a thread's system prompt: the persona (its
// organisation's when it chose one, `weft org set`), then the memory
// blocks of the thread's organisation and of the person who started it, then
// where the conversation takes place. Another organisation's blocks never
// reach it.
type MemoryManager struct {
	// Persona is the global persona; empty is DefaultPersona.
	Persona string
	Memory  MemoryReader // nil: no memory blocks, no organisation's persona
}

// SystemPrompt builds the system prompt for a new thread of the draft's shape.
func (m *MemoryManager) SystemPrompt(ctx context.Context, d *Draft) (string, error) {
	var b strings.Builder
	persona := m.Persona
	var blocks []MemoryBlock
	if m.Memory != nil {
		own, bl, err := m.Memory.PromptMemory(ctx, MemoryScope{Tenant: d.Tenant, Agent: d.Thread.AgentName, Person: d.Person})
		if err != nil {
			return "", fmt.Errorf("read memory blocks: %w", err)
		}
		persona, blocks = cmp.Or(own, persona), bl
	}
	b.WriteString(cmp.Or(persona, DefaultPersona))
	if len(blocks) > 0 {
		b.WriteString("\n\n<memory>\n")
		for _, blk := range blocks {
			if blk.Person != "" {
				fmt.Fprintf(&b, "<block label=%q about=\"the person you are talking to\">\n%s\n</block>\n", blk.Label, blk.Content)
				continue
			}
			fmt.Fprintf(&b, "<block label=%q>\n%s\n</block>\n", blk.Label, blk.Content)
		}
		b.WriteString("</memory>")
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
	case d.Slack != nil:
		where := "a Slack thread"
		if d.Slack.ChannelType == "im" {
			where = "a Slack direct message"
		}
		fmt.Fprintf(&b, "You are answering in %s. Keep replies readable in chat.\n", where)
	default:
		b.WriteString("You work autonomously on the goal below. Call complete_thread with the result when it is done.\n")
	}
	fmt.Fprintf(&b, "Goal: %s\n</context>", d.Thread.Goal)
	return b.String(), nil
}
