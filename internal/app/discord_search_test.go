package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/discord/discordtest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	surfacediscord "github.com/weft-dev/weft/internal/surface/discord"
	"github.com/weft-dev/weft/internal/thread"
	"github.com/weft-dev/weft/internal/tools"
)

// searchTools returns the Discord search tools on the world's real client,
// with the clock at now.
func (w *toolsWorld) searchTools(now time.Time) map[string]tools.Tool {
	s := &surfacediscord.DiscordSearch{Reader: surfacediscord.NewReader(w.client), Store: w.store, Fast: fastLLM{p: w.fast, model: "fast-model"},
		Now: func() time.Time { return now }}
	out := map[string]tools.Tool{}
	for _, t := range s.Tools() {
		out[t.Name] = t
	}
	return out
}

// callTool calls a tool for the conversation th.
func callTool(t *testing.T, ts map[string]tools.Tool, th uuid.UUID, name string, args any) (string, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	tool, ok := ts[name]
	require.True(t, ok, name)
	return tool.Handler(context.Background(), tools.Call{ThreadID: th, Arguments: raw})
}

type toolArgs = map[string]any

func TestDiscordSearchFetched(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newToolsWorld(t)
	failed := w.fake.PostUserMessage(w.channel, w.alice, "the deploy failed on build-2")
	lunch := w.fake.PostUserMessage(w.channel, w.bob, "lunch?")
	_, err := w.client.Send(ctx, w.channel, "Deploy status: red", "")
	require.NoError(t, err)
	long := "deploy log:\n" + strings.Repeat("x", 400)
	w.fake.PostUserMessage(w.channel, w.alice, long)
	th := w.mention("catch me up")
	w.fake.AddMember(w.guild, discordtest.User{ID: "300000000000000077", Name: "carol"}, "")
	w.fake.AddMember(w.guild, w.alice, "Ally")
	// Every message was posted a moment ago; five minutes on, each is five
	// minutes old.
	ts := w.searchTools(time.Now().Add(5 * time.Minute))
	longLine := "[5 minutes ago] alice: " + ("deploy log: " + strings.Repeat("x", 400))[:300]

	tests := []struct {
		name, tool string
		args       toolArgs
		want       string
	}{
		{"ChannelByKeyword", "search_channel_messages", toolArgs{"query": "DEPLOY"},
			longLine + "\n[5 minutes ago] weft (Bot): Deploy status: red\n[5 minutes ago] alice: the deploy failed on build-2"},
		{"ChannelNoMatch", "search_channel_messages", toolArgs{"query": "turtles"}, "No messages found matching 'turtles'"},
		{"UserByPartOfName", "search_user_messages", toolArgs{"user_name": "ALI", "query": "build"},
			"[5 minutes ago] alice: the deploy failed on build-2"},
		{"UserByMention", "search_user_messages", toolArgs{"user_name": "<@" + w.bob.ID + ">"}, "[5 minutes ago] bob: lunch?"},
		{"UserLimit", "search_user_messages", toolArgs{"user_name": "alice", "limit": 1},
			"[5 minutes ago] alice: <@" + w.fake.BotUser().ID + "> catch me up"},
		{"UserNotFound", "search_user_messages", toolArgs{"user_name": "erin", "query": "x"}, "Could not find user 'erin'"},
		{"MemberWithoutMessages", "search_user_messages", toolArgs{"user_name": "carol", "query": "x"}, "No messages found from carol about 'x'"},
		// A member is found by their server nickname, which no message shows.
		{"UserByNickname", "search_user_messages", toolArgs{"user_name": "Ally", "query": "build"}, "[5 minutes ago] alice: the deploy failed on build-2"},
		{"MessageNotFound", "get_message_context", toolArgs{"message_id": "999999999999999999"}, "Message not found"},
		// The conversation's thread does not hold it; its channel does.
		{"MessageContext", "get_message_context", toolArgs{"message_id": lunch.ID, "before": 1, "after": 1},
			"    [5 minutes ago] alice: the deploy failed on build-2\n>>> [5 minutes ago] bob: lunch?\n    [5 minutes ago] weft (Bot): Deploy status: red"},
		{"MessageContextAtTheStart", "get_message_context", toolArgs{"message_id": failed.ID, "after": 1, "channel_id": w.channel},
			">>> [5 minutes ago] alice: the deploy failed on build-2\n    [5 minutes ago] bob: lunch?"},
		{"SummaryWindowIsEmpty", "get_channel_summary", toolArgs{"timeframe": "5 minutes"}, "No recent activity in this channel."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := callTool(t, ts, th.ID, tc.tool, tc.args)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}

	t.Run("Summary", func(t *testing.T) {
		t.Parallel()
		w.llm.Enqueue(llmtest.Reply{Text: " Deploys are failing on build-2. "})
		got, err := callTool(t, ts, th.ID, "get_channel_summary", toolArgs{"timeframe": "1 hour", "focus": "deploys"})
		require.NoError(t, err)
		require.Equal(t, "Deploys are failing on build-2.", got)
		reqs := w.llm.Requests()
		require.Len(t, reqs, 1)
		require.Equal(t, "fast-model", reqs[0].Model)
		require.Contains(t, reqs[0].Last().Content, "Focus on: deploys\n\nConversation:\n[5 minutes ago] alice: the deploy failed on build-2\n[5 minutes ago] bob: lunch?\n")
	})
}

// snowflakeAt is a message id for a message sent at t.
func snowflakeAt(t time.Time, seq int) string {
	return strconv.FormatUint(thread.SnowflakeAt(t)|uint64(seq), 10)
}

func TestDiscordSearchStored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newToolsWorld(t)
	now := time.Now()
	// A tracked thread: Postgres answers, Discord is never asked (the
	// thread does not even exist on the fake).
	att := dbtest.DiscordAttachment()
	att.ChannelID, att.GuildID = w.channel, w.guild
	opened := snowflakeAt(now.Add(-72*time.Hour), 1)
	att.DiscordThreadID = opened
	th, err := thread.NewBuilder(nil).WithGoal("deploys").InteractiveDiscord(att).
		WithInitialPrompt(thread.Stitch{Content: "what's up with deploys?", Source: thread.PlatformDiscord, ExternalID: opened,
			Author: &thread.Author{ID: w.alice.ID, Name: "alice"}}).Build(ctx, w.store)
	require.NoError(t, err)
	msg := func(at time.Duration, who discordtest.User, text string) string {
		id := snowflakeAt(now.Add(-at), 1)
		_, err := w.store.AppendStitch(ctx, thread.Stitch{ThreadID: th.ID, Type: thread.StitchDiscordMessage, Content: text,
			Source: thread.PlatformDiscord, ExternalID: id, Author: &thread.Author{ID: who.ID, Name: who.Name}})
		require.NoError(t, err)
		return id
	}
	blocked := msg(2*time.Hour, w.bob, "deploy blocked on review")
	secret := msg(30*time.Minute, w.bob, "deploy token is hunter2")
	msg(5*time.Minute, w.alice, "deploy is green now")
	msg(time.Minute, w.dave, "unrelated")
	_, err = w.store.EditStitch(ctx, thread.PlatformDiscord, blocked, db.StitchEdit{Content: "deploy blocked on review (v2)", EditedAt: now})
	require.NoError(t, err)
	_, err = w.store.EditStitch(ctx, thread.PlatformDiscord, secret, db.StitchEdit{DeletedAt: now})
	require.NoError(t, err)

	ts := w.searchTools(now)
	before := len(w.fake.Requests())
	tests := []struct {
		name, tool string
		args       toolArgs
		want       string
	}{
		{"ThreadByKeyword", "search_thread_messages", toolArgs{"query": "deploy"},
			"[5 minutes ago] alice: deploy is green now\n[2 hours ago, edited] bob: deploy blocked on review (v2)\n[3 days ago] alice: what's up with deploys?"},
		{"ThreadAll", "search_thread_messages", toolArgs{"limit": 2},
			"[1 minute ago] dave: unrelated\n[5 minutes ago] alice: deploy is green now"},
		{"ThreadNoMatch", "search_thread_messages", toolArgs{"query": "hunter2"}, "No messages found matching 'hunter2'"},
		{"UserInTheThread", "search_user_messages", toolArgs{"user_name": "bob", "channel_id": opened},
			"[2 hours ago, edited] bob: deploy blocked on review (v2)"},
		{"ChannelIsTheThread", "search_channel_messages", toolArgs{"query": "green", "channel_id": opened},
			"[5 minutes ago] alice: deploy is green now"},
		{"MessageContext", "get_message_context", toolArgs{"message_id": blocked, "after": 1},
			"    [3 days ago] alice: what's up with deploys?\n>>> [2 hours ago, edited] bob: deploy blocked on review (v2)\n    [5 minutes ago] alice: deploy is green now"},
	}
	t.Run("Tools", func(t *testing.T) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				got, err := callTool(t, ts, th.ID, tc.tool, tc.args)
				require.NoError(t, err)
				require.Equal(t, tc.want, got)
			})
		}
	})
	require.Equal(t, before, len(w.fake.Requests()), "stored threads are read from Postgres only")

	got, err := callTool(t, ts, th.ID, "get_message_context", toolArgs{"message_id": secret})
	require.NoError(t, err)
	require.Equal(t, "Message not found", got, "a deleted message is not found, as on Discord")
}

