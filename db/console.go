package db

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db/internal/dbsqlc"
	"github.com/weft-dev/weft/internal/thread"
)

// The console's queries: the operator pages read threads with what ops
// needs to see at a glance, timelines without the bulky LLM bodies, and
// the ledger, outbox and usage for the ops pages.

// ConsoleFilter selects threads for the console's list. Zero fields do not
// filter.
type ConsoleFilter struct {
	Status   thread.Status
	Type     thread.Type
	Platform thread.Platform // discord or linear: threads attached there
	// Stuck keeps only threads that should be moving and are not (see
	// ConsoleThread).
	Stuck bool
	// Search matches, case-insensitively, the text of one of a thread's
	// stitches (system prompts and deleted messages aside), its initial
	// prompt (the goal) included.
	Search string
	// After continues the listing (newest-updated first) after the thread
	// last seen: keyset paging, so a page deep in the list costs the same
	// as the first.
	AfterUpdated time.Time
	AfterID      uuid.UUID
	Limit        int
	// Grace is how long a thread may sit before it counts as stuck.
	Grace time.Duration
}

// ConsoleThread is a thread as the console lists it.
type ConsoleThread struct {
	thread.Thread
	OnLinear, OnDiscord, OnSlack, OnGitHub bool
	// LeaseLapsed: running, but its turn's lease lapsed (or it has none).
	LeaseLapsed bool
	// Unanswered: input from a person is the newest stitch and no turn
	// has started on it (new input reopens even a finished thread).
	Unanswered bool
	// Stranded: a post to a platform has been due for longer than grace.
	Stranded bool
}

// Stuck reports whether the thread should be moving and is not.
func (t ConsoleThread) Stuck() bool { return t.LeaseLapsed || t.Unanswered || t.Stranded }

// MaxConsolePage bounds one page of the console's thread list.
const MaxConsolePage = 200

