package slack

import (
	"testing"

	"github.com/stretchr/testify/require"

	slackapi "github.com/weft-dev/weft/internal/slack"
)

// TestLoadAssistant: the defaults, "off", a list, and what is refused.
func TestLoadAssistant(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		env      map[string]string
		prompts  []slackapi.Prompt
		feedback bool
		err      bool
	}{
		{name: "defaults", env: nil, prompts: defaultPrompts, feedback: true},
		{name: "off", env: map[string]string{"WEFT_SLACK_SUGGESTED_PROMPTS": "off", "WEFT_SLACK_FEEDBACK": "false"}, feedback: false},
		{name: "a list", env: map[string]string{"WEFT_SLACK_SUGGESTED_PROMPTS": "Deploys=How do I deploy?|What broke?"},
			prompts: []slackapi.Prompt{{Title: "Deploys", Message: "How do I deploy?"}, {Title: "What broke?", Message: "What broke?"}}, feedback: true},
		{name: "five prompts", env: map[string]string{"WEFT_SLACK_SUGGESTED_PROMPTS": "a|b|c|d|e"}, err: true},
		{name: "not a bool", env: map[string]string{"WEFT_SLACK_FEEDBACK": "sometimes"}, err: true},
	}
	for _, tt := range tests {
		a, err := LoadAssistant(func(k string) string { return tt.env[k] })
		if tt.err {
			require.Error(t, err, tt.name)
			continue
		}
		require.NoError(t, err, tt.name)
		require.Equal(t, tt.prompts, a.Prompts, tt.name)
		require.Equal(t, tt.feedback, !a.NoFeedback, tt.name)
	}
}
