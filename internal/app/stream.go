package app

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/partial"
	surfacelinear "github.com/weft-dev/weft/internal/surface/linear"
	"github.com/weft-dev/weft/internal/thread"
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

// partials is what the runner streams answers to: the console's and the
// API's watchers, through the database, and Linear's sessions, as
// progress thoughts; nil when no surface that can show a streaming answer
// wants one. lin is nil with Linear off.
func partials(cfg StreamConfig, store *db.Store, lin *surfacelinear.Thoughts, logger *slog.Logger) agent.Partials {
	var to fanOut
	if cfg.Console {
		to = append(to, partial.New(partial.Deps{Store: store, Logger: logger.With("component", "partial")}))
	}
	if cfg.Linear && lin != nil {
		to = append(to, lin)
	}
	switch len(to) {
	case 0:
		return nil
	case 1:
		return to[0]
	}
	return to
}

// fanOut streams each answer to every one of its Partials.
type fanOut []agent.Partials

func (f fanOut) Open(ctx context.Context, th *thread.Thread, after int64) agent.PartialAnswer {
	answers := make(fanOutAnswer, len(f))
	for i, p := range f {
		answers[i] = p.Open(ctx, th, after)
	}
	return answers
}

type fanOutAnswer []agent.PartialAnswer

func (f fanOutAnswer) Text(text string) {
	for _, a := range f {
		a.Text(text)
	}
}

func (f fanOutAnswer) Close() {
	for _, a := range f {
		a.Close()
	}
}
