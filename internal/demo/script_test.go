package demo

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/llm/llmtest"
)

// linearPrompt is the start of a conversation as weft renders a Linear
// mention for the model.
var linearPrompt = llmtest.Message{Role: "user", Content: `<issue identifier="ENG-42">
<title>` + issueTitle + `</title>
</issue>
<primary-directive-thread comment-id="c1">
<comment author="Ada Lovelace">` + mention + `</comment>
</primary-directive-thread>`}

// TestScriptWithout: without the notes tool the model says so rather than
// call it; without the memory in its system prompt, it remembers nothing.
func TestScriptWithout(t *testing.T) {
	t.Parallel()
	reply := script(llmtest.Request{Messages: []llmtest.Message{{Role: "user", Content: askNote}}, Tools: []string{"save_memory"}})
	require.Empty(t, reply.ToolCalls)
	require.Contains(t, reply.Text, "no tool that writes")
	reply = script(llmtest.Request{Messages: []llmtest.Message{{Role: "user", Content: askSlack}}})
	require.Equal(t, scriptForgot, reply.Text)
}

func TestScript(t *testing.T) {
	t.Parallel()
	toolCall := llmtest.Message{Role: "assistant", Content: scriptThought, ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "save_memory"}}}
	answered := []llmtest.Message{linearPrompt, toolCall, {Role: "tool", ToolCallID: "c1", Content: "Saved."}, {Role: "assistant", Content: scriptResponse}}
	tests := []struct {
		name     string
		messages []llmtest.Message
		text     string
		tool     string
	}{
		{"MentionThinksAndActs", []llmtest.Message{linearPrompt}, scriptThought, "save_memory"},
		{"ToolResultAnswers", answered[:3], scriptResponse, ""},
		{"FollowUpRecallsLinear", append(answered, llmtest.Message{Role: "user", Content: "ada: " + askSoFar}),
			"In Linear (ENG-42) you asked: “why does the login redirect drop the return URL?” I found: " + scriptResponse, ""},
		{"FollowUpWithoutHistory", []llmtest.Message{{Role: "user", Content: "ada: " + askSoFar}}, "I cannot see what was said in Linear.", ""},
		{"ShipAsksBack", []llmtest.Message{{Role: "user", Content: "ada: " + askShip}}, "", "ask_user"},
		{"AnswerGoesOn", []llmtest.Message{{Role: "user", Content: "ada: production"}}, "Production it is", ""},
		{"NoteCallsTheTool", []llmtest.Message{{Role: "user", Content: "ada: " + askNote}}, "", notesToolName},
		{"NoteResultSaysWhatItDid", []llmtest.Message{{Role: "user", Content: "ada: " + askNote},
			{Role: "assistant", ToolCalls: []llmtest.ToolCall{{ID: "c2", Name: notesToolName}}},
			{Role: "tool", ToolCallID: "c2", Content: "Wrote note 1."}}, "Done: Wrote note 1.", ""},
		{"SlackRemembers", []llmtest.Message{{Role: "user", Content: askSlack}}, "From what I saved while working on ENG-42: " + scriptMemory, ""},
		{"SlackOneLine", []llmtest.Message{{Role: "user", Content: askSlack}, {Role: "assistant", Content: "From what I saved: it works."},
			{Role: "user", Content: "ada: " + askSlackAgain}}, "In one line: it works.", ""},
		{"SlackOneLineWithoutHistory", []llmtest.Message{{Role: "user", Content: "ada: " + askSlackAgain}}, "I cannot see what I said before.", ""},
		{"AnythingElse", []llmtest.Message{{Role: "user", Content: "hello"}}, "scripted model", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reply := script(llmtest.Request{Messages: tc.messages, Tools: []string{"save_memory", notesToolName},
				System: "<memory>\n" + scriptMemory + "\n</memory>"})
			require.Contains(t, reply.Text, tc.text)
			if tc.tool == "" {
				require.Empty(t, reply.ToolCalls)
				return
			}
			require.Len(t, reply.ToolCalls, 1)
			require.Equal(t, tc.tool, reply.ToolCalls[0].Name)
		})
	}
}
