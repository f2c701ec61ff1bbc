// Package streamer writes answers into a chat platform's messages while
// the model writes them, and keeps each answer one message: it implements
// agent.Partials for a chat platform whose seam folder supplies
// the platform's calls (Platform, Writer). Each answer's messages are
// recorded (db.SaveStream, keyed by the input the answer answers), so a
// model call retried, resumed on another replica after a crash, or made
// after a tool run writes into the message already there; the delivery of
// the answer's outbox row finishes that message (Finisher) rather than
// posting a new one.
package streamer

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/retry"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/throttle"
)

// Store is where answers' messages are recorded. *db.Store implements it.
type Store interface {
	InputSurface(ctx context.Context, threadID uuid.UUID) (thread.Platform, string, error)
	StreamOfCall(ctx context.Context, threadID uuid.UUID, afterSeq int64, platform thread.Platform) (db.Streamed, bool, error)
	BeginStream(ctx context.Context, threadID uuid.UUID, platform thread.Platform, s db.Streamed, afterSeq int64) (bool, error)
	SaveStream(ctx context.Context, threadID uuid.UUID, platform thread.Platform, s db.Streamed) (bool, error)
	DropStream(ctx context.Context, threadID uuid.UUID, platform thread.Platform, answerSeq int64) error
	ClaimStream(ctx context.Context, o thread.Outbox, pending time.Duration) (db.Streamed, db.Claim, error)
}

// Pending is how long a delivery waits for an answer's message that is
// being created (the streamer's first platform call is in flight, on this
// replica or another) before it posts on its own.
const Pending = 10 * time.Second

// claimPoll is how often a waiting delivery looks again.
const claimPoll = 50 * time.Millisecond

// Platform is a chat platform's side of streaming.
type Platform interface {
	Name() thread.Platform
	// Begin prepares to write one answer into target: rec holds the
	// answer's open messages (rec.MessageIDs empty: none yet) and who
	// asked. A nil Writer (and nil error) streams nothing there.
	Begin(ctx context.Context, target string, rec db.Streamed) (Writer, error)
}

// Writer writes one answer's text into its messages.
type Writer interface {
	// Write shows text, the whole answer so far (it grows, or starts
	// over). It reports whether the answer's messages or mode changed,
	// to be recorded (Messages) before the next write.
	Write(ctx context.Context, text string) (changed bool, err error)
	// Messages are the answer's messages and mode as they stand.
	Messages() (ids []string, mode string)
	// Pause is the least time before the next Write.
	Pause() time.Duration
	// Abandon ends what needs ending when the turn was cancelled and no
	// delivery will finish the message (e.g. stop a platform-side stream).
	Abandon(ctx context.Context)
}

// Deps is what a Streamer needs.
type Deps struct {
	Store    Store
	Platform Platform
	Logger   *slog.Logger
}

// Streamer is an agent.Partials for one platform.
type Streamer struct {
	d Deps

	mu     sync.Mutex
	active map[key]*answer // answers writing on this replica
}

var _ agent.Partials = (*Streamer)(nil)

// key names one answer on the platform.
type key struct {
	thread uuid.UUID
	answer int64
}

// New returns a Streamer.
func New(d Deps) *Streamer {
	return &Streamer{d: d, active: map[key]*answer{}}
}

// Open implements agent.Partials.
func (s *Streamer) Open(ctx context.Context, th *thread.Thread, after int64) agent.PartialAnswer {
	a := &answer{s: s, ctx: ctx, threadID: th.ID, after: after}
	a.Latest = throttle.New(a.run)
	return a
}

// answer is one model call's text on the platform. A goroutine, started
// by the first Text, finds the thread's surface and the answer's record,
// then writes the newest text at most once per the Writer's Pause.
type answer struct {
	*throttle.Latest
	s        *Streamer
	ctx      context.Context
	threadID uuid.UUID
	after    int64

	mu    sync.Mutex
	w     Writer // once begun
	k     key
	ended time.Time // when the writes ended; the Writer is kept a while for its delivery
}

// keepEnded is how long an answer whose writes ended stays known to its
// delivery on this replica (which then knows what the message holds).
const keepEnded = time.Minute