func TestDiscordSearchScansAtMost100(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name   string
		stored bool
	}{{"Fetched", false}, {"Stored", true}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newToolsWorld(t)
			th := w.mention("how many deploys?")
			att, err := w.store.DiscordAttachment(ctx, th.ID)
			require.NoError(t, err)
			where, tool := w.channel, "search_channel_messages"
			for i := range 120 {
				text := fmt.Sprintf("deploy %d", i)
				if !tc.stored {
					w.fake.PostUserMessage(w.channel, w.bob, text)
					continue
				}
				where, tool = att.DiscordThreadID, "search_thread_messages"
				_, err := w.store.AppendStitch(ctx, thread.Stitch{ThreadID: th.ID, Type: thread.StitchDiscordMessage, Content: text,
					Source: thread.PlatformDiscord, ExternalID: snowflakeAt(time.Now(), i+1), Author: &thread.Author{ID: w.bob.ID, Name: "bob"}})
				require.NoError(t, err)
			}
			got, err := callTool(t, w.searchTools(time.Now()), th.ID, tool, toolArgs{"query": "deploy", "limit": 500})
			require.NoError(t, err)
			lines := strings.Split(got, "\n")
			require.Len(t, lines, 100)
			require.True(t, strings.HasSuffix(lines[0], "bob: deploy 119"), lines[0])
			require.True(t, strings.HasSuffix(lines[99], "bob: deploy 20"), lines[99])
			if !tc.stored {
				require.Equal(t, 1, w.reads(where), "one page")
				for _, r := range w.fake.Requests() {
					if r.Path == "/channels/"+where+"/messages" {
						require.Equal(t, "limit=100", r.Query)
					}
				}
			} else {
				require.Zero(t, w.reads(where))
			}
		})
	}
}

