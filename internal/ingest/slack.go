package ingest

import (
	"context"
	"errors"
	"fmt"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tracing"
)

// SlackEvent records one Slack event delivery in one transaction: the
// ledger entry (keyed by Slack's event id, so a retry writes nothing new),
// then what it carries. A message of a tracked Slack thread becomes a
// slack_message stitch and, when it is to be answered, a turn; a mention or
// a direct message in a thread weft does not track opens a weft thread
// attached to it; an edit or delete updates the stitch without a turn. A
// message is keyed by team, channel and ts too, so the two deliveries of one
// mention (app_mention and message, with different event ids) store it once.
// It reports false for a delivery or message recorded before.
func (in *Ingester) SlackEvent(ctx context.Context, e thread.SlackEvent) (fresh bool, err error) {
	if e.Action == thread.SlackMessage {
		e.Message.Source, e.Message.Type = thread.PlatformSlack, thread.StitchSlackMessage
		e.Message.Metadata = tracing.Stamp(ctx, e.Message.Metadata)
	}
	var draft *thread.Draft
	if e.Action == thread.SlackMessage && e.Open {
		// Drafting reads memory through the pool: never inside the
		// transaction (see StartThread).
		prompt := e.Message
		prompt.Type = thread.StitchInitialPrompt
		if draft, err = in.Builder().WithGoal(e.Goal).InteractiveSlack(&e.Thread).WithInitialPrompt(prompt).Draft(ctx); err != nil {
			return false, fmt.Errorf("ingest slack %s: %w", e.EventType, err)
		}
	}
	// Two first messages of one Slack thread can race to open it: the
	// loser finds it tracked on its second try.
	for try := 0; ; try++ {
		fresh, err = in.slackEvent(ctx, e, draft)
		if errors.Is(err, thread.ErrSlackThreadAttached) && try == 0 {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("ingest slack %s: %w", e.EventType, err)
		}
		return fresh, nil
	}
}

func (in *Ingester) slackEvent(ctx context.Context, e thread.SlackEvent, draft *thread.Draft) (fresh bool, err error) {
	err = in.store.InTx(ctx, func(ctx context.Context, tx *db.Tx) error {
		rec := thread.Inbound{Platform: thread.PlatformSlack, DeliveryID: e.EventID, EventType: e.EventType, Action: string(e.Action)}
		var th *thread.Thread
		if e.Action == thread.SlackMessage {
			var err error
			th, err = tx.ThreadBySlackThread(ctx, e.Thread.TeamID, e.Thread.ChannelID, e.Thread.ThreadTS)
			switch {
			case errors.Is(err, thread.ErrNotFound) && !e.Open:
				// Not weft's conversation: ledger only, and without the
				// message's key, which a mention of it must still find free.
				rec.Outcome = thread.InboundIgnored
				fresh, err = tx.RecordInbound(ctx, rec)
				return err
			case err != nil && !errors.Is(err, thread.ErrNotFound):
				return err
			}
			rec.EventKey = e.Message.ExternalID
		}
		if e.Action == thread.SlackIgnore {
			rec.Outcome = thread.InboundIgnored
		}
		var err error
		if fresh, err = tx.RecordInbound(ctx, rec); err != nil || !fresh {
			return err
		}
		switch e.Action {
		case thread.SlackEdit, thread.SlackDelete:
			edit := db.StitchEdit{Content: e.Message.Content, EditedAt: e.At}
			if e.Action == thread.SlackDelete {
				edit = db.StitchEdit{DeletedAt: e.At}
			}
			if _, err := tx.EditStitch(ctx, thread.PlatformSlack, e.Message.ExternalID, edit); err != nil && !errors.Is(err, thread.ErrNotFound) {
				return err
			}
			return nil
		case thread.SlackMessage:
		default:
			return nil
		}
		if th == nil {
			if th, err = tx.CreateThread(ctx, draft); err != nil {
				return err
			}
		} else {
			s := e.Message
			s.ThreadID = th.ID
			if _, err := tx.AppendStitch(ctx, s); err != nil {
				return err
			}
			if !e.Answer {
				return tx.SetInboundThread(ctx, thread.PlatformSlack, e.EventID, th.ID.String())
			}
		}
		if err := tx.SetInboundThread(ctx, thread.PlatformSlack, e.EventID, th.ID.String()); err != nil {
			return err
		}
		return in.enqueueTurn(ctx, tx, th.ID)
	})
	return fresh, err
}
