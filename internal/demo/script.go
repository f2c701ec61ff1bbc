package demo

import (
	"encoding/json"
	"fmt"
	"regexp"
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
		// The only tool the script calls is save_memory; after its result,
		// the Linear answer.
		return llmtest.Reply{Text: scriptResponse}
	}
	text := last.Content
	switch {
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

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
