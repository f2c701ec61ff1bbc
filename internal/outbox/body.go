package outbox

import (
	"encoding/json"
	"fmt"

	"github.com/weft-dev/weft/internal/thread"
)

func mustJSON(b thread.OutboxBody) json.RawMessage {
	out, err := json.Marshal(b)
	if err != nil {
		panic(fmt.Sprintf("outbox: marshal body: %v", err)) // plain strings always marshal
	}
	return out
}

// Body decodes an outbox row's body, for senders.
func Body(o thread.Outbox) (thread.OutboxBody, error) {
	var b thread.OutboxBody
	if err := json.Unmarshal(o.Body, &b); err != nil {
		return b, fmt.Errorf("outbox %s: decode body: %w", o.ID, err)
	}
	return b, nil
}
