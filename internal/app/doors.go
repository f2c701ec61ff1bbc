package app

import (
	"context"
	"log/slog"

	"github.com/weft-dev/weft/internal/surface"
)

// doors says, for each door, whether this configuration opens it: what an
// operator reads first when a platform stays silent.
func (a *App) doors() []surface.Door {
	c := a.cfg
	api := surface.Door{Name: "api", Why: "set WEFT_API_TOKEN to serve /api/v1, /mcp and /metrics"}
	if c.APIToken != "" {
		api = surface.Door{Name: "api", On: true, Why: "WEFT_API_TOKEN is set: /api/v1, /mcp and /metrics take it as a bearer token"}
	}

	doors := []surface.Door{api}
	for _, p := range a.platforms {
		doors = append(doors, p.Door())
	}

	model := surface.Door{Name: "model", Why: "set WEFT_LLM_PROVIDER (openai or anthropic): until then every turn records an error"}
	switch {
	case c.Role == "api":
		model.Why = "WEFT_ROLE=api works no turns"
	case c.LLMProvider != "":
		model = surface.Door{Name: "model", On: true, Why: c.LLMProvider + " " + c.Model + ", fast model " + c.FastModel}
	}
	return append(doors, model)
}

// logDoors logs one line per door. A missing model is a warning: weft
// runs, but cannot answer anyone.
func (a *App) logDoors(ctx context.Context) {
	for _, d := range a.doors() {
		level := slog.LevelInfo
		if d.Name == "model" && !d.On && a.cfg.Role != "api" {
			level = slog.LevelWarn
		}
		state := "off"
		if d.On {
			state = "on"
		}
		a.logger.Log(ctx, level, "door "+state, slog.String("door", d.Name), slog.String("why", d.Why))
	}
}
