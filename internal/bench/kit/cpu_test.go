package kit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseStatCPU(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, stat string
		want       time.Duration
		err        bool
	}{
		{"Plain", "1234 (postgres) S 1 1234 1234 0 -1 4194560 500 0 0 0 250 50 0 0 20 0 1 0 100 0 0", 3 * time.Second, false},
		{"NameWithSpacesAndParens", "42 (weft (x) y) R 1 42 42 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 1 0 0", 100 * time.Millisecond, false},
		{"Short", "42 (weft) R 1 42", 0, true},
		{"NoName", "42 weft R", 0, true},
		{"NotANumber", "42 (weft) R 1 42 42 0 -1 0 0 0 0 0 x 3 0 0", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseStatCPU(tt.stat)
			if tt.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestSampleCPUCountsThisProcess(t *testing.T) {
	t.Parallel()
	before, err := SampleCPU(0)
	require.NoError(t, err)
	// Spin until the kernel has counted a tick of it (10 ms). The process's
	// total is adjusted from its threads' as they run and exit, so a read
	// can come out a tick or so below the one before: wait for it to move
	// up.
	var after CPU
	for deadline := time.Now().Add(10 * time.Second); after.Sub(before).Self <= 0 && time.Now().Before(deadline); {
		after, err = SampleCPU(0)
		require.NoError(t, err)
	}
	d := after.Sub(before)
	require.Positive(t, d.Self)
	require.Zero(t, d.Child, "no child given")
	require.Equal(t, d.Self+d.Postgres, d.Total())
	require.Equal(t, d.Self/2, d.Per(2).Self)
}
