package discord

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/discovery"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
	"github.com/weft-dev/weft/internal/toolschema"
)

// DiscordSearch serves the Discord search tools, which the model calls when
// it needs recent Discord context ("what did Sarah say about the
// deadline?") rather than having it pre-fetched on every request. Each call
// reads the conversation's Discord thread or the channel it is in, unless
// it names another: a thread weft tracks is read from Postgres (what weft
// stored: people's messages and the bot's own replies, marked as a bot's),
// anything else through the Discord API.
type DiscordSearch struct {
	Reader DiscordReader
	Store  DiscordArchive
	Fast   discovery.FastModel // get_channel_summary; nil makes that tool fail clearly
	// Guilds is DISCORD_ALLOWED_GUILDS: no conversation reads another
	// server; empty allows any the bot is in. Beyond it, a conversation
	// reads only servers of its own organisation (tenancy.Organisations).
	Guilds []string
	Now    func() time.Time // nil: time.Now; tests pin relative times
}

// Tools returns search_channel_messages, search_user_messages,
// get_message_context, search_thread_messages and get_channel_summary.
func (s *DiscordSearch) Tools() []tools.Tool {
	return []tools.Tool{s.searchChannelTool(), s.searchUserTool(), s.messageContextTool(), s.searchThreadTool(), s.channelSummaryTool()}
}

// The search tools' arguments. channelArg and threadArg are the optional
// place a call names instead of the conversation's own.
type (
	channelArg struct {
		ChannelID string `json:"channel_id,omitempty" jsonschema:"Discord channel id to read instead of the channel this conversation is in"`
	}
	threadArg struct {
		ThreadID string `json:"thread_id,omitempty" jsonschema:"Discord thread id to read instead of this conversation's thread"`
	}
	searchChannelArgs struct {
		Query string `json:"query" jsonschema:"Keyword or topic to search for in messages"`
		Limit int    `json:"limit,omitempty" jsonschema:"Max messages to search (default 30, max 100)"`
		channelArg
	}
	searchUserArgs struct {
		UserName string `json:"user_name" jsonschema:"Display name or username to search for (part of it is enough), or a user id"`
		Query    string `json:"query,omitempty" jsonschema:"Optional keyword to filter their messages"`
		Limit    int    `json:"limit,omitempty" jsonschema:"Max messages to return (default 20)"`
		channelArg
	}
	searchThreadArgs struct {
		Query string `json:"query,omitempty" jsonschema:"Optional keyword to filter (returns all if empty)"`
		Limit int    `json:"limit,omitempty" jsonschema:"Max messages to return (default 30, max 100)"`
		threadArg
	}
	messageContextArgs struct {
		MessageID string `json:"message_id" jsonschema:"Discord message ID to get context around"`
		Before    int    `json:"before,omitempty" jsonschema:"Number of messages before (default 5, max 50)"`
		After     int    `json:"after,omitempty" jsonschema:"Number of messages after (default 5, max 50)"`
		channelArg
	}
	channelSummaryArgs struct {
		Timeframe string `json:"timeframe,omitempty" jsonschema:"How far back to summarize: '5 minutes', '15 minutes', '30 minutes', '1 hour' (default) or 'today'"`
		Focus     string `json:"focus,omitempty" jsonschema:"Optional topic to focus the summary on"`
		channelArg
	}
)

func (s *DiscordSearch) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *DiscordSearch) searchChannelTool() tools.Tool {
	return tools.Tool{
		Name: "search_channel_messages",
		Description: "Search recent Discord channel messages for a keyword or topic (case-insensitive substring). " +
			`Use for RECENT channel activity: "what did I say about X?", "what happened earlier about Y?".`,
		Schema: toolschema.For[searchChannelArgs](),
		Handler: func(ctx context.Context, c tools.Call) (string, error) {
			args, err := tools.Decode[searchChannelArgs](c)
			if err != nil {
				return "", err
			}
			if strings.TrimSpace(args.Query) == "" {
				return "", errors.New("query is required")
			}
			msgs, err := s.read(ctx, c, args.ChannelID, false, count(args.Limit, 30, maxScan), user{})
			if err != nil {
				return "", err
			}
			return s.list(msgs, func(m discovery.ChannelMessage) bool { return keywordMatch(m.Text, args.Query) }, maxScan,
				fmt.Sprintf("No messages found matching '%s'", args.Query)), nil
		},
	}
}

