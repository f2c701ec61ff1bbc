package app

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/partial"
)

// StreamConfig says where answers show as the model writes them
// (WEFT_STREAM, and WEFT_STREAM_SLACK, _DISCORD, _LINEAR and _CONSOLE per
// surface). Each is on unless set off; WEFT_STREAM=off turns all off.
type StreamConfig struct {
	Slack, Discord, Linear bool
	// Console covers the console's thread page and the API's event stream.
	Console bool
}

// loadStream reads the WEFT_STREAM variables.
func loadStream(getenv func(string) string) (StreamConfig, error) {
	all, err := onOff(getenv, "WEFT_STREAM")
	if err != nil {
		return StreamConfig{}, err
	}
	var s StreamConfig
	for key, on := range map[string]*bool{
		"WEFT_STREAM_SLACK": &s.Slack, "WEFT_STREAM_DISCORD": &s.Discord,
		"WEFT_STREAM_LINEAR": &s.Linear, "WEFT_STREAM_CONSOLE": &s.Console,
	} {
		if *on, err = onOff(getenv, key); err != nil {
			return StreamConfig{}, err
		}
		*on = *on && all
	}
	return s, nil
}

// onOff reads a switch that is on unless set off.
func onOff(getenv func(string) string, key string) (bool, error) {
	switch v := strings.ToLower(strings.TrimSpace(getenv(key))); v {
	case "", "on", "true", "1":
		return true, nil
	case "off", "false", "0":
		return false, nil
	default:
		return false, fmt.Errorf("%s: %q is not on or off", key, v)
	}
}

// partials is what the runner streams answers to: for now the console's
// and the API's watchers, through the database; nil when no surface that
// can show a streaming answer wants one. The platform senders join here
// when they learn to stream.
func partials(cfg StreamConfig, store *db.Store, logger *slog.Logger) agent.Partials {
	if !cfg.Console {
		return nil
	}
	return partial.New(partial.Deps{Store: store, Logger: logger.With("component", "partial")})
}
