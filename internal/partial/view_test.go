package partial_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/partial"
	"github.com/weft-dev/weft/internal/thread"
)

func TestView(t *testing.T) {
	t.Parallel()
	var v partial.View
	next := func(p *db.Partial) *partial.Event {
		ev, ok := v.Next(p)
		if !ok {
			return nil
		}
		return &ev
	}
	require.Nil(t, next(nil), "nothing streams, nothing shown")
	require.Equal(t, &partial.Event{AfterSeq: 4, Text: "the"}, next(&db.Partial{AfterSeq: 4, Text: "the", Version: 1}))
	require.Nil(t, next(&db.Partial{AfterSeq: 4, Text: "the", Version: 1}), "unchanged")
	require.Equal(t, &partial.Event{AfterSeq: 4, Text: "the answer"}, next(&db.Partial{AfterSeq: 4, Text: "the answer", Version: 2}))

	v.Sent(&thread.Stitch{Type: thread.StitchToolCall, Seq: 5})
	require.Nil(t, next(&db.Partial{AfterSeq: 4, Text: "the answer", Version: 2}), "a tool call is no outcome")
	v.Sent(&thread.Stitch{Type: thread.StitchLLMCall, Seq: 6})
	require.Equal(t, &partial.Event{End: true, AfterSeq: 4}, next(&db.Partial{AfterSeq: 4, Text: "the answer", Version: 3}),
		"the recorded call voids its partial text, even one written late")
	require.Nil(t, next(nil))

	require.Equal(t, &partial.Event{AfterSeq: 6, Text: "next"}, next(&db.Partial{AfterSeq: 6, Text: "next", Version: 1}))
	require.Equal(t, &partial.Event{End: true, AfterSeq: 6}, next(nil), "a failed call's row is deleted")
}