// get_channel_summary's "today" reads 200 messages, as the origin's
// timeframe_to_limit says: two pages of Discord's history.
func TestDiscordSummaryTodayReads200(t *testing.T) {
	t.Parallel()
	w := newToolsWorld(t)
	for i := range 250 {
		w.fake.PostUserMessage(w.channel, w.bob, fmt.Sprintf("note %d", i))
	}
	th := w.mention("what happened today?")
	w.llm.Enqueue(llmtest.Reply{Text: "Bob wrote notes."})
	got, err := callTool(t, w.searchTools(time.Now()), th.ID, "get_channel_summary", toolArgs{"timeframe": "today"})
	require.NoError(t, err)
	require.Equal(t, "Bob wrote notes.", got)
	reqs := w.llm.Requests()
	require.Len(t, reqs, 1)
	prompt := reqs[0].Last().Content
	// The mention is the newest message; 199 notes come before it.
	require.Equal(t, 199, strings.Count(prompt, "bob: note "))
	require.Contains(t, prompt, "bob: note 51\n")
	require.NotContains(t, prompt, "bob: note 50\n")
}

func TestDiscordSearchErrors(t *testing.T) {
	t.Parallel()
	w := newToolsWorld(t)
	th := w.mention("where?")
	dm := w.fake.AddChannel("")
	const missing = "999999999999999999"
	other := w.fake.AddChannel("400000000000000002") // another guild
	ts := w.searchTools(time.Now())

	dmErr := "channel " + dm + " is a direct message: the Discord search tools work only in server channels"
	missingErr := "discord channel " + missing + " was not found, or weft cannot see it"
	tests := []struct {
		name, tool string
		conv       uuid.UUID
		args       toolArgs
		want       string
	}{
		{"ChannelDM", "search_channel_messages", th.ID, toolArgs{"query": "x", "channel_id": dm}, dmErr},
		{"UserDM", "search_user_messages", th.ID, toolArgs{"user_name": "x", "channel_id": dm}, dmErr},
		{"ContextDM", "get_message_context", th.ID, toolArgs{"message_id": missing, "channel_id": dm}, dmErr},
		{"ThreadDM", "search_thread_messages", th.ID, toolArgs{"thread_id": dm}, dmErr},
		{"SummaryDM", "get_channel_summary", th.ID, toolArgs{"channel_id": dm}, dmErr},
		{"ChannelMissing", "search_channel_messages", th.ID, toolArgs{"query": "x", "channel_id": missing}, missingErr},
		{"UserMissing", "search_user_messages", th.ID, toolArgs{"user_name": "x", "channel_id": missing}, missingErr},
		{"ContextMissingChannel", "get_message_context", th.ID, toolArgs{"message_id": missing, "channel_id": missing}, missingErr},
		{"ThreadMissing", "search_thread_messages", th.ID, toolArgs{"thread_id": missing}, missingErr},
		{"SummaryMissing", "get_channel_summary", th.ID, toolArgs{"channel_id": missing}, missingErr},
		{"NotAnID", "search_channel_messages", th.ID, toolArgs{"query": "x", "channel_id": "general"}, `"general" is not a Discord channel id`},
		{"ChannelIsNotAThread", "search_thread_messages", th.ID, toolArgs{"thread_id": w.channel},
			"this tool only works in threads: use search_channel_messages instead"},
		{"AnotherServer", "search_channel_messages", th.ID, toolArgs{"query": "x", "channel_id": other},
			"channel " + other + ": it is in a Discord server of another organisation than this conversation"},
		{"NotInDiscord", "search_channel_messages", uuid.New(), toolArgs{"query": "x"}, "this conversation is not in Discord: name a channel_id"},
		{"NoQuery", "search_channel_messages", th.ID, toolArgs{}, "query is required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := callTool(t, ts, tc.conv, tc.tool, tc.args)
			require.Empty(t, got)
			require.EqualError(t, err, tc.want)
		})
	}
}