func (s *DiscordSearch) searchUserTool() tools.Tool {
	return tools.Tool{
		Name:        "search_user_messages",
		Description: `Find recent messages from a specific person in a Discord channel: "what has Sarah said today?", "find Mark's last message".`,
		Schema:      toolschema.For[searchUserArgs](),
		Handler: func(ctx context.Context, c tools.Call) (string, error) {
			args, err := tools.Decode[searchUserArgs](c)
			if err != nil {
				return "", err
			}
			who := parseUser(args.UserName)
			if who == (user{}) {
				return "", errors.New("user_name is required")
			}
			id, err := s.target(ctx, c, args.ChannelID, false)
			if err != nil {
				return "", err
			}
			src, err := s.open(ctx, c, id, true)
			if err != nil {
				return "", err
			}
			// The origin scans more than it returns to find one person's
			// messages among everyone's: always the full 100.
			msgs, err := s.newest(ctx, src, maxScan, who)
			if err != nil {
				return "", err
			}
			// A name no message's author has is looked up among the
			// server's members, as the origin's find_user_by_name does: a
			// nickname the messages do not show, or someone who has not
			// written lately.
			if who.id == "" && !slices.ContainsFunc(msgs, who.match) {
				member, ok := s.member(ctx, src.guildID, who.name)
				if !ok {
					return fmt.Sprintf("Could not find user '%s'", strings.TrimSpace(args.UserName)), nil
				}
				who = user{id: member.id}
				if src.stored { // the stored read was narrowed to the name
					if msgs, err = s.newest(ctx, src, maxScan, who); err != nil {
						return "", err
					}
				}
			}
			empty := "No messages found from " + strings.TrimSpace(args.UserName)
			if args.Query != "" {
				empty += fmt.Sprintf(" about '%s'", args.Query)
			}
			return s.list(msgs, func(m discovery.ChannelMessage) bool { return who.match(m) && keywordMatch(m.Text, args.Query) },
				count(args.Limit, 20, maxScan), empty), nil
		},
	}
}

func (s *DiscordSearch) searchThreadTool() tools.Tool {
	return tools.Tool{
		Name:        "search_thread_messages",
		Description: `Search within a Discord thread, this conversation's by default: "what was discussed in this thread?". Without a query it lists the latest messages.`,
		Schema:      toolschema.For[searchThreadArgs](),
		Handler: func(ctx context.Context, c tools.Call) (string, error) {
			args, err := tools.Decode[searchThreadArgs](c)
			if err != nil {
				return "", err
			}
			msgs, err := s.read(ctx, c, args.ThreadID, true, count(args.Limit, 30, maxScan), user{})
			if err != nil {
				return "", err
			}
			empty := "No messages found in this thread"
			if args.Query != "" {
				empty = fmt.Sprintf("No messages found matching '%s'", args.Query)
			}
			return s.list(msgs, func(m discovery.ChannelMessage) bool { return keywordMatch(m.Text, args.Query) }, maxScan, empty), nil
		},
	}
}

// read opens what a call names (or its default) and returns up to n of its
// latest messages, newest first.
func (s *DiscordSearch) read(ctx context.Context, c tools.Call, named string, wantThread bool, n int, who user) ([]discovery.ChannelMessage, error) {
	id, err := s.target(ctx, c, named, wantThread)
	if err != nil {
		return nil, err
	}
	src, err := s.open(ctx, c, id, true)
	if err != nil {
		return nil, err
	}
	if wantThread && !src.isThread {
		return nil, errors.New("this tool only works in threads: use search_channel_messages instead")
	}
	return s.newest(ctx, src, n, who)
}