func (a *answer) run() {
	w, rec, ok := a.begin()
	if !ok {
		return
	}
	defer a.s.retire(a)
	for {
		if !a.Wait() {
			a.abandon(w)
			return
		}
		if text, dirty := a.Take(); dirty {
			if !a.write(w, &rec, text) {
				return
			}
		}
		if !a.Pause(w.Pause()) {
			a.abandon(w)
			return
		}
	}
}

// begin finds where the answer goes and its record; ok is false when it
// does not stream on this platform.
func (a *answer) begin() (Writer, db.Streamed, bool) {
	s := a.s
	log := s.d.Logger.With(slog.String("thread_id", a.threadID.String()))
	p, target, err := s.d.Store.InputSurface(a.ctx, a.threadID)
	if err != nil || p != s.d.Platform.Name() || target == "" {
		if err != nil && a.ctx.Err() == nil {
			log.WarnContext(a.ctx, "stream: surface", slog.Any("error", err))
		}
		return nil, db.Streamed{}, false
	}
	rec, ok, err := s.d.Store.StreamOfCall(a.ctx, a.threadID, a.after, p)
	if err != nil || !ok {
		if err != nil && a.ctx.Err() == nil {
			log.WarnContext(a.ctx, "stream: record", slog.Any("error", err))
		}
		return nil, db.Streamed{}, false
	}
	if rec.Target != "" && rec.Target != target {
		rec.MessageIDs, rec.Mode = nil, "" // the answer moved: a new message there
	}
	rec.Target = target
	k := key{thread: a.threadID, answer: rec.AnswerSeq}
	// An earlier call of the answer on this replica stops writing first.
	s.mu.Lock()
	prev := s.active[k]
	s.active[k] = a
	for ok, old := range s.active {
		old.mu.Lock()
		stale := !old.ended.IsZero() && time.Since(old.ended) > keepEnded
		old.mu.Unlock()
		if stale {
			delete(s.active, ok)
		}
	}
	s.mu.Unlock()
	if prev != nil && prev != a {
		prev.Close()
	}
	a.mu.Lock()
	a.k = k
	a.mu.Unlock()
	if a.Closed() {
		s.forget(k, a)
		return nil, db.Streamed{}, false
	}
	w, err := s.d.Platform.Begin(a.ctx, target, rec)
	if err != nil || w == nil {
		if err != nil && a.ctx.Err() == nil {
			log.WarnContext(a.ctx, "stream: begin", slog.Any("error", err))
		}
		s.forget(k, a)
		return nil, db.Streamed{}, false
	}
	a.mu.Lock()
	a.w = w
	a.mu.Unlock()
	return w, rec, true
}

// write shows text and records the messages when they changed; false
// ends the answer's writes (a failure, or a delivery finished it).
func (a *answer) write(w Writer, rec *db.Streamed, text string) bool {
	s := a.s
	name := s.d.Platform.Name()
	log := s.d.Logger.With(slog.String("thread_id", a.threadID.String()), slog.String("platform", string(name)))
	dbctx := context.WithoutCancel(a.ctx)
	fresh := len(rec.MessageIDs) == 0
	if fresh {
		// Recorded before the message is made, so that the answer's
		// delivery waits for it rather than post a second one; not made
		// once the call's outcome is recorded (the delivery posts).
		rec.Mode = db.StreamEdit
		begun, err := s.d.Store.BeginStream(dbctx, a.threadID, name, *rec, a.after)
		if err != nil {
			log.WarnContext(a.ctx, "stream: begin", slog.Any("error", err))
			return false
		}
		if !begun {
			return false
		}
	}
	changed, err := w.Write(a.ctx, text)
	if changed {
		// Recorded even after a failed write: a message may exist now.
		rec.MessageIDs, rec.Mode = w.Messages()
		if len(rec.MessageIDs) > 0 {
			saved, serr := s.d.Store.SaveStream(dbctx, a.threadID, name, *rec)
			if serr != nil {
				log.WarnContext(a.ctx, "stream: save", slog.Any("error", serr))
				return false
			}
			if !saved {
				return false // a delivery finished the message meanwhile
			}
		}
	}
	if fresh && len(rec.MessageIDs) == 0 {
		// No message was made: its delivery need not wait for one.
		if derr := s.d.Store.DropStream(dbctx, a.threadID, name, rec.AnswerSeq); derr != nil {
			log.WarnContext(a.ctx, "stream: drop", slog.Any("error", derr))
		}
		if err == nil {
			return true // nothing to show yet
		}
	}
	if err != nil {
		if a.ctx.Err() != nil {
			return false
		}
		if d := retry.Hint(err); d > 0 && surface.IsKind(err, surface.KindRateLimited) && len(rec.MessageIDs) > 0 {
			// The platform asked to wait: the next write, later,
			// carries more text.
			a.Again()
			return a.Pause(d)
		}
		// Streaming is a courtesy: the answer is posted all the same.
		log.WarnContext(a.ctx, "stream: write", slog.Any("error", err))
		return false
	}
	return true
}