// TestDiscordSearchStopsAtTheOrganisation: a conversation reads Discord
// servers of its own organisation only, from either side, until linked.
func TestDiscordSearchStopsAtTheOrganisation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newToolsWorld(t)
	inServer := w.mention("where?")
	const guildB = "400000000000000002"
	other := w.fake.AddChannel(guildB)
	attB := dbtest.DiscordAttachment()
	attB.GuildID, attB.ChannelID = guildB, other
	inB := dbtest.Thread(ctx, t, w.store, &dbtest.ThreadOpts{Discord: attB})
	lin := dbtest.LinearAttachment()
	inLinear := dbtest.Thread(ctx, t, w.store, &dbtest.ThreadOpts{Linear: lin})
	ts := w.searchTools(time.Now())
	read := func(conv uuid.UUID, channel string) error {
		_, err := callTool(t, ts, conv, "search_channel_messages", toolArgs{"query": "x", "channel_id": channel})
		return err
	}
	refused := "it is in a Discord server of another organisation than this conversation"
	require.ErrorContains(t, read(inServer.ID, other), refused)
	require.ErrorContains(t, read(inB.ID, w.channel), refused)
	require.ErrorContains(t, read(inLinear.ID, w.channel), refused, "a Linear workspace reads no server it is not linked with")
	require.ErrorContains(t, read(inLinear.ID, other), refused)

	require.NoError(t, w.store.LinkTenants(ctx, "acme", thread.LinearTenant(lin.WorkspaceID), thread.DiscordTenant(w.guild)))
	require.NoError(t, read(inLinear.ID, w.channel))
	require.ErrorContains(t, read(inLinear.ID, other), refused)
	require.ErrorContains(t, read(inB.ID, w.channel), refused)
	require.NoError(t, w.store.LinkTenants(ctx, "acme", thread.DiscordTenant(guildB)))
	require.NoError(t, read(inB.ID, w.channel))
	require.NoError(t, read(inServer.ID, other))
}
