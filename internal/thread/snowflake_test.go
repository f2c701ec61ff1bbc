package thread_test

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/thread"
)

func TestIsSnowflake(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{"80351110224678912", true},
		{"1234567890123456789", true},
		{"12345678901234567890", true},
		{"1234567890123456", false},
		{"123456789012345678901", false},
		{"12345678901234567a", false},
		{"", false},
		{"-1234567890123456789", false},
		{"+1234567890123456789", false},
		{"99999999999999999999", false}, // above 2^64
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, thread.IsSnowflake(tt.in), tt.in)
	}
}

func TestSnowflakeTime(t *testing.T) {
	t.Parallel()
	// Discord's documentation example: 175928847299117063 was made at
	// 2016-04-30 11:18:25.796 UTC.
	require.Equal(t, time.Date(2016, 4, 30, 11, 18, 25, 796e6, time.UTC), thread.SnowflakeTime("175928847299117063").UTC())
	require.True(t, thread.SnowflakeTime("general").IsZero())
	at := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)
	require.Equal(t, at, thread.SnowflakeTime(strconv.FormatUint(thread.SnowflakeAt(at)|42, 10)).UTC(), "the sequence bits do not move the time")
}

func TestCompareSnowflakes(t *testing.T) {
	t.Parallel()
	ids := []string{"175928847299117063", "99999999999999999", "175928847299117062", "1175928847299117062"}
	slices.SortFunc(ids, thread.CompareSnowflakes)
	require.Equal(t, []string{"99999999999999999", "175928847299117062", "175928847299117063", "1175928847299117062"}, ids)
	require.Zero(t, thread.CompareSnowflakes(ids[1], ids[1]))
}