// abandon ends a message no delivery will finish: the turn was cancelled.
func (a *answer) abandon(w Writer) {
	if a.ctx.Err() == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(a.ctx), 5*time.Second)
	defer cancel()
	w.Abandon(ctx)
}

// retire notes that a's writes ended; its Writer stays known a while.
func (s *Streamer) retire(a *answer) {
	a.mu.Lock()
	a.ended = time.Now()
	a.mu.Unlock()
}

// forget drops a's registration under k.
func (s *Streamer) forget(k key, a *answer) {
	s.mu.Lock()
	if s.active[k] == a {
		delete(s.active, k)
	}
	s.mu.Unlock()
}

// Quiesce stops this replica's writes into the answer's messages, if it
// has any, and returns the Writer that made them (nil if none): a
// delivery about to finish the messages calls it so that no write of
// partial text lands after the final one.
func (s *Streamer) Quiesce(threadID uuid.UUID, answerSeq int64) Writer {
	s.mu.Lock()
	a := s.active[key{thread: threadID, answer: answerSeq}]
	s.mu.Unlock()
	if a == nil {
		return nil
	}
	a.Close()
	s.forget(key{thread: threadID, answer: answerSeq}, a)
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.w
}

// Claim finds the streamed messages outbox row o finishes, marking them
// finished by o, and stops this replica's writes into them; ok is false
// when o's answer has no message on its target (post o as usual). A
// message being created is waited for (Pending at most). w is the Writer
// that wrote them on this replica, nil when another replica did (or one
// that died).
func (s *Streamer) Claim(ctx context.Context, o thread.Outbox) (rec db.Streamed, w Writer, ok bool, err error) {
	for waited := false; ; waited = true {
		rec, claim, err := s.d.Store.ClaimStream(ctx, o, Pending)
		switch {
		case err != nil:
			return db.Streamed{}, nil, false, err
		case claim == db.NotStreamed:
			return db.Streamed{}, nil, false, nil
		case claim == db.Claimed:
			return rec, s.Quiesce(o.ThreadID, rec.AnswerSeq), true, nil
		}
		if !waited && s.Quiesce(o.ThreadID, rec.AnswerSeq) != nil {
			continue // this replica's streamer made its message, or gave up
		}
		if err := retry.Sleep(ctx, claimPoll); err != nil {
			return db.Streamed{}, nil, false, err
		}
	}
}

// Finish finishes the streamed messages rec of an answer with its outbox
// row o; w is the Writer that wrote them on this replica, nil when another
// replica did.
type Finish func(ctx context.Context, o thread.Outbox, rec db.Streamed, w Writer) (string, error)

// Sender is a streaming platform's surface.Sender: an outbox row whose
// answer has streamed messages finishes them (finish) instead of posting
// anew; any other is posted by plain.
func (s *Streamer) Sender(plain surface.Sender, finish Finish) surface.Sender {
	return sender{s: s, plain: plain, finish: finish}
}

type sender struct {
	s      *Streamer
	plain  surface.Sender
	finish Finish
}

// Send implements surface.Sender.
func (s sender) Send(ctx context.Context, o thread.Outbox) (string, error) {
	rec, w, ok, err := s.s.Claim(ctx, o)
	if err != nil {
		return "", err // the database: retried
	}
	if !ok {
		return s.plain.Send(ctx, o)
	}
	return s.finish(ctx, o, rec, w)
}
