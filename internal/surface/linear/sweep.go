package linear

import (
	"context"
	"time"

	"github.com/weft-dev/weft/internal/processor"
)

// StaleAfter is how long Linear lets a session go without an activity
// before it shows the session as stale.
const StaleAfter = 30 * time.Minute

// Sweep marks stale the sessions Linear itself shows as stale, so that
// weft's view of them matches; the processor runs it with each sweep.
func (a *App) Sweep() processor.Sweep {
	return processor.Sweep{Name: "stale_linear_sessions", Run: func(ctx context.Context) (int64, error) {
		return a.store.MarkStaleLinearSessions(ctx, StaleAfter)
	}}
}
