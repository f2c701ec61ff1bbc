package db

import (
	"context"
	"fmt"

	"github.com/weft-dev/weft/db/internal/dbsqlc"
	"github.com/weft-dev/weft/internal/thread"
)

var _ thread.MemoryReader = (*Queries)(nil)

// MemoryBlocks returns an agent's memory blocks by label.
func (q *Queries) MemoryBlocks(ctx context.Context, agentName string) ([]thread.MemoryBlock, error) {
	rows, err := q.gen.MemoryBlocks(ctx, agentName)
	if err != nil {
		return nil, fmt.Errorf("memory blocks: %w", translate(err))
	}
	var out []thread.MemoryBlock
	for _, r := range rows {
		out = append(out, thread.MemoryBlock(r))
	}
	return out, nil
}

// SaveMemory creates or replaces one of an agent's memory blocks.
func (q *Queries) SaveMemory(ctx context.Context, agentName, label, content string) error {
	err := q.gen.SaveMemory(ctx, dbsqlc.SaveMemoryParams{AgentName: agentName, Label: label, Content: content})
	if err != nil {
		return fmt.Errorf("save memory: %w", translate(err))
	}
	return nil
}
