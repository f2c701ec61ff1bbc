package app

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/logtest"
	"github.com/weft-dev/weft/internal/partial"
	"github.com/weft-dev/weft/internal/surface"
	"github.com/weft-dev/weft/internal/thread"
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

// TestPartialsFanOut gives the runner a sink for each surface switched
// on: none when every one is off (model calls stay plain), the console's
// alone, or a fan-out that hands each call's text to every streaming
// platform left on and closes them all.
func TestPartialsFanOut(t *testing.T) {
	t.Parallel()
	logger := logtest.New(t)
	slack := &streamingPlatform{name: thread.PlatformSlack}
	discord := &streamingPlatform{name: thread.PlatformDiscord}
	platforms := []surface.Platform{slack, discord}
	require.Nil(t, partials(StreamConfig{Linear: true}, nil, logger, platforms), "no surface streams")
	require.Nil(t, partials(StreamConfig{Slack: true}, nil, logger, []surface.Platform{&streamingPlatform{name: thread.PlatformSlack, off: true}}),
		"a platform that is off streams nothing")
	_, isWriter := partials(StreamConfig{Console: true}, nil, logger, platforms).(*partial.Writer)
	require.True(t, isWriter, "the console alone")
	require.Same(t, slack, partials(StreamConfig{Slack: true}, nil, logger, platforms), "Slack alone")

	p := partials(StreamConfig{Slack: true, Discord: true}, nil, logger, platforms)
	a := p.Open(t.Context(), &thread.Thread{}, 7)
	a.Text("Hel")
	a.Text("Hello")
	a.Close()
	for _, sp := range []*streamingPlatform{slack, discord} {
		require.Equal(t, []string{"open 7", "Hel", "Hello", "close"}, sp.seen, sp.name)
	}
}

// streamingPlatform is a platform whose Partials note what they are given.
type streamingPlatform struct {
	name thread.Platform
	off  bool
	seen []string
}

func (p *streamingPlatform) Name() thread.Platform { return p.name }
func (p *streamingPlatform) Door() surface.Door    { return surface.Door{Name: string(p.name), On: true} }
func (p *streamingPlatform) Partials() agent.Partials {
	if p.off {
		return nil
	}
	return p
}
func (p *streamingPlatform) Open(_ context.Context, _ *thread.Thread, after int64) agent.PartialAnswer {
	p.seen = append(p.seen, fmt.Sprintf("open %d", after))
	return p
}
func (p *streamingPlatform) Text(text string) { p.seen = append(p.seen, text) }
func (p *streamingPlatform) Close()           { p.seen = append(p.seen, "close") }

// TestSenderWithStreamingOff: a platform that streams is sent to through
// its plain sender when streaming to it is off, so a delivery looks for no
// streamed message; a platform without one keeps its sender.
func TestSenderWithStreamingOff(t *testing.T) {
	t.Parallel()
	slack := plainSendingPlatform{sendingPlatform{name: thread.PlatformSlack}}
	require.Equal(t, namedSender("streaming"), sender(slack, StreamConfig{Slack: true}))
	require.Equal(t, namedSender("plain"), sender(slack, StreamConfig{Discord: true}))
	linear := sendingPlatform{name: thread.PlatformLinear}
	require.Equal(t, namedSender("streaming"), sender(linear, StreamConfig{}))
}

// sendingPlatform is a platform with a sender.
type sendingPlatform struct{ name thread.Platform }

func (p sendingPlatform) Name() thread.Platform  { return p.name }
func (p sendingPlatform) Door() surface.Door     { return surface.Door{Name: string(p.name), On: true} }
func (p sendingPlatform) Sender() surface.Sender { return namedSender("streaming") }

// plainSendingPlatform has a plain sender as well.
type plainSendingPlatform struct{ sendingPlatform }

func (p plainSendingPlatform) PlainSender() surface.Sender { return namedSender("plain") }

// namedSender is a sender known by its name.
type namedSender string

func (namedSender) Send(context.Context, thread.Outbox) (string, error) { return "", nil }
