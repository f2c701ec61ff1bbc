package agent

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/thread"
)

// chain numbers stitches 1..n, as the store would.
func chain(ss ...thread.Stitch) []thread.Stitch {
	for i := range ss {
		ss[i].Seq = int64(i + 1)
	}
	return ss
}

func input(text string) thread.Stitch {
	return thread.Stitch{Type: thread.StitchLinearActivity, Content: text}
}

func call(through int64, text string, calls ...llm.ToolCall) thread.Stitch {
	resp, _ := json.Marshal(recordedResponse{Content: text, ToolCalls: calls})
	return thread.Stitch{Type: thread.StitchLLMCall, Content: text, LLMResponse: resp, Metadata: thread.Meta{AnsweredThrough: through}.JSON()}
}

func result(id, text string) thread.Stitch {
	return thread.Stitch{Type: thread.StitchToolCall, Content: text, Metadata: thread.Meta{ToolCallID: id}.JSON()}
}

var (
	system = thread.Stitch{Type: thread.StitchSystemPrompt, Content: "persona"}
	prompt = thread.Stitch{Type: thread.StitchInitialPrompt, Content: "why is the build red?"}
	tc1    = llm.ToolCall{ID: "c1", Name: "lookup", Arguments: json.RawMessage(`{}`)}
	tc2    = llm.ToolCall{ID: "c2", Name: "lookup", Arguments: json.RawMessage(`{}`)}
)

func TestNextStep(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		chain []thread.Stitch
		kind  stepKind
		calls []string
	}{
		{"NewThreadCallsModel", chain(system, prompt), stepCallLLM, nil},
		{"AnsweredIsDone", chain(system, prompt, call(2, "because")), stepDone, nil},
		{"ToolsPending", chain(system, prompt, call(2, "", tc1, tc2)), stepRunTools, []string{"c1", "c2"}},
		{"OneToolLeft", chain(system, prompt, call(2, "", tc1, tc2), result("c1", "x")), stepRunTools, []string{"c2"}},
		{"ToolsDoneCallsModel", chain(system, prompt, call(2, "", tc1), result("c1", "x")), stepCallLLM, nil},
		{"InputDuringCallIsAnsweredNext", chain(system, prompt, input("also this"), call(2, "because")), stepCallLLM, nil},
		{"QuestionEndsTurn", chain(system, prompt, call(2, "", tc1),
			thread.Stitch{Type: thread.StitchClarificationRequest, Metadata: thread.Meta{ToolCallID: "c1"}.JSON()}), stepDone, nil},
		{"AnswerAfterQuestion", chain(system, prompt, call(2, "", tc1),
			thread.Stitch{Type: thread.StitchClarificationRequest, Metadata: thread.Meta{ToolCallID: "c1"}.JSON()}, input("main")), stepCallLLM, nil},
		{"ErrorSetsInputAside", chain(system, prompt,
			thread.Stitch{Type: thread.StitchError, Metadata: thread.Meta{AnsweredThrough: 2}.JSON()}), stepDone, nil},
		{"StopSetsInputAside", chain(system, prompt, call(2, "", tc1),
			thread.StopEffects(3, "Stopped.").Stitches[0]), stepDone, nil},
		{"InputAfterStop", chain(system, prompt, thread.StopEffects(2, "Stopped.").Stitches[0], input("again")), stepCallLLM, nil},
		{"FailureClosesCalls", chain(system, prompt, call(2, "", tc1),
			thread.Stitch{Type: thread.StitchError, Metadata: thread.Meta{AnsweredThrough: 2}.JSON()}), stepDone, nil},
		{"RefusedPostLeavesToolsToRun", chain(system, prompt, call(2, "checking", tc1, tc2), result("c1", "x"),
			thread.Stitch{Type: thread.StitchError, Metadata: thread.Meta{OutboxID: "o1"}.JSON()}), stepRunTools, []string{"c2"}},
		{"RefusedPostThenModelAgain", chain(system, prompt, call(2, "checking", tc1),
			thread.Stitch{Type: thread.StitchError, Metadata: thread.Meta{OutboxID: "o1"}.JSON()}, result("c1", "x")), stepCallLLM, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := nextStep(tt.chain)
			require.Equal(t, tt.kind, p.kind)
			var ids []string
			for _, c := range p.calls {
				ids = append(ids, c.ID)
			}
			require.Equal(t, tt.calls, ids)
		})
	}
}