// list formats up to most messages that keep accepts, one per line, or
// says empty.
func (s *DiscordSearch) list(msgs []discovery.ChannelMessage, keep func(discovery.ChannelMessage) bool, most int, empty string) string {
	var lines []string
	for _, m := range msgs {
		if strings.TrimSpace(m.Text) != "" && keep(m) && len(lines) < most {
			lines = append(lines, s.format(m))
		}
	}
	if len(lines) == 0 {
		return empty
	}
	return strings.Join(lines, "\n")
}

func (s *DiscordSearch) messageContextTool() tools.Tool {
	return tools.Tool{
		Name: "get_message_context",
		Description: "Get the Discord messages around a specific message, to see what led up to it and what followed. The message is marked with >>>. " +
			`"Message not found" means it is neither in this conversation's thread nor its channel (name the channel_id it is in), or it was deleted.`,
		Schema: toolschema.For[messageContextArgs](),
		Handler: func(ctx context.Context, c tools.Call) (string, error) {
			args, err := tools.Decode[messageContextArgs](c)
			if err != nil {
				return "", err
			}
			if !thread.IsSnowflake(args.MessageID) {
				return "", fmt.Errorf("%q is not a Discord message id", args.MessageID)
			}
			// Before and after together stay within one call's scan cap.
			before, after := count(args.Before, 5, maxScan/2), count(args.After, 5, maxScan/2)
			older, target, newer, err := s.around(ctx, c, args.MessageID, args.ChannelID, before, after)
			if errors.Is(err, errMessageNotFound) {
				return messageNotFound, nil // the origin's answer, for the model to act on
			}
			if err != nil {
				return "", err
			}
			lines := make([]string, 0, len(older)+1+len(newer))
			for _, m := range older {
				lines = append(lines, "    "+s.format(m))
			}
			lines = append(lines, ">>> "+s.format(target))
			for _, m := range newer {
				lines = append(lines, "    "+s.format(m))
			}
			return strings.Join(lines, "\n"), nil
		},
	}
}

// around returns a message with before older and after newer neighbours,
// both oldest first. A message weft stored is read with its thread's
// stored messages; otherwise Discord is asked, in the channel named, else
// the conversation's thread, then the channel that thread is in.
func (s *DiscordSearch) around(ctx context.Context, c tools.Call, id, named string, before, after int) (older []discovery.ChannelMessage, target discovery.ChannelMessage, newer []discovery.ChannelMessage, err error) {
	att, err := s.attachment(ctx, c)
	if err != nil {
		return nil, target, nil, err
	}
	stored, err := s.Store.StoredDiscordMessage(ctx, id)
	switch {
	case err == nil && stored.DeletedAt.IsZero():
		if err := s.allowed(ctx, c, stored.GuildID); err != nil {
			return nil, target, nil, fmt.Errorf("message %s: %w", id, err)
		}
		q := db.DiscordMessageQuery{DiscordThreadID: stored.DiscordThreadID, Before: id, Limit: before}
		if older, err = s.stored(ctx, q); err != nil {
			return nil, target, nil, err
		}
		slices.Reverse(older)
		q.Before, q.After, q.Limit = "", id, after
		newer, err = s.stored(ctx, q)
		return older, fromStored(*stored), newer, err
	case err == nil:
		return nil, target, nil, fmt.Errorf("message %s was deleted: %w", id, errMessageNotFound)
	case !errors.Is(err, thread.ErrNotFound):
		return nil, target, nil, fmt.Errorf("read stored message %s: %w", id, err)
	}

	places := []string{named}
	if named == "" {
		if att == nil {
			return nil, target, nil, fmt.Errorf("message %s not found: this conversation is not in Discord, name the channel_id it is in", id)
		}
		places = []string{att.DiscordThreadID, att.ChannelID}
	}
	for _, place := range places {
		src, err := s.open(ctx, c, place, false)
		if err != nil {
			return nil, target, nil, err
		}
		target, err = s.Reader.Message(ctx, src.id, id)
		if errors.Is(err, thread.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, target, nil, fmt.Errorf("read Discord message %s: %w", id, err)
		}
		if older, err = s.Reader.MessagesBefore(ctx, src.id, id, before); err != nil {
			return nil, target, nil, fmt.Errorf("read Discord messages before %s: %w", id, err)
		}
		if newer, err = s.Reader.MessagesAfter(ctx, src.id, id, after); err != nil {
			return nil, target, nil, fmt.Errorf("read Discord messages after %s: %w", id, err)
		}
		return older, target, newer, nil
	}
	return nil, target, nil, fmt.Errorf("message %s: %w", id, errMessageNotFound)
}

