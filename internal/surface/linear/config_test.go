package linear_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	surfacelinear "github.com/weft-dev/weft/internal/surface/linear"
)

// TestLoadStreamSettings reads the request budget and the thought
// interval, refusing what is not a positive number or duration.
func TestLoadStreamSettings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		env      map[string]string
		budget   int
		interval time.Duration
		wantErr  string
	}{
		{name: "defaults", env: map[string]string{}},
		{name: "set", env: map[string]string{"WEFT_LINEAR_REQUESTS_PER_HOUR": "2500", "WEFT_LINEAR_THOUGHT_INTERVAL": "5s"},
			budget: 2500, interval: 5 * time.Second},
		{name: "budget not a number", env: map[string]string{"WEFT_LINEAR_REQUESTS_PER_HOUR": "lots"}, wantErr: "WEFT_LINEAR_REQUESTS_PER_HOUR"},
		{name: "budget zero", env: map[string]string{"WEFT_LINEAR_REQUESTS_PER_HOUR": "0"}, wantErr: "WEFT_LINEAR_REQUESTS_PER_HOUR"},
		{name: "interval not a duration", env: map[string]string{"WEFT_LINEAR_THOUGHT_INTERVAL": "3"}, wantErr: "WEFT_LINEAR_THOUGHT_INTERVAL"},
		{name: "interval negative", env: map[string]string{"WEFT_LINEAR_THOUGHT_INTERVAL": "-1s"}, wantErr: "WEFT_LINEAR_THOUGHT_INTERVAL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := surfacelinear.Load(func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.budget, c.RequestsPerHour)
			require.Equal(t, tc.interval, c.ThoughtInterval)
		})
	}
}
