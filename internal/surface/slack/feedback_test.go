package slack

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/logtest"
	slackapi "github.com/weft-dev/weft/internal/slack"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
)

// answering records events and answers with res.
type answering struct {
	res surface.Recorded
	got []surface.Event
}

func (a *answering) Record(_ context.Context, ev surface.Event) (surface.Recorded, error) {
	a.got = append(a.got, ev)
	return a.res, nil
}

// TestFeedbackCountsWhatWasStored: a click is recorded as a feedback
// stitch of the answer's thread, keyed by the click; it is counted only
// when stored (not for a redelivery, nor in a thread weft does not hold);
// a value other than the buttons' records nothing.
func TestFeedbackCountsWhatWasStored(t *testing.T) {
	t.Parallel()
	click := Action{TeamID: "T1", UserID: "U1", UserName: "ada", ChannelID: "C1", MessageTS: "2.000002", ThreadTS: "1.000001",
		ActionID: slackapi.FeedbackActionID, BlockID: slackapi.FeedbackBlockPrefix + "row-1", Value: slackapi.FeedbackPositive, ActionTS: "3.000003"}
	tests := []struct {
		name    string
		res     surface.Recorded
		value   string
		records int
		counted float64
	}{
		{"stored", surface.Recorded{ThreadID: uuid.New(), Added: 1}, slackapi.FeedbackPositive, 1, 1},
		{"redelivered", surface.Recorded{Duplicate: true}, slackapi.FeedbackPositive, 1, 0},
		{"not weft's thread", surface.Recorded{Ignored: true}, slackapi.FeedbackPositive, 1, 0},
		{"unknown value", surface.Recorded{Added: 1}, "meh", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := &answering{res: tt.res}
			counter := newFeedbackCounter()
			a := click
			a.Value = tt.value
			require.NoError(t, feedback(rec, nil, counter, logtest.New(t))(t.Context(), a))
			require.Len(t, rec.got, tt.records)
			require.Equal(t, tt.counted, count(t, counter, tt.value))
			if tt.records == 0 {
				return
			}
			ev := rec.got[0]
			require.Equal(t, surface.Message, ev.Kind)
			require.False(t, ev.Answer, "feedback starts no turn")
			require.False(t, ev.Opens, "feedback opens no thread")
			require.Equal(t, &thread.SlackAttachment{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.000001"}, ev.Conversation)
			require.Equal(t, "feedback:T1:C1:2.000002:U1:3.000003", ev.Inbound.DeliveryID)
			require.Len(t, ev.Messages, 1)
			s := ev.Messages[0]
			require.Equal(t, thread.StitchFeedback, s.Type)
			require.Equal(t, ev.Inbound.DeliveryID, s.ExternalID)
			require.Equal(t, &thread.Author{ID: "U1", Name: "ada"}, s.Author)
			require.JSONEq(t, `{"feedback":"positive","outbox_id":"row-1","message_ts":"2.000002"}`, string(s.Metadata))
		})
	}
}

// count is the counter's value for slack and value.
func count(t *testing.T, c *prometheus.CounterVec, value string) float64 {
	t.Helper()
	var m dto.Metric
	require.NoError(t, c.WithLabelValues("slack", value).Write(&m))
	return m.GetCounter().GetValue()
}
