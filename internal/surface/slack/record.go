package slack

import (
	"context"

	slackapi "github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

// recorder is what Slack's events become: each is mapped to a
// surface.Event and recorded through rec.
type recorder struct{ rec surface.Recorder }

var _ slackapi.Recorder = recorder{}

// SlackEvent records one Slack event delivery (once per event id): a
// message of a tracked Slack thread becomes a slack_message stitch and,
// when it is to be answered, a turn; a mention or a direct message in a
// thread weft does not track opens a weft thread attached to it; an edit
// or delete updates the stitch without a turn. A message is keyed by team,
// channel and ts too, so the two deliveries of one mention (app_mention
// and message, with different event ids) store it once. It reports false
// for a delivery or message recorded before.
func (r recorder) SlackEvent(ctx context.Context, e slackapi.Event) (bool, error) {
	res, err := r.rec.Record(ctx, event(e))
	return !res.Duplicate, err
}

// event is e as a surface.Event.
func event(e slackapi.Event) surface.Event {
	ev := surface.Event{Inbound: thread.Inbound{Platform: thread.PlatformSlack, DeliveryID: e.EventID, EventType: e.EventType, Action: string(e.Action)},
		At: e.At}
	switch e.Action {
	case slackapi.ActionMessage:
		att := e.Thread
		m := e.Message
		m.Type = thread.StitchSlackMessage
		prompt := m
		prompt.Type, prompt.Source = thread.StitchInitialPrompt, thread.PlatformSlack
		ev.Kind, ev.Conversation, ev.Messages, ev.Answer = surface.Message, &att, []thread.Stitch{m}, e.Answer
		ev.Opens, ev.Goal, ev.Prompt = e.Open, e.Goal, prompt
		ev.Inbound.EventKey = m.ExternalID
	case slackapi.ActionEdit:
		ev.Kind, ev.Messages = surface.Edit, []thread.Stitch{e.Message}
	case slackapi.ActionDelete:
		ev.Kind, ev.Messages = surface.Delete, []thread.Stitch{e.Message}
	default:
		ev.Kind = surface.Ignore
	}
	return ev
}
