package agent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/thread"
)

// interruptedResult stands in for the result of a tool call that never got
// one (its turn was stopped or failed), since the providers reject a
// conversation with an unanswered call.
const interruptedResult = "(no result: the turn was interrupted before this tool ran)"

// cutShortResult stands in for the result of a call with side effects
// that was being made when its turn was stopped (an abort cancels the
// call in flight; nothing the turn had not recorded is recorded): its
// intent is recorded and its result never was, so it may have taken
// effect.
const cutShortResult = "error: the outcome of this call is unknown: it was cancelled while it ran, when the thread was stopped. " +
	"It was not made again; check whether it took effect before trying it again."

// conversation turns a chain into the system prompt and messages of an LLM
// request, in the order the providers require: each assistant message that
// called tools is followed by the results of all its calls, and input that
// arrived while tools ran comes after those results. files, when set, reads
// the files a person's message carried: text to add to it and images to
// send with it.
func conversation(chain []thread.Stitch, files func(*thread.Stitch) (string, []llm.Image)) (system string, msgs []llm.Message) {
	var (
		systems  []string
		pending  []string // call ids of the last assistant message still without a result
		intents  = map[string]bool{}
		deferred []llm.Message
	)
	flushPending := func() {
		for _, id := range pending {
			content := interruptedResult
			if intents[id] {
				content = cutShortResult
			}
			msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: id, Content: content})
		}
		pending = nil
		msgs = append(msgs, deferred...)
		deferred = nil
	}
	resolve := func(id, content string, images []llm.Image) {
		for i, p := range pending {
			if p == id {
				msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: id, Content: content, Images: images})
				pending = append(pending[:i], pending[i+1:]...)
				if len(pending) == 0 {
					msgs = append(msgs, deferred...)
					deferred = nil
				}
				return
			}
		}
	}
	user := func(text string, images []llm.Image) {
		m := llm.Message{Role: llm.RoleUser, Content: text, Images: images}
		if len(pending) > 0 {
			deferred = append(deferred, m)
			return
		}
		msgs = append(msgs, m)
	}

	for _, s := range answerOrder(chain) {
		switch t := s.Type; {
		case t == thread.StitchSystemPrompt:
			systems = append(systems, s.Content)
		case t.IsChatMessage():
			user(withFiles(s, asShown(s, withAuthor(s)), files))
		case t.IsInput():
			user(withFiles(s, asShown(s, s.Content), files))
		case t == thread.StitchError:
			// A post the platform refused: the model learns its words did
			// not reach the person, and may say it another way.
			if id := s.Meta().OutboxID; id != "" {
				user(refusedPost(id, s.Content), nil)
			}
		case t == thread.StitchLLMCall:
			flushPending()
			r := responseOf(s)
			msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: r.Content, ToolCalls: r.ToolCalls})
			for _, c := range r.ToolCalls {
				pending = append(pending, c.ID)
			}
		case t == thread.StitchToolCall:
			m := s.Meta()
			if m.IntentOf != "" {
				intents[m.IntentOf] = true
				continue
			}
			resolve(m.ToolCallID, s.Content, toolImages(m.Images))
		case t == thread.StitchClarificationRequest:
			resolve(s.Meta().ToolCallID, "Your question was sent to the user. Their answer follows when they reply.", nil)
		case t == thread.StitchThreadResult:
			resolve(s.Meta().ToolCallID, "The thread was marked complete.", nil)
		}
	}
	flushPending()
	return strings.Join(systems, "\n\n"), msgs
}

// toolImages are the pictures a tool's result carried, for the model.
func toolImages(stored []thread.Image) []llm.Image {
	var out []llm.Image
	for _, img := range stored {
		out = append(out, llm.Image{MediaType: img.MediaType, Data: img.Data, Size: len(img.Data)})
	}
	return out
}

// answerOrder is the chain in the order the conversation happened: an
// input that was appended while the model was answering (after the input
// its call answered through, before the call's stitch) follows that
// answer, as the person saw it. Other stitches keep their places.
func answerOrder(chain []thread.Stitch) []*thread.Stitch {
	out := make([]*thread.Stitch, 0, len(chain))
	var held []*thread.Stitch // inputs not yet placed
	for i := range chain {
		s := &chain[i]
		switch {
		case s.Type.IsInput():
			held = append(held, s)
			continue
		case s.Type == thread.StitchLLMCall:
			through := s.Meta().AnsweredThrough
			n := 0
			for n < len(held) && (through == 0 || held[n].Seq <= through) {
				n++
			}
			out = append(out, held[:n]...)
			held = held[n:]
		}
		out = append(out, s)
	}
	return append(out, held...)
}

// withFiles is a message's text with what files reads of its files, and
// their images; a deleted message's files are not read.
func withFiles(s *thread.Stitch, text string, files func(*thread.Stitch) (string, []llm.Image)) (string, []llm.Image) {
	if files == nil || !s.DeletedAt.IsZero() {
		return text, nil
	}
	more, images := files(s)
	return text + more, images
}

// deletedMessage stands in for a message its author deleted: the model sees
// that something was said and withdrawn, not a silent gap in the exchange.
const deletedMessage = "[this message was deleted]"

// asShown is an input's text as the model sees it: its latest text, marked
// when it was edited, or a placeholder once deleted. text is what the
// message says (with its author, where the platform has one).
func asShown(s *thread.Stitch, text string) string {
	switch {
	case !s.DeletedAt.IsZero():
		if s.Author != nil && s.Author.Name != "" {
			return s.Author.Name + ": " + deletedMessage
		}
		return deletedMessage
	case !s.EditedAt.IsZero():
		return text + " [edited]"
	}
	return text
}

// refusedPost is how a post the platform refused reaches the model: a typed
// error it can act on (rephrase, shorten, say it elsewhere).
func refusedPost(outboxID, detail string) string {
	b, _ := json.Marshal(struct {
		Type     string `json:"type"`
		OutboxID string `json:"outbox_id"`
		Detail   string `json:"detail"`
	}{"post_refused", outboxID, detail}) // a struct of strings always marshals
	return "weft error: one of your posts did not reach the conversation; the person never saw it. " + string(b)
}

func withAuthor(s *thread.Stitch) string {
	if s.Author == nil || s.Author.Name == "" {
		return s.Content
	}
	return fmt.Sprintf("%s: %s", s.Author.Name, s.Content)
}

// recordedRequest is how an llm_call stitch stores what the model was sent.
type recordedRequest struct {
	Model    string        `json:"model"`
	System   string        `json:"system"`
	Messages []llm.Message `json:"messages"`
	Tools    []string      `json:"tools,omitempty"`
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		// Only weft's own plain structs are marshalled here.
		panic(fmt.Sprintf("agent: marshal %T: %v", v, err))
	}
	return b
}
