package thread_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/thread"
)

// A Slack thread is a conversation like a Discord one, not autonomous work.
func TestSystemPromptSlackIsConversational(t *testing.T) {
	t.Parallel()
	d := &thread.Draft{
		Thread: thread.Thread{Goal: "answer the question"},
		Slack:  &thread.SlackAttachment{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.2", CreatedBy: "U1"},
	}
	var m thread.MemoryManager
	got, err := m.SystemPrompt(context.Background(), d)
	require.NoError(t, err)
	require.Contains(t, got, "answering in a Slack thread")
	require.NotContains(t, got, "autonomously")
	require.NotContains(t, got, "complete_thread")
}
