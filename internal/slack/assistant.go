package slack

import (
	"context"
	"fmt"
	"strings"

	goslack "github.com/slack-go/slack"
)

// MaxSuggestedPrompts is how many suggested prompts Slack shows
// (assistant.threads.setSuggestedPrompts takes up to four).
const MaxSuggestedPrompts = 4

// Prompt is one suggested prompt: its title is shown, its message is
// sent as the person's when they pick it.
type Prompt struct {
	Title   string
	Message string
}

// ParsePrompts reads WEFT_SLACK_SUGGESTED_PROMPTS: prompts separated by
// "|", each "title=message" or just a message (its own title). Empty
// ones are skipped; more than MaxSuggestedPrompts is an error.
func ParsePrompts(s string) ([]Prompt, error) {
	var out []Prompt
	for p := range strings.SplitSeq(s, "|") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		title, msg, ok := strings.Cut(p, "=")
		title, msg = strings.TrimSpace(title), strings.TrimSpace(msg)
		if !ok {
			title, msg = p, p
		}
		if title == "" || msg == "" {
			return nil, fmt.Errorf("suggested prompt %q: want title=message", p)
		}
		out = append(out, Prompt{Title: title, Message: msg})
	}
	if len(out) > MaxSuggestedPrompts {
		return nil, fmt.Errorf("%d suggested prompts: Slack shows at most %d", len(out), MaxSuggestedPrompts)
	}
	return out, nil
}

// SetTitle names an assistant thread in the person's history
// (assistant.threads.setTitle).
func (c *Client) SetTitle(ctx context.Context, channel, threadTS, title string) error {
	_, err := read(ctx, c, "assistant.threads.setTitle", func(ctx context.Context) (struct{}, error) {
		return struct{}{}, c.api.SetAssistantThreadsTitleContext(ctx, goslack.AssistantThreadsSetTitleParameters{
			ChannelID: channel, ThreadTS: threadTS, Title: title,
		})
	})
	return err
}

// SetSuggestedPrompts offers prompts (at most MaxSuggestedPrompts) at the
// top of a conversation with the app (assistant.threads.setSuggestedPrompts):
// in an assistant thread when threadTS is set, else in the messages tab
// (the agent view, where Slack ignores a thread_ts). title heads them
// when not empty.
func (c *Client) SetSuggestedPrompts(ctx context.Context, channel, threadTS, title string, prompts []Prompt) error {
	if len(prompts) > MaxSuggestedPrompts {
		prompts = prompts[:MaxSuggestedPrompts]
	}
	p := goslack.AssistantThreadsSetSuggestedPromptsParameters{ChannelID: channel, ThreadTS: threadTS, Title: title}
	for _, pr := range prompts {
		p.AddPrompt(pr.Title, pr.Message)
	}
	_, err := read(ctx, c, "assistant.threads.setSuggestedPrompts", func(ctx context.Context) (struct{}, error) {
		return struct{}{}, c.api.SetAssistantThreadsSuggestedPromptsContext(ctx, p)
	})
	return err
}

// SetStatusLoading sets a thread's status as SetStatus does, with the
// loading messages Slack rotates through in its place (at most 10).
// slack-go sends them joined by commas, so none may contain one: the
// caller's messages are weft's own.
func (c *Client) SetStatusLoading(ctx context.Context, channel, threadTS, status string, loading []string) error {
	if len(loading) > 10 {
		loading = loading[:10]
	}
	_, err := read(ctx, c, "assistant.threads.setStatus", func(ctx context.Context) (struct{}, error) {
		return struct{}{}, c.api.SetAssistantThreadsStatusContext(ctx, goslack.AssistantThreadsSetStatusParameters{
			ChannelID: channel, ThreadTS: threadTS, Status: status, LoadingMessages: loading,
		})
	})
	return err
}
