package slack

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/agent"
	slackapi "github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/streamer"
	"github.com/weft-dev/weft/internal/thread"
)

// How often a streamed answer is written: appended to Slack's native
// stream at most every StreamInterval (more text each time when the
// workspace's chat.appendStream budget runs low), and, where a channel
// refuses streaming, the posted message updated at most every
// EditInterval, Slack's advice for plain edits of an answer.
const (
	StreamInterval = 250 * time.Millisecond
	EditInterval   = 3 * time.Second
)

// StreamConfig tunes Slack's streaming (tests shorten it).
type StreamConfig struct {
	// Interval and EditInterval: zero means StreamInterval and
	// EditInterval.
	Interval, EditInterval time.Duration
}

// Partials streams answers to the Slack threads they go to; nil with
// Slack off.
func (a *App) Partials() agent.Partials {
	if !a.On() {
		return nil
	}
	return a.streamer
}

// newStreamer builds Slack's streamer over the workspaces' clients.
func newStreamer(ws *slackapi.Workspaces, store *db.Store, cfg StreamConfig, a *App) *streamer.Streamer {
	if cfg.Interval <= 0 {
		cfg.Interval = StreamInterval
	}
	if cfg.EditInterval <= 0 {
		cfg.EditInterval = EditInterval
	}
	return streamer.New(streamer.Deps{Store: store, Logger: a.logger.With("component", "slack_stream"),
		Platform: &streamPlatform{ws: ws, cfg: cfg}})
}

// streamPlatform is Slack's side of the streamer.
type streamPlatform struct {
	ws  *slackapi.Workspaces
	cfg StreamConfig
	// refused are the channels (by team/channel) where Slack refused to
	// stream: answers there are posted and updated from then on.
	refused sync.Map
}

func (p *streamPlatform) Name() thread.Platform { return thread.PlatformSlack }

// Begin implements streamer.Platform. An answer whose message an earlier
// call streamed into (a retry, a crash, a tool run between) has its
// stream stopped, since what it holds is not known here, and is updated
// from then on.
func (p *streamPlatform) Begin(ctx context.Context, target string, rec db.Streamed) (streamer.Writer, error) {
	t, err := thread.ParseSlackTarget(target)
	if err != nil {
		return nil, err
	}
	if rec.AskerID == "" && thread.SlackChannelType(t.ChannelID) != "im" && len(rec.MessageIDs) == 0 {
		return nil, nil // Slack streams outside DMs only to someone who asked
	}
	c, err := p.ws.Client(ctx, t.TeamID)
	if err != nil {
		return nil, err
	}
	w := &slackWriter{p: p, c: c, t: t, asker: rec.AskerID}
	if len(rec.MessageIDs) > 0 {
		w.ts, w.mode = rec.MessageIDs[0], rec.Mode
		if w.mode == db.StreamNative {
			if err := c.StopStream(ctx, t.ChannelID, w.ts, "", "", 0); err != nil && !slackapi.NotStreaming(err) {
				return nil, err
			}
			w.mode, w.moved = db.StreamEdit, true
		}
	}
	return w, nil
}

// slackWriter writes one answer into its Slack message.
type slackWriter struct {
	p     *streamPlatform
	c     *slackapi.Client
	t     thread.SlackTarget
	asker string

	ts, mode string
	sent     string // the message's text, as far as this writer knows
	moved    bool   // the mode changed since the record was saved
}

// shown is what of an answer's text so far its message shows: its first
// part, rendered as the outbox row will be (Render escapes it, so nothing
// in it pings anyone); the rest is posted after it when the answer is
// delivered.
func shown(text string) string {
	parts := slackapi.Split(slackapi.Render(thread.OutboxResponse, thread.OutboxBody{Text: text}), slackapi.TextLimit)
	if len(parts) == 0 {
		return ""
	}
	return parts[0]
}

// Write implements streamer.Writer: the first text starts a stream
// (chat.startStream, to the person who asked), or posts a message where
// Slack refuses to stream; text that grows is appended, text that starts
// over stops the stream and replaces the message's text (chat.update).
func (w *slackWriter) Write(ctx context.Context, text string) (bool, error) {
	changed := w.moved
	w.moved = false
	show := shown(text)
	if show == "" {
		return changed, nil
	}
	ch := w.t.ChannelID
	if w.ts == "" {
		refusal := w.t.TeamID + "/" + ch
		if _, refused := w.p.refused.Load(refusal); !refused {
			ts, err := w.c.StartStream(ctx, slackapi.StreamStart{Channel: ch, ThreadTS: w.t.ThreadTS, Text: show,
				RecipientUserID: w.asker, RecipientTeamID: w.t.TeamID})
			if err == nil {
				w.ts, w.mode, w.sent = ts, db.StreamNative, show
				return true, nil
			}
			if !slackapi.StreamRefused(err) {
				return changed, err
			}
			w.p.refused.Store(refusal, true)
		}
		ts, err := w.c.PostMessage(ctx, slackapi.Post{Channel: ch, ThreadTS: w.t.ThreadTS, Text: show})
		if err != nil {
			return changed, err
		}
		w.ts, w.mode, w.sent = ts, db.StreamEdit, show
		return true, nil
	}
	if w.mode == db.StreamNative {
		if rest, ok := strings.CutPrefix(show, w.sent); ok {
			if rest == "" {
				return changed, nil
			}
			if err := w.c.AppendStream(ctx, ch, w.ts, rest); err != nil {
				return changed, err
			}
			w.sent = show
			return changed, nil
		}
		// The text started over (a retried attempt): a stream only
		// grows, so it stops here and the message is updated instead.
		if err := w.c.StopStream(ctx, ch, w.ts, "", "", 0); err != nil && !slackapi.NotStreaming(err) {
			return changed, err
		}
		w.mode, changed = db.StreamEdit, true
	}
	if show == w.sent {
		return changed, nil
	}
	if err := w.c.Update(ctx, ch, w.ts, show, "", 0); err != nil {
		return changed, err
	}
	w.sent = show
	return changed, nil
}

// Messages implements streamer.Writer.
func (w *slackWriter) Messages() ([]string, string) {
	if w.ts == "" {
		return nil, ""
	}
	return []string{w.ts}, w.mode
}

// Pause implements streamer.Writer.
func (w *slackWriter) Pause() time.Duration {
	if w.mode == db.StreamEdit {
		return w.p.cfg.EditInterval
	}
	return w.p.cfg.Interval
}

// Abandon implements streamer.Writer: a stream of a cancelled turn stops
// as it stands.
func (w *slackWriter) Abandon(ctx context.Context) {
	if w.ts != "" && w.mode == db.StreamNative {
		_ = w.c.StopStream(ctx, w.t.ChannelID, w.ts, "", "", 0)
	}
}

// finish finishes an answer's streamed Slack message with its outbox
// row, knowing what it shows when this replica wrote it.
func (a *App) finish(ctx context.Context, o thread.Outbox, rec db.Streamed, w streamer.Writer) (string, error) {
	m := slackapi.Streamed{TS: rec.MessageIDs[0], Streaming: rec.Mode == db.StreamNative}
	if sw, ok := w.(*slackWriter); ok && sw.ts == m.TS {
		m.Streaming, m.Sent, m.SentKnown = sw.mode == db.StreamNative, sw.sent, true
	}
	return a.sender.Finish(ctx, o, m)
}
