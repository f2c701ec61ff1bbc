package slack

import (
	"log/slog"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/discovery"
	"github.com/weft-dev/weft/internal/tools"
)

// Context is what Slack adds to the agent's context: the source of
// relevant thread discovery, and no tools of its own; nothing when Slack
// is off. Slack's discovery asks no fast model itself.
func (a *App) Context(store *db.Store, _ discovery.FastModel, _ *slog.Logger) (discovery.Source, []tools.Tool) {
	if !a.On() {
		return nil, nil
	}
	return a.Discovery(store), nil
}
