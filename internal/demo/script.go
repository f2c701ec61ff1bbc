package demo

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/weft-dev/weft/internal/llm/llmtest"
)

// ScriptedModel is the model name the scripted model answers as; it is
// what the llm_call stitches record.
const ScriptedModel = "weft-demo-script"

// The story's lines. The scripted model recognises them; a real model reads
// them as any request, which is why each says what it wants.
const (
	issueKey   = "ENG-42"
	issueTitle = "Login redirect loses the return URL"
	issueText  = "After signing in through SSO, people land on the dashboard instead of the page they came from."
	mention    = "@weft why does the login redirect drop the return URL? " +
		"Save what you learn about our auth redirects to memory for next time."
	askSoFar  = "What did we find in Linear so far?"
	askShip   = "Good. Ship the fix, but ask me first which environment to deploy it to."
	answerEnv = "staging"
	askNote   = "Add a release note about the fix to our team notes."
	// askSlack follows a mention of weft in Slack; askSlackAgain is the
	// follow-up in the thread weft answered in.
	askSlack      = "how do our auth redirects work?"
	askSlackAgain = "Say that again in one line."
)

// The scripted model's own lines.
const (
	scriptThought  = "Let me note how our auth redirects work, so I remember it next time."
	scriptMemory   = "Login redirects go through /auth/callback; return_to must survive the SSO round trip."
	scriptResponse = "The SSO round trip drops `return_to`: /auth/callback rebuilds the redirect from the session, " +
		"which never stored it. Carry `return_to` in the OAuth `state` parameter and read it back in the callback."
	scriptQuestion = "Which environment should I deploy the fix to first?"
)

var scriptOptions = []string{"staging", "production"}

// scriptNote is the release note the scripted model writes with the notes
// MCP server's write_note.
var scriptNote = Note{Title: "Sign-in keeps where you were going",
	Text: "Signing in through SSO now brings people back to the page they came from (ENG-42)."}

// scriptForgot is the Slack answer when the system prompt holds no memory
// of the auth redirects.
const scriptForgot = "I remember nothing about our auth redirects."

// issueRef finds the issue a Linear prompt is about.
var issueRef = regexp.MustCompile(`<issue identifier="([^"]+)">`)

// commentText finds the comment that started a Linear session.
var commentText = regexp.MustCompile(`<comment[^>]*>([^<]*)</comment>`)

// script is the scripted model: it answers each of the story's requests
// from what the request holds, so a step that loses history or context
// shows it in the answer rather than reading a canned line. Anything else
// gets a reply saying what it is.
func script(r llmtest.Request) llmtest.Reply {
	last := r.Last()
	if last.Role == "tool" {
		// After write_note's result, what it did; after save_memory's,
		// the Linear answer.
		if lastToolCall(r) == notesToolName {
			return llmtest.Reply{Text: "Done: " + last.Content}
		}
		return llmtest.Reply{Text: scriptResponse}
	}
	text := last.Content
	switch {
	case strings.Contains(text, askNote):
		if !slices.Contains(r.Tools, notesToolName) {
			return llmtest.Reply{Text: "I have no tool that writes the team's notes."}
		}
		args, _ := json.Marshal(scriptNote)
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: notesToolName, Arguments: string(args)}}}
	case strings.Contains(text, askSlack):
		if !strings.Contains(r.System, scriptMemory) {
			return llmtest.Reply{Text: scriptForgot}
		}
		return llmtest.Reply{Text: "From what I saved while working on " + issueKey + ": " + scriptMemory}
	case strings.Contains(text, askSlackAgain):
		return llmtest.Reply{Text: oneLineAgain(r)}
	case strings.Contains(text, "drop the return URL"):
		args, _ := json.Marshal(map[string]string{"label": "auth_redirects", "content": scriptMemory})
		return llmtest.Reply{Text: scriptThought, ToolCalls: []llmtest.ToolCall{{Name: "save_memory", Arguments: string(args)}}}
	case strings.Contains(text, askSoFar):
		return llmtest.Reply{Text: recall(r)}
	case strings.Contains(text, askShip):
		args, _ := json.Marshal(map[string]any{"question": scriptQuestion, "options": scriptOptions})
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "ask_user", Arguments: string(args)}}}
	case strings.HasSuffix(text, answerEnv) || strings.HasSuffix(text, "production"):
		env := text[strings.LastIndex(text, " ")+1:]
		return llmtest.Reply{Text: fmt.Sprintf("%s it is: the `return_to` fix goes to %s first, "+
			"and on to the next environment once sign-in through SSO lands people where they started.", capitalize(env), env)}
	}
	return llmtest.Reply{Text: "I am weft demo's scripted model and only know its story; " +
		"set WEFT_LLM_PROVIDER to talk to a real model."}
}

// recall answers "what did we find so far" from the conversation the
// request carries: the Linear session's question and the answer to it.
// Without them in the request it says it sees nothing, as a model would.
func recall(r llmtest.Request) string {
	var question, issue, answer string
	for _, m := range r.Messages {
		if m.Role == "user" && question == "" {
			if c := commentText.FindStringSubmatch(m.Content); c != nil {
				question = strings.TrimSpace(strings.TrimPrefix(c[1], "@weft"))
				if i := strings.Index(question, "?"); i >= 0 {
					question = question[:i+1]
				}
			}
			if i := issueRef.FindStringSubmatch(m.Content); i != nil {
				issue = i[1]
			}
		}
		if m.Role == "assistant" && len(m.ToolCalls) == 0 && question != "" && answer == "" {
			answer = m.Content
		}
	}
	if question == "" || answer == "" {
		return "I cannot see what was said in Linear."
	}
	return fmt.Sprintf("In Linear (%s) you asked: “%s” I found: %s", issue, question, answer)
}

// lastToolCall is the name of the last tool the request's conversation
// called.
func lastToolCall(r llmtest.Request) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if calls := r.Messages[i].ToolCalls; len(calls) > 0 {
			return calls[len(calls)-1].Name
		}
	}
	return ""
}

// oneLineAgain answers "say that again in one line" from the conversation
// the request carries: weft's last answer, without its preamble. Without
// an earlier answer it says it sees none.
func oneLineAgain(r llmtest.Request) string {
	previous := ""
	for _, m := range r.Messages[:max(len(r.Messages)-1, 0)] {
		if m.Role == "assistant" && len(m.ToolCalls) == 0 && m.Content != "" {
			previous = m.Content
		}
	}
	if previous == "" {
		return "I cannot see what I said before."
	}
	if i := strings.Index(previous, ": "); i >= 0 {
		previous = previous[i+2:]
	}
	return "In one line: " + previous
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