func TestStepsSinceInput(t *testing.T) {
	t.Parallel()
	c := chain(system, prompt, call(2, "", tc1), result("c1", "x"), call(4, "", tc2), result("c2", "y"))
	require.Equal(t, 2, nextStep(c).stepsSinceInput)
	c = chain(append(c, input("more"))...)
	require.Equal(t, 0, nextStep(c).stepsSinceInput)
}

func TestConversation(t *testing.T) {
	t.Parallel()
	roles := func(msgs []llm.Message) []llm.Role {
		var out []llm.Role
		for _, m := range msgs {
			out = append(out, m.Role)
		}
		return out
	}

	t.Run("ToolResultsFollowTheirCall", func(t *testing.T) {
		t.Parallel()
		// A message arrived while the tools ran: it goes after their results.
		sys, msgs := conversation(chain(system, prompt, call(2, "checking", tc1, tc2), result("c1", "a"), input("hurry"), result("c2", "b")), nil)
		require.Equal(t, "persona", sys)
		require.Equal(t, []llm.Role{llm.RoleUser, llm.RoleAssistant, llm.RoleTool, llm.RoleTool, llm.RoleUser}, roles(msgs))
		require.Equal(t, "c1", msgs[2].ToolCallID)
		require.Equal(t, "c2", msgs[3].ToolCallID)
		require.Equal(t, "hurry", msgs[4].Content)
	})

	t.Run("InputDuringACallFollowsItsAnswer", func(t *testing.T) {
		t.Parallel()
		// "also this" was appended while the model answered the prompt.
		_, msgs := conversation(chain(system, prompt, input("also this"), call(2, "because"), input("thanks")), nil)
		require.Equal(t, []llm.Role{llm.RoleUser, llm.RoleAssistant, llm.RoleUser, llm.RoleUser}, roles(msgs))
		require.Equal(t, "because", msgs[1].Content)
		require.Equal(t, "also this", msgs[2].Content)
		require.Equal(t, "thanks", msgs[3].Content)
	})

	t.Run("InputDuringACallThatAskedForToolsFollowsTheirResults", func(t *testing.T) {
		t.Parallel()
		_, msgs := conversation(chain(system, prompt, input("hurry"), call(2, "", tc1), result("c1", "a")), nil)
		require.Equal(t, []llm.Role{llm.RoleUser, llm.RoleAssistant, llm.RoleTool, llm.RoleUser}, roles(msgs))
		require.Equal(t, "hurry", msgs[3].Content)
	})

	t.Run("ToolImagesTravelWithTheirResult", func(t *testing.T) {
		t.Parallel()
		// The pictures a tool returned are read back from its stitch,
		// with their bytes, for every later model call.
		png := []byte("\x89PNG")
		withImage := thread.Stitch{Type: thread.StitchToolCall, Content: "[image image/png, 4 bytes, attached]",
			Metadata: thread.Meta{ToolCallID: "c1", Images: []thread.Image{{MediaType: "image/png", Data: png}}}.JSON()}
		_, msgs := conversation(chain(system, prompt, call(2, "", tc1), withImage), nil)
		require.Equal(t, []llm.Role{llm.RoleUser, llm.RoleAssistant, llm.RoleTool}, roles(msgs))
		require.Equal(t, []llm.Image{{MediaType: "image/png", Data: png, Size: 4}}, msgs[2].Images)
	})

	t.Run("InterruptedCallsGetAResult", func(t *testing.T) {
		t.Parallel()
		_, msgs := conversation(chain(system, prompt, call(2, "", tc1), thread.StopEffects(3, "Stopped.").Stitches[0], input("again")), nil)
		require.Equal(t, []llm.Role{llm.RoleUser, llm.RoleAssistant, llm.RoleTool, llm.RoleUser}, roles(msgs))
		require.Equal(t, interruptedResult, msgs[2].Content)
	})

	t.Run("ACallCutShortByAStopHasAnUnknownOutcome", func(t *testing.T) {
		t.Parallel()
		// The thread was aborted while a write ran (its intent recorded,
		// its result never), then someone wrote again: the model reads
		// that the call may have taken effect, not that it never ran.
		intent := thread.Stitch{Type: thread.StitchToolCall, Content: "calling lookup",
			Metadata: thread.Meta{IntentOf: "c1"}.JSON()}
		_, msgs := conversation(chain(system, prompt, call(2, "", tc1, tc2), intent, thread.StopEffects(4, "Stopped.").Stitches[0], input("again")), nil)
		require.Equal(t, []llm.Role{llm.RoleUser, llm.RoleAssistant, llm.RoleTool, llm.RoleTool, llm.RoleUser}, roles(msgs))
		require.Equal(t, cutShortResult, msgs[2].Content)
		require.Equal(t, interruptedResult, msgs[3].Content, "a call never begun was interrupted before it ran")
	})

	t.Run("DiscordAuthorsEditsAndDeletes", func(t *testing.T) {
		t.Parallel()
		bob := &thread.Author{Name: "bob"}
		msg := thread.Stitch{Type: thread.StitchDiscordMessage, Content: "hi", Author: &thread.Author{Name: "alice"}}
		edited := thread.Stitch{Type: thread.StitchDiscordMessage, Content: "the build is green now", Author: bob, EditedAt: time.Unix(100, 0)}
		gone := thread.Stitch{Type: thread.StitchDiscordMessage, Content: "oops", Author: bob, DeletedAt: time.Unix(200, 0)}
		_, msgs := conversation(chain(system, msg, edited, gone), nil)
		require.Equal(t, []string{"alice: hi", "bob: the build is green now [edited]", "bob: [this message was deleted]"},
			[]string{msgs[0].Content, msgs[1].Content, msgs[2].Content})
		require.NotContains(t, msgs[2].Content, "oops", "a deleted message's text is not shown")
	})

	t.Run("FilesJoinTheirMessage", func(t *testing.T) {
		t.Parallel()
		withFile := thread.Stitch{Type: thread.StitchSlackMessage, Content: "look", Author: &thread.Author{Name: "ann"},
			Metadata: thread.Meta{Files: []thread.File{{Name: "a.png"}}}.JSON()}
		gone := withFile
		gone.DeletedAt = time.Unix(200, 0)
		img := llm.Image{MediaType: "image/png", Data: []byte("png")}
		var read []string
		files := func(s *thread.Stitch) (string, []llm.Image) {
			fs := s.Meta().Files
			if len(fs) == 0 {
				return "", nil
			}
			read = append(read, fs[0].Name)
			return "\n[attached image a.png]", []llm.Image{img}
		}
		_, msgs := conversation(chain(system, prompt, call(2, "hi"), withFile, gone), files)
		require.Equal(t, "ann: look\n[attached image a.png]", msgs[2].Content)
		require.Equal(t, []llm.Image{img}, msgs[2].Images)
		require.Equal(t, "ann: [this message was deleted]", msgs[3].Content)
		require.Empty(t, msgs[3].Images)
		require.Equal(t, []string{"a.png"}, read, "a deleted message's files are not read")
	})

	t.Run("RefusedPostIsATypedError", func(t *testing.T) {
		t.Parallel()
		refused := thread.Stitch{Type: thread.StitchError, Content: "Could not post a response to discord: 50035 message too long",
			Metadata: thread.Meta{OutboxID: "0190aa"}.JSON()}
		failed := thread.Stitch{Type: thread.StitchError, Content: "The turn failed.", Metadata: thread.Meta{AnsweredThrough: 2}.JSON()}
		// The refusal arrives while the model's tool runs: it follows the result.
		_, msgs := conversation(chain(system, prompt, call(2, "long answer", tc1), refused, result("c1", "a"), failed), nil)
		require.Equal(t, []llm.Role{llm.RoleUser, llm.RoleAssistant, llm.RoleTool, llm.RoleUser}, roles(msgs))
		require.Contains(t, msgs[3].Content, `{"type":"post_refused","outbox_id":"0190aa","detail":"Could not post a response to discord: 50035 message too long"}`)
	})
}
