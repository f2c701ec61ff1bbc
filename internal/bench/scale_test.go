package bench

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestScaleLists: -replicas and -rates take comma-separated positive numbers.
func TestScaleLists(t *testing.T) {
	got, err := ints("1, 2,4")
	require.NoError(t, err)
	require.Equal(t, []int{1, 2, 4}, got)
	for _, bad := range []string{"", "1,,2", "0", "-1", "two"} {
		_, err := ints(bad)
		require.Error(t, err, bad)
	}
}
