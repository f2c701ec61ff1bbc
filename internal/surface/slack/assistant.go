package slack

import (
	"fmt"
	"strconv"
	"strings"

	slackapi "github.com/weft-dev/weft/internal/slack"
)

// Assistant is how weft meets people in Slack's AI app surfaces and under
// its answers.
type Assistant struct {
	// NoFeedback leaves the feedback buttons out from under answers
	// (WEFT_SLACK_FEEDBACK=false); they need interactivity (the
	// /webhooks/slack/interactions request URL, or Socket Mode).
	NoFeedback bool
	// Prompts are the suggested prompts offered as a person opens a
	// conversation with the app (WEFT_SLACK_SUGGESTED_PROMPTS; at most 4;
	// "off" offers none), headed by PromptsTitle
	// (WEFT_SLACK_SUGGESTED_PROMPTS_TITLE).
	Prompts      []slackapi.Prompt
	PromptsTitle string
}

// defaultPrompts are offered when WEFT_SLACK_SUGGESTED_PROMPTS is unset.
var defaultPrompts = []slackapi.Prompt{
	{Title: "What can you do?", Message: "What can you help me with?"},
	{Title: "Catch me up", Message: "What have we talked about recently, and what is still open?"},
}

// LoadAssistant reads the Assistant's variables.
func LoadAssistant(getenv func(string) string) (Assistant, error) {
	var a Assistant
	if v := getenv("WEFT_SLACK_FEEDBACK"); v != "" {
		on, err := strconv.ParseBool(v)
		if err != nil {
			return a, fmt.Errorf("WEFT_SLACK_FEEDBACK: %w", err)
		}
		a.NoFeedback = !on
	}
	switch v := strings.TrimSpace(getenv("WEFT_SLACK_SUGGESTED_PROMPTS")); v {
	case "":
		a.Prompts = defaultPrompts
	case "off":
	default:
		p, err := slackapi.ParsePrompts(v)
		if err != nil {
			return a, fmt.Errorf("WEFT_SLACK_SUGGESTED_PROMPTS: %w", err)
		}
		a.Prompts = p
	}
	a.PromptsTitle = getenv("WEFT_SLACK_SUGGESTED_PROMPTS_TITLE")
	return a, nil
}
