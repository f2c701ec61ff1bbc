package slack

import (
	"testing"

	"github.com/stretchr/testify/require"

	slackapi "github.com/weft-dev/weft/internal/slack"
)

func TestSlackChannelMessageNoReplies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		m    slackapi.Message
		want bool
	}{
		{"Alone", slackapi.Message{TS: "1700000000.000100"}, true},
		{"ThreadRoot", slackapi.Message{TS: "1700000000.000100", ThreadTS: "1700000000.000100", ReplyCount: 2}, false},
		{"BroadcastReply", slackapi.Message{TS: "1700000000.000300", ThreadTS: "1700000000.000100", Subtype: "thread_broadcast"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, slackChannelMessage(tc.m).NoReplies)
		})
	}
}