// errMessageNotFound is a message that is nowhere weft looked, or was
// deleted; get_message_context answers it as the origin does.
var errMessageNotFound = errors.New("message not found")

// messageNotFound is the origin's answer for a message that is not there.
const messageNotFound = "Message not found"

// timeframes maps get_channel_summary's timeframe to how many messages it
// reads, as the origin's timeframe_to_limit does ("today" reads 200, two
// pages), and to a window, so that "1 hour" does not summarize yesterday
// in a channel that has been quiet since. Any other timeframe reads 50.
var timeframes = map[string]struct {
	limit  int
	window time.Duration
}{
	"5 minutes":  {20, 5 * time.Minute},
	"15 minutes": {40, 15 * time.Minute},
	"30 minutes": {60, 30 * time.Minute},
	"1 hour":     {100, time.Hour},
	"today":      {maxToday, 24 * time.Hour},
}

// summarySystem frames the fast model's job.
const summarySystem = "You summarize Discord conversations for an assistant that was not there. Be concise and factual; name who said what when it matters."

func (s *DiscordSearch) channelSummaryTool() tools.Tool {
	return tools.Tool{
		Name: "get_channel_summary",
		Description: `Get a summary of recent activity in a Discord channel: "catch me up on what I missed", "what's been happening here?". ` +
			"It costs a model call; for a specific question prefer the search tools.",
		Schema: toolschema.For[channelSummaryArgs](),
		Handler: func(ctx context.Context, c tools.Call) (string, error) {
			args, err := tools.Decode[channelSummaryArgs](c)
			if err != nil {
				return "", err
			}
			if s.Fast == nil {
				return "", errors.New("no fast model is configured for summaries: use search_channel_messages instead")
			}
			tf := strings.ToLower(strings.TrimSpace(args.Timeframe))
			if tf == "" {
				tf = "1 hour"
			}
			limit, window := 50, time.Duration(0)
			if f, ok := timeframes[tf]; ok {
				limit, window = f.limit, f.window
			}
			msgs, err := s.read(ctx, c, args.ChannelID, false, limit, user{})
			if err != nil {
				return "", err
			}
			now := s.now()
			var lines []string
			for _, m := range slices.Backward(msgs) { // chronological
				if strings.TrimSpace(m.Text) != "" && (window == 0 || now.Sub(m.At) <= window) {
					lines = append(lines, s.format(m))
				}
			}
			if len(lines) == 0 {
				return "No recent activity in this channel.", nil
			}
			prompt := "Summarize this Discord conversation concisely.\n"
			if f := strings.TrimSpace(args.Focus); f != "" {
				prompt += "Focus on: " + f + "\n"
			}
			prompt += "\nConversation:\n" + strings.Join(lines, "\n") + "\n\nSummary:"
			summary, err := s.Fast.Ask(ctx, summarySystem, prompt)
			if err != nil {
				return "", fmt.Errorf("summarize channel: %w", err)
			}
			return strings.TrimSpace(summary), nil
		},
	}
}
