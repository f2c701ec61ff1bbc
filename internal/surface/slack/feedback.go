package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	slackapi "github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

// newFeedbackCounter is weft_feedback_total: clicks on the feedback
// buttons under answers, by platform and value (positive, negative), a
// click Slack delivers twice counted once.
func newFeedbackCounter() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "weft_feedback_total",
		Help: "Feedback on weft's answers (the buttons under them), by platform and value.",
	}, []string{"platform", "value"})
}

// feedbackMeta is what a feedback stitch's metadata says: the rating and
// the answer it rates.
type feedbackMeta struct {
	Feedback  string `json:"feedback"`
	OutboxID  string `json:"outbox_id,omitempty"`
	MessageTS string `json:"message_ts"`
}

// feedbackText is how a rating reads on the console's thread page.
var feedbackText = map[string]string{
	slackapi.FeedbackPositive: "👍 Good answer",
	slackapi.FeedbackNegative: "👎 Bad answer",
}

// feedback records a click on the feedback buttons under one of weft's
// answers as a feedback stitch in the answer's thread (with who clicked,
// by name, and which answer), without a turn, and counts it. The click's
// identity (workspace, channel, message, person, action_ts) keys both the
// ledger and the stitch, so a click Slack sends again writes nothing and
// is not counted again. A click in a thread weft does not hold is
// recorded in the ledger only.
func feedback(rec surface.Recorder, names slackapi.Names, counter *prometheus.CounterVec, logger *slog.Logger) ActionHandler {
	return func(ctx context.Context, a Action) error {
		text, ok := feedbackText[a.Value]
		if !ok {
			logger.InfoContext(ctx, "slack feedback with an unknown value", slog.String("value", a.Value))
			return nil
		}
		threadTS := a.ThreadTS
		if threadTS == "" {
			threadTS = a.MessageTS
		}
		if a.ChannelID == "" || a.MessageTS == "" {
			return fmt.Errorf("%w: feedback without its message", slackapi.ErrMalformed)
		}
		key := strings.Join([]string{"feedback", a.TeamID, a.ChannelID, a.MessageTS, a.UserID, a.ActionTS}, ":")
		name := a.UserName
		if names != nil {
			if n := names.UserName(ctx, a.TeamID, a.UserID); n != "" && (n != a.UserID || name == "") {
				name = n
			}
		}
		if name == "" {
			name = a.UserID
		}
		meta, _ := json.Marshal(feedbackMeta{Feedback: a.Value, OutboxID: strings.TrimPrefix(a.BlockID, slackapi.FeedbackBlockPrefix),
			MessageTS: a.MessageTS})
		at := slackapi.ParseTS(a.ActionTS)
		ev := surface.Event{
			Kind: surface.Message,
			Inbound: thread.Inbound{Platform: thread.PlatformSlack, DeliveryID: key, EventKey: key,
				EventType: "block_actions." + slackapi.FeedbackActionID, Action: "feedback"},
			Conversation: &thread.SlackAttachment{TeamID: a.TeamID, ChannelID: a.ChannelID, ThreadTS: threadTS},
			Messages: []thread.Stitch{{Type: thread.StitchFeedback, Content: text, ExternalID: key,
				Author: &thread.Author{ID: a.UserID, Name: name}, Metadata: meta}},
			At: at,
		}
		res, err := rec.Record(ctx, ev)
		if err != nil {
			return err
		}
		if res.Added > 0 {
			counter.WithLabelValues(string(thread.PlatformSlack), a.Value).Inc()
			logger.InfoContext(ctx, "slack feedback", slog.String("thread_id", res.ThreadID.String()), slog.String("value", a.Value))
		}
		return nil
	}
}
