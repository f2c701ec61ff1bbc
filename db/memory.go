package db

import (
	"context"
	"fmt"

	"github.com/weft-dev/weft/internal/thread"
)

var _ thread.MemoryReader = (*Queries)(nil)

// MemoryBlocks returns an agent's memory blocks by label.
func (q *Queries) MemoryBlocks(ctx context.Context, agentName string) ([]thread.MemoryBlock, error) {
	rows, err := q.db.Query(ctx, `SELECT label, content, updated_at FROM memory_blocks
		WHERE agent_name = $1 ORDER BY label`, agentName)
	if err != nil {
		return nil, fmt.Errorf("memory blocks: %w", translate(err))
	}
	defer rows.Close()
	var out []thread.MemoryBlock
	for rows.Next() {
		var b thread.MemoryBlock
		if err := rows.Scan(&b.Label, &b.Content, &b.UpdatedAt); err != nil {
			return nil, fmt.Errorf("memory blocks: %w", translate(err))
		}
		out = append(out, b)
	}
	return out, translate(rows.Err())
}

// SaveMemory creates or replaces one of an agent's memory blocks.
func (q *Queries) SaveMemory(ctx context.Context, agentName, label, content string) error {
	_, err := q.db.Exec(ctx, `INSERT INTO memory_blocks (agent_name, label, content) VALUES ($1, $2, $3)
		ON CONFLICT (agent_name, label) DO UPDATE SET content = excluded.content, updated_at = now()`,
		agentName, label, content)
	if err != nil {
		return fmt.Errorf("save memory: %w", translate(err))
	}
	return nil
}
