package kit

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTable(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	tw := NewTable(&out, 50, 99.9, 100)
	tw.Row("reply", Latencies{time.Millisecond, 2 * time.Millisecond}, "p99 ≤ 5ms PASS")
	tw.Row("  of which model", nil, "")
	require.NoError(t, tw.Flush())
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	require.Len(t, lines, 3)
	require.Equal(t, []string{"figure", "samples", "p50", "p99.9", "max", "target"}, strings.Fields(lines[0]))
	require.Equal(t, []string{"reply", "2", "1.00ms", "2.00ms", "2.00ms", "p99", "≤", "5ms", "PASS"}, strings.Fields(lines[1]))
	require.Equal(t, []string{"of", "which", "model", "0", "0.00ms", "0.00ms", "0.00ms"}, strings.Fields(lines[2]))
}

func TestPace(t *testing.T) {
	t.Parallel()
	var calls []int
	_, err := Pace(t.Context(), 1_000_000, 5, func(i int) error {
		calls = append(calls, i)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, []int{0, 1, 2, 3, 4}, calls)

	stop := bytes.ErrTooLarge
	_, err = Pace(t.Context(), 1_000_000, 5, func(i int) error {
		if i == 2 {
			return stop
		}
		return nil
	})
	require.ErrorIs(t, err, stop, "a failed send ends the run")
}
