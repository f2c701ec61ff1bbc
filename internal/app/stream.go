package app

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/partial"
	"github.com/weft-dev/weft/internal/surface"
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

// On reports whether answers stream to platform p.
func (s StreamConfig) On(p thread.Platform) bool {
	switch p {
	case thread.PlatformSlack:
		return s.Slack
	case thread.PlatformDiscord:
		return s.Discord
	case thread.PlatformLinear:
		return s.Linear
	}
	return false
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

// plainSending is a platform whose Sender finishes the messages an answer
// was streamed into, when there are some, and whose PlainSender only posts.
type plainSending interface {
	PlainSender() surface.Sender
}

// sender is p's sender: with streaming to p off, its plain one, which
// spares every delivery the query that looks for streamed messages to
// finish. An answer streamed before a restart that turned streaming off is
// then posted as a message of its own, beside the one it was streamed into.
func sender(p surface.Sending, cfg StreamConfig) surface.Sender {
	if ps, ok := p.(plainSending); ok && !cfg.On(p.Name()) {
		return ps.PlainSender()
	}
	return p.Sender()
}

// streaming is a platform that shows answers as the model writes them: its
// Partials (nil when it is off) stream each model call's text to the
// threads that answer on it, and leave the others alone.
type streaming interface {
	surface.Platform
	Partials() agent.Partials
}

// partials is what the runner streams answers to: the console's and the
// API's watchers, through the database, and every streaming platform that
// cfg leaves on, all at once (fanout); nil when none wants them, so that
// model calls stay plain.
func partials(cfg StreamConfig, store *db.Store, logger *slog.Logger, platforms []surface.Platform) agent.Partials {
	var to fanout
	if cfg.Console {
		to = append(to, partial.New(partial.Deps{Store: store, Logger: logger.With("component", "partial")}))
	}
	for _, p := range platforms {
		s, ok := p.(streaming)
		if !ok || !cfg.On(p.Name()) {
			continue
		}
		if ps := s.Partials(); ps != nil {
			to = append(to, ps)
		}
	}
	switch len(to) {
	case 0:
		return nil
	case 1:
		return to[0]
	}
	return to
}

// fanout hands each model call's text to every Partials in it.
type fanout []agent.Partials

// Open implements agent.Partials.
func (f fanout) Open(ctx context.Context, th *thread.Thread, after int64) agent.PartialAnswer {
	as := make(fanAnswer, len(f))
	for i, p := range f {
		as[i] = p.Open(ctx, th, after)
	}
	return as
}

// fanAnswer is one call's answers, one per Partials.
type fanAnswer []agent.PartialAnswer

// Text implements agent.PartialAnswer; each answer's Text never blocks.
func (as fanAnswer) Text(text string) {
	for _, a := range as {
		a.Text(text)
	}
}

// Close implements agent.PartialAnswer: the answers close at once, each
// waiting only for its own writes.
func (as fanAnswer) Close() {
	var wg sync.WaitGroup
	for _, a := range as {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.Close()
		}()
	}
	wg.Wait()
}
