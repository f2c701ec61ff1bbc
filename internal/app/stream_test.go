package app

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/logtest"
	surfacelinear "github.com/weft-dev/weft/internal/surface/linear"
)

func TestConfigStream(t *testing.T) {
	t.Parallel()
	all := StreamConfig{Slack: true, Discord: true, Linear: true, Console: true}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    StreamConfig
		wantErr string
	}{
		{name: "Defaults", want: all},
		{name: "On", env: map[string]string{"WEFT_STREAM": "on", "WEFT_STREAM_SLACK": "ON"}, want: all},
		{name: "AllOff", env: map[string]string{"WEFT_STREAM": "off", "WEFT_STREAM_CONSOLE": "on"}, want: StreamConfig{}},
		{name: "OneOff", env: map[string]string{"WEFT_STREAM_DISCORD": "off"}, want: StreamConfig{Slack: true, Linear: true, Console: true}},
		{name: "ConsoleOff", env: map[string]string{"WEFT_STREAM_CONSOLE": "false", "WEFT_STREAM_LINEAR": "0"}, want: StreamConfig{Slack: true, Discord: true}},
		{name: "NotAWord", env: map[string]string{"WEFT_STREAM_SLACK": "sometimes"}, wantErr: `WEFT_STREAM_SLACK: "sometimes" is not on or off`},
		{name: "NotAWordForAll", env: map[string]string{"WEFT_STREAM": "no"}, wantErr: `WEFT_STREAM: "no" is not on or off`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := LoadConfig(func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, cfg.Stream)
		})
	}
}

// TestPartialsFollowTheSwitches gives the runner a sink only for the
// surfaces that stream: with none on (or Linear on but off as a platform),
// model calls stay plain; with the console and Linear both on, each gets
// every answer.
func TestPartialsFollowTheSwitches(t *testing.T) {
	t.Parallel()
	logger := logtest.New(t)
	lin := &surfacelinear.Thoughts{}
	require.Nil(t, partials(StreamConfig{Slack: true, Discord: true, Linear: true}, nil, nil, logger))
	require.Nil(t, partials(StreamConfig{Slack: true, Discord: true}, nil, lin, logger))
	require.NotNil(t, partials(StreamConfig{Console: true}, nil, nil, logger))
	require.Same(t, lin, partials(StreamConfig{Linear: true}, nil, lin, logger))
	both := partials(StreamConfig{Console: true, Linear: true}, nil, lin, logger)
	require.IsType(t, fanOut{}, both)
	require.Len(t, both.(fanOut), 2)
}
