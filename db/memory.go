package db

import (
	"context"
	"fmt"

	"github.com/weft-dev/weft/db/internal/dbsqlc"
	"github.com/weft-dev/weft/internal/thread"
)

var _ thread.MemoryReader = (*Queries)(nil)

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
