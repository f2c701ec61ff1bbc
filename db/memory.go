package db

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db/internal/dbsqlc"
	"github.com/weft-dev/weft/internal/thread"
)

var _ thread.MemoryReader = (*Queries)(nil)

// MemoryContext is what the memory tools read to find whose memory a
// thread's is: its tenant, its latest stitches (which name who spoke
// last) and who started it.
type MemoryContext struct {
	// Tenant is the zero tenant for a thread on no platform, and
	// Organisation the organisation it is in ("" then).
	Tenant       thread.Tenant
	Organisation string
	// Recent are the thread's latest stitches, in chain order.
	Recent []thread.Stitch
	// starter is the person who started the thread (see Starter).
	starter string
	// blocks are, when read with the context (MemoryContext's agent), the
	// blocks of every scope the context can name; see Blocks.
	blocks []thread.MemoryBlock
}

// Blocks are the memory blocks of the scope of the context's
// organisation and person (the organisation's alone for person ""), as
// MemoryBlocks reads them, when the context was read with an agent's
// blocks: person must be the organisation's, its starter (Starter) or the
// person of one of its Recent stitches.
func (mc *MemoryContext) Blocks(person string) []thread.MemoryBlock {
	var out []thread.MemoryBlock
	for _, b := range mc.blocks {
		if b.Person == "" || b.Person == person {
			out = append(out, b)
		}
	}
	return out
}

// Starter is the person who started the thread on its platform (Linear's
// session creator, else the Discord thread's), or "" when the platform
// does not say.
func (mc *MemoryContext) Starter() string { return mc.starter }

// MemoryContext reads a thread's memory context, with its latest recent
// stitches, in one round trip: a memory tool's call is a step of a turn,
// and the turn waits on it.
func (q *Queries) MemoryContext(ctx context.Context, threadID uuid.UUID, recent int) (*MemoryContext, error) {
	return q.memoryContext(ctx, threadID, recent, nil)
}

// MemoryContextWithBlocks is MemoryContext and, in the same round trip,
// agent's blocks of every scope the context can name (see
// MemoryContext.Blocks): read_memory's scope and its blocks in one round
// trip rather than two.
func (q *Queries) MemoryContextWithBlocks(ctx context.Context, threadID uuid.UUID, recent int, agent string) (*MemoryContext, error) {
	return q.memoryContext(ctx, threadID, recent, &agent)
}

func (q *Queries) memoryContext(ctx context.Context, threadID uuid.UUID, recent int, agent *string) (*MemoryContext, error) {
	mc := &MemoryContext{}
	var p pipeline
	if agent != nil {
		arg := dbsqlc.ThreadMemoryBlocksParams{ThreadID: threadID, AgentName: *agent, Recent: int32(recent)}
		p.add(func(q *dbsqlc.Queries) error {
			rows, err := q.ThreadMemoryBlocks(ctx, arg)
			mc.blocks = mc.blocks[:0]
			for _, r := range rows {
				mc.blocks = append(mc.blocks, thread.MemoryBlock(r))
			}
			return translate(err)
		})
	}
	p.add(func(q *dbsqlc.Queries) error {
		row, err := q.ThreadMemoryOwner(ctx, threadID)
		if err != nil {
			return translate(err)
		}
		if row.TenantKind != "" {
			mc.Tenant = thread.Tenant{Kind: thread.TenantKind(row.TenantKind), ID: row.TenantID}
			mc.Organisation = row.Organisation
		}
		if row.StarterPlatform != "" {
			mc.starter = thread.PersonOn(thread.Platform(row.StarterPlatform), row.StarterID)
		}
		return nil
	})
	p.add(func(q *dbsqlc.Queries) (err error) {
		mc.Recent, err = stitchWindow(ctx, q, threadID, StitchPage{Newest: true, Limit: recent}, false)
		return err
	})
	if err := p.run(ctx, q.db); err != nil {
		return nil, fmt.Errorf("memory context of %s: %w", threadID, err)
	}
	slices.Reverse(mc.Recent)
	return mc, nil
}

// MemoryBlocks returns the blocks of the scope's organisation, then those of
// its person, by label.
func (q *Queries) MemoryBlocks(ctx context.Context, s thread.MemoryScope) ([]thread.MemoryBlock, error) {
	rows, err := q.gen.MemoryBlocks(ctx, dbsqlc.MemoryBlocksParams{
		TenantKind: string(s.Tenant.Kind), TenantID: s.Tenant.ID, AgentName: s.Agent, Person: s.Person,
	})
	if err != nil {
		return nil, fmt.Errorf("memory blocks: %w", translate(err))
	}
	var out []thread.MemoryBlock
	for _, r := range rows {
		out = append(out, thread.MemoryBlock(r))
	}
	return out, nil
}

// PromptMemory reads, in one statement, what a new thread's system prompt
// holds from the store: the persona of the scope's organisation ("" when
// it chose none) and the blocks MemoryBlocks reads.
func (q *Queries) PromptMemory(ctx context.Context, s thread.MemoryScope) (string, []thread.MemoryBlock, error) {
	rows, err := q.gen.PromptMemory(ctx, dbsqlc.PromptMemoryParams{
		TenantKind: string(s.Tenant.Kind), TenantID: s.Tenant.ID, AgentName: s.Agent, Person: s.Person,
	})
	if err != nil {
		return "", nil, fmt.Errorf("prompt memory: %w", translate(err))
	}
	var persona string
	var out []thread.MemoryBlock
	for i, r := range rows {
		if i == 0 {
			persona = r.Persona
		}
		if r.Label == nil {
			continue // no blocks: the one row is the persona's
		}
		b := thread.MemoryBlock{Label: *r.Label, Content: str(r.Content), Person: str(r.Person)}
		if r.UpdatedAt != nil {
			b.UpdatedAt = *r.UpdatedAt
		}
		out = append(out, b)
	}
	return persona, out, nil
}

// SaveMemory creates or replaces a memory block of the scope's organisation,
// or of its person when the scope names one.
func (q *Queries) SaveMemory(ctx context.Context, s thread.MemoryScope, label, content string) error {
	err := q.gen.SaveMemory(ctx, dbsqlc.SaveMemoryParams{
		TenantKind: string(s.Tenant.Kind), TenantID: s.Tenant.ID, AgentName: s.Agent, Person: s.Person,
		Label: label, Content: content,
	})
	if err != nil {
		return fmt.Errorf("save memory: %w", translate(err))
	}
	return nil
}
