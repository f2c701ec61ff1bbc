package thread_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/thread"
)

func TestParseEchoPolicy(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]thread.EchoPolicy{"everything": thread.EchoEverything, " Answers ": thread.EchoAnswers,
		"SUMMARY": thread.EchoSummary, "none": thread.EchoNone} {
		got, err := thread.ParseEchoPolicy(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got)
	}
	for _, in := range []string{"", "all", "answer", "off"} {
		_, err := thread.ParseEchoPolicy(in)
		require.ErrorIs(t, err, thread.ErrInvalid, in)
	}
}