// ConsoleThreads lists threads newest-updated first, a page at a time. The
// page is found by the threads_updated_idx (updated_at DESC, thread_id
// DESC) index, an index-only scan of 50 entries however deep the page;
// the stuck conditions are evaluated only for the rows shown, unless Stuck
// filters on them.
func (q *Queries) ConsoleThreads(ctx context.Context, f ConsoleFilter) ([]ConsoleThread, error) {
	if f.Limit <= 0 || f.Limit > MaxConsolePage {
		f.Limit = 50
	}
	arg := dbsqlc.ConsoleThreadsParams{
		GraceMs:      f.Grace.Milliseconds(),
		Status:       nullString(string(f.Status)),
		ThreadType:   nullString(string(f.Type)),
		Platform:     nullString(string(f.Platform)),
		StuckOnly:    f.Stuck,
		AfterUpdated: nullTime(f.AfterUpdated),
		AfterID:      f.AfterID,
		MaxRows:      int32(f.Limit),
	}
	if s := strings.TrimSpace(f.Search); s != "" {
		arg.Search = nullString("%" + escapeLike(s) + "%")
	}
	rows, err := q.gen.ConsoleThreads(ctx, arg)
	out, err := mapAll(rows, err, func(r dbsqlc.ConsoleThreadsRow, err error) (*ConsoleThread, error) {
		t, err := threadOf(r.Thread, err)
		if err != nil {
			return nil, err
		}
		return &ConsoleThread{Thread: *t, OnLinear: r.OnLinear, OnDiscord: r.OnDiscord, OnSlack: r.OnSlack, OnGitHub: r.OnGithub,
			LeaseLapsed: r.LeaseLapsed, Unanswered: r.Unanswered, Stranded: r.Stranded}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("console threads: %w", err)
	}
	return out, nil
}

// ConsoleStitch is a stitch as the timeline shows it: without its LLM
// request and response, which carry the whole conversation each and are
// read one at a time when an operator opens them.
type ConsoleStitch struct {
	thread.Stitch
	HasRequest, HasResponse bool
}

// ConsoleStitches reads up to limit stitches of a thread after position
// after, in chain order.
func (q *Queries) ConsoleStitches(ctx context.Context, threadID uuid.UUID, after int64, limit int) ([]ConsoleStitch, error) {
	rows, err := q.gen.ConsoleStitches(ctx, dbsqlc.ConsoleStitchesParams{ThreadID: threadID, After: after, MaxRows: int32(limit)})
	out, err := mapAll(rows, err, func(r dbsqlc.ConsoleStitchesRow, err error) (*ConsoleStitch, error) {
		s, err := stitchOf(dbsqlc.Stitch{
			StitchID: r.StitchID, ThreadID: r.ThreadID, PreviousStitchID: r.PreviousStitchID, Seq: r.Seq,
			StitchType: r.StitchType, Content: r.Content, Model: r.Model,
			InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, LatencyMs: r.LatencyMs,
			ToolName: r.ToolName, ToolInput: r.ToolInput, ToolOutput: r.ToolOutput, ToolError: r.ToolError,
			Metadata: r.Metadata, SourcePlatform: r.SourcePlatform, ExternalID: r.ExternalID,
			AuthorID: r.AuthorID, AuthorName: r.AuthorName, AuthorIsBot: r.AuthorIsBot,
			EditedAt: r.EditedAt, DeletedAt: r.DeletedAt, CreatedAt: r.CreatedAt,
		}, err)
		if err != nil {
			return nil, err
		}
		return &ConsoleStitch{Stitch: *s, HasRequest: r.HasRequest, HasResponse: r.HasResponse}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("console stitches: %w", err)
	}
	return out, nil
}

// LLMBodies returns the request and response of a thread's LLM call.
func (q *Queries) LLMBodies(ctx context.Context, threadID, stitchID uuid.UUID) (req, resp json.RawMessage, err error) {
	r, err := q.gen.LLMBodies(ctx, dbsqlc.LLMBodiesParams{StitchID: stitchID, ThreadID: threadID})
	if err != nil {
		return nil, nil, fmt.Errorf("llm bodies of %s: %w", stitchID, translate(err))
	}
	return r.LlmRequest, r.LlmResponse, nil
}

// OutboxBacklog lists up to limit posts not yet sent, oldest first.
func (q *Queries) OutboxBacklog(ctx context.Context, limit int) ([]thread.Outbox, error) {
	rows, err := q.gen.OutboxBacklog(ctx, int32(limit))
	out, err := mapAll(rows, err, outboxOf)
	if err != nil {
		return nil, fmt.Errorf("outbox backlog: %w", err)
	}
	return out, nil
}

// Delivery is an inbound delivery as the ledger recorded it.
type Delivery struct {
	Platform   thread.Platform
	DeliveryID string
	EventType  string
	Action     string
	Outcome    thread.InboundOutcome
	ThreadID   uuid.UUID // uuid.Nil when it opened or reached no thread
	ReceivedAt time.Time
}

// RecentDeliveries lists up to limit inbound deliveries, newest first.
func (q *Queries) RecentDeliveries(ctx context.Context, limit int) ([]Delivery, error) {
	rows, err := q.gen.RecentDeliveries(ctx, int32(limit))
	out, err := mapAll(rows, err, func(r dbsqlc.RecentDeliveriesRow, err error) (*Delivery, error) {
		if err != nil {
			return nil, translate(err)
		}
		return &Delivery{Platform: thread.Platform(r.Platform), DeliveryID: r.DeliveryID, EventType: r.EventType,
			Action: str(r.Action), Outcome: thread.InboundOutcome(r.Outcome), ThreadID: uid(r.ThreadID), ReceivedAt: r.ReceivedAt}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("recent deliveries: %w", err)
	}
	return out, nil
}

// LLMUsage is one model's calls on one day.
type LLMUsage struct {
	Day          time.Time
	Model        string
	Calls        int64
	InputTokens  int64
	OutputTokens int64
}

// LLMUsageSince reads the llm_usage_daily view from day since on, by day
// then model.
func (q *Queries) LLMUsageSince(ctx context.Context, since time.Time) ([]LLMUsage, error) {
	rows, err := q.gen.LLMUsageSince(ctx, since)
	out, err := mapAll(rows, err, func(r dbsqlc.LLMUsageSinceRow, err error) (*LLMUsage, error) {
		if err != nil {
			return nil, translate(err)
		}
		u := LLMUsage(r)
		return &u, nil
	})
	if err != nil {
		return nil, fmt.Errorf("llm usage: %w", err)
	}
	return out, nil
}

// WatchStitches registers a LISTEN connection's interest in a thread's new
// stitches: while the row stays, each stitch appended to the thread sends
// a NOTIFY on channel weft_stitch carrying the thread id (see migration
// 00015). It first clears the rows of backends that are gone. The caller
// removes its row with UnwatchStitches.
func (q *Queries) WatchStitches(ctx context.Context, threadID uuid.UUID, pid uint32) error {
	if err := q.gen.WatchStitches(ctx, dbsqlc.WatchStitchesParams{ThreadID: threadID, Pid: int32(pid)}); err != nil {
		return fmt.Errorf("watch stitches of %s: %w", threadID, translate(err))
	}
	return nil
}

// UnwatchStitches removes a WatchStitches row.
func (q *Queries) UnwatchStitches(ctx context.Context, threadID uuid.UUID, pid uint32) error {
	if err := q.gen.UnwatchStitches(ctx, dbsqlc.UnwatchStitchesParams{ThreadID: threadID, Pid: int32(pid)}); err != nil {
		return fmt.Errorf("unwatch stitches of %s: %w", threadID, translate(err))
	}
	return nil
}

// StitchChannel is the NOTIFY channel of new stitches on watched threads.
const StitchChannel = "weft_stitch"
