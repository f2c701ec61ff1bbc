package discord

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/agent"
	discordapi "github.com/weft-dev/weft/internal/discord"
	"github.com/weft-dev/weft/internal/streamer"
	"github.com/weft-dev/weft/internal/thread"
)

// EditInterval is the least time between two edits of a streamed answer:
// the first words are posted at once, then the message is edited at most
// this often (more text each time), well within the edit route's
// rate-limit bucket (5 a channel every 5 seconds), which discordgo's
// transport keeps besides.
const EditInterval = 1200 * time.Millisecond

// Partials streams answers to the Discord threads they go to; nil with
// Discord off.
func (a *App) Partials() agent.Partials {
	if !a.On() {
		return nil
	}
	return a.streamer
}

// streamPlatform is Discord's side of the streamer.
type streamPlatform struct {
	c        *discordapi.Client
	interval time.Duration
	// writing is when an answer was last written in a channel, which holds
	// the typing indicator back.
	writing sync.Map
}

// newStreamPlatform is Discord's streaming over c; interval 0 means
// EditInterval.
func newStreamPlatform(c *discordapi.Client, interval time.Duration) *streamPlatform {
	if interval <= 0 {
		interval = EditInterval
	}
	return &streamPlatform{c: c, interval: interval}
}

func (p *streamPlatform) Name() thread.Platform { return thread.PlatformDiscord }

// quiet reports an answer written in the channel lately: the typing
// indicator stays off once its first words show.
func (p *streamPlatform) quiet(channelID string) bool {
	at, ok := p.writing.Load(channelID)
	return ok && time.Since(at.(time.Time)) < discordapi.TypingInterval
}

// Begin implements streamer.Platform. The answer's messages, if an
// earlier call made some, are edited; what they hold is not known here.
func (p *streamPlatform) Begin(_ context.Context, target string, rec db.Streamed) (streamer.Writer, error) {
	return &discordWriter{p: p, channel: target, ids: append([]string(nil), rec.MessageIDs...),
		nonce: fmt.Sprintf("stream/%s/%d", target, rec.AnswerSeq)}, nil
}

// discordWriter writes one answer into its Discord messages.
type discordWriter struct {
	p       *streamPlatform
	channel string
	// nonce makes a post of part i that a crash kept from being recorded
	// return the same message when posted again (Discord remembers nonces
	// for a few minutes).
	nonce string
	ids   []string
	sent  []string // what each message holds, as far as this writer knows
}

// Write implements streamer.Writer: each part of the text (cut at 2,000
// characters) goes into its message, edited when it changed; a part past
// the messages is posted. Messages past a text that started over shorter
// keep their text until the answer is delivered, which deletes them.
func (w *discordWriter) Write(ctx context.Context, text string) (bool, error) {
	parts := discordapi.Parts(discordapi.Render(thread.OutboxResponse, thread.OutboxBody{Text: text}))
	changed := false
	for i, part := range parts {
		switch {
		case i < len(w.sent) && w.sent[i] == part:
			continue
		case i < len(w.ids):
			if err := w.p.c.Edit(ctx, w.channel, w.ids[i], part); err != nil {
				return changed, err
			}
		default:
			id, err := w.p.c.SendPart(ctx, w.channel, part, w.nonce, i)
			if err != nil {
				return changed, err
			}
			w.ids, changed = append(w.ids, id), true
		}
		for len(w.sent) <= i {
			w.sent = append(w.sent, "")
		}
		w.sent[i] = part
		w.p.writing.Store(w.channel, time.Now())
	}
	return changed, nil
}

// Messages implements streamer.Writer.
func (w *discordWriter) Messages() ([]string, string) { return w.ids, db.StreamEdit }

// Pause implements streamer.Writer.
func (w *discordWriter) Pause() time.Duration { return w.p.interval }

// Abandon implements streamer.Writer: a Discord message needs no ending.
func (w *discordWriter) Abandon(context.Context) {}

// finish finishes an answer's streamed Discord messages with its outbox
// row, knowing what they show when this replica wrote them.
func (a *App) finish(ctx context.Context, o thread.Outbox, rec db.Streamed, w streamer.Writer) (string, error) {
	var sent []string
	if dw, ok := w.(*discordWriter); ok && len(dw.ids) == len(rec.MessageIDs) {
		sent = dw.sent
	}
	return a.sender.Finish(ctx, o, rec.MessageIDs, sent)
}
