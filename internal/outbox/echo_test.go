package outbox

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/job"
	"github.com/weft-dev/weft/internal/thread"
)

func input(seq int64, p thread.Platform, who, text string) thread.Stitch {
	return thread.Stitch{Seq: seq, Type: thread.StitchDiscordMessage, Source: p, Content: text, Author: &thread.Author{Name: who}}
}

func reply(seq int64, text string) thread.Stitch {
	return thread.Stitch{Seq: seq, Type: thread.StitchLLMCall, Content: text, LLMResponse: json.RawMessage(`{"content":"x"}`)}
}

func toolStep(seq int64) thread.Stitch {
	return thread.Stitch{Seq: seq, Type: thread.StitchLLMCall, LLMResponse: json.RawMessage(`{"content":"","tool_calls":[{"id":"1","name":"lookup"}]}`)}
}

func TestMirror(t *testing.T) {
	t.Parallel()
	linear := Surface{Platform: thread.PlatformLinear, Target: "session-1"}
	discord := Surface{Platform: thread.PlatformDiscord, Target: "300000000000000001"}
	slack := Surface{Platform: thread.PlatformSlack, Target: "T1/C1/1700000000.000100"}
	attached := []Surface{linear, discord, slack}
	chain := []thread.Stitch{
		{Seq: 1, Type: thread.StitchSystemPrompt},
		{Seq: 2, Type: thread.StitchLinearActivity, Source: thread.PlatformLinear, Content: "why?"},
		reply(3, "because"),
		input(4, thread.PlatformDiscord, "ada", "and then?"),
		input(5, thread.PlatformDiscord, "bob", "also:\ntwo lines"),
		toolStep(6),
		{Seq: 7, Type: thread.StitchToolCall},
	}
	answer := thread.Effects{Stitches: []thread.Stitch{{ID: uuid.New(), Type: thread.StitchLLMCall, Content: "then this"}},
		Outputs: []thread.Output{{Kind: thread.OutboxResponse, OutboxBody: thread.OutboxBody{Text: "then this"}}}}
	question := thread.Effects{Stitches: []thread.Stitch{{ID: uuid.New(), Type: thread.StitchClarificationRequest}},
		Outputs: []thread.Output{{Kind: thread.OutboxElicitation, OutboxBody: thread.OutboxBody{Text: "which branch?"}}}}
	thought := thread.Effects{Stitches: []thread.Stitch{{ID: uuid.New(), Type: thread.StitchAgentThought}},
		Outputs: []thread.Output{{Kind: thread.OutboxThought, OutboxBody: thread.OutboxBody{Text: "hmm"}}}}
	everyone := func(p thread.EchoPolicy) map[thread.Platform]thread.EchoPolicy {
		return map[thread.Platform]thread.EchoPolicy{thread.PlatformLinear: p, thread.PlatformDiscord: p, thread.PlatformSlack: p}
	}
	for _, tc := range []struct {
		name     string
		policies map[thread.Platform]thread.EchoPolicy
		surface  *Surface
		e        thread.Effects
		want     map[Surface]string // echo text per surface
		summary  []Surface
	}{
		{name: "Answers", policies: everyone(thread.EchoAnswers), surface: &discord, e: answer,
			want: map[Surface]string{linear: "In Discord, weft answered:\n\nthen this", slack: "In Discord, weft answered:\n\nthen this"}},
		{name: "QuestionBack", policies: everyone(thread.EchoAnswers), surface: &discord, e: question,
			want: map[Surface]string{linear: "In Discord, weft asked:\n\nwhich branch?", slack: "In Discord, weft asked:\n\nwhich branch?"}},
		{name: "Everything", policies: map[thread.Platform]thread.EchoPolicy{thread.PlatformLinear: thread.EchoEverything}, surface: &discord, e: answer,
			want: map[Surface]string{linear: "ada asked in Discord:\n> and then?\n\nbob asked in Discord:\n> also:\n> two lines\n\nweft answered in Discord:\n\nthen this"}},
		{name: "Summary", policies: everyone(thread.EchoSummary), surface: &discord, e: answer, summary: []Surface{linear, slack}},
		{name: "None", policies: everyone(thread.EchoNone), surface: &discord, e: answer},
		{name: "Unset", policies: nil, surface: &discord, e: answer},
		{name: "NotAnAnswer", policies: everyone(thread.EchoEverything), surface: &discord, e: thought},
		{name: "AskedWhereNoAnswerGoes", policies: everyone(thread.EchoAnswers), surface: nil, e: answer,
			want: map[Surface]string{linear: "In Discord, weft answered:\n\nthen this", discord: "In Discord, weft answered:\n\nthen this",
				slack: "In Discord, weft answered:\n\nthen this"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			x := Echo{Policies: tc.policies, Idle: time.Hour}
			threadID := uuid.New()
			w := Plan(threadID, tc.surface, tc.e)
			rows, jobs := x.Mirror(tc.surface, attached, chain, w, tc.e, 9)
			got := map[Surface]string{}
			for _, o := range rows {
				b, err := o.Content()
				require.NoError(t, err)
				require.True(t, b.Echo)
				require.Equal(t, thread.OutboxResponse, o.Kind, "an echo is a response everywhere: it reopens no Linear session")
				require.Equal(t, threadID, o.ThreadID)
				require.Equal(t, w.Stitches[0].ID, o.StitchID)
				got[Surface{Platform: o.Platform, Target: o.Target}] = b.Text
			}
			if tc.want == nil {
				tc.want = map[Surface]string{}
			}
			require.Equal(t, tc.want, got)
			var summaries []Surface
			for _, j := range jobs {
				a := j.Args.(job.EchoSummary)
				require.Equal(t, threadID, a.ThreadID)
				require.EqualValues(t, 9, a.After)
				require.WithinDuration(t, time.Now().Add(time.Hour), j.InsertOpts.ScheduledAt, time.Minute)
				summaries = append(summaries, Surface{Platform: thread.Platform(a.Platform), Target: a.Target})
			}
			require.Equal(t, tc.summary, summaries)
		})
	}
}

func TestSummary(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		chain []thread.Stitch
		to    thread.Platform
		want  string
	}{
		{name: "SinceLinearSpoke", to: thread.PlatformLinear, chain: []thread.Stitch{
			{Seq: 1, Type: thread.StitchLinearActivity, Source: thread.PlatformLinear, Content: "why?"},
			reply(2, "because"),
			input(3, thread.PlatformDiscord, "ada", "and then?"),
			reply(4, "then that"),
			input(5, thread.PlatformDiscord, "bob", "where?"),
			toolStep(6),
			{Seq: 7, Type: thread.StitchToolCall},
			reply(8, "in /auth"),
		}, want: "The conversation went on in Discord: 2 questions. The last, from bob:\n> where?\n\nweft's last answer:\n\nin /auth"},
		{name: "QuestionBack", to: thread.PlatformDiscord, chain: []thread.Stitch{
			{Seq: 1, Type: thread.StitchLinearActivity, Source: thread.PlatformLinear, Content: "deploy it", Author: &thread.Author{Name: "Ada Lovelace"}},
			toolStep(2),
			{Seq: 3, Type: thread.StitchClarificationRequest, Content: "which branch?"},
		}, want: "The conversation went on in Linear: 1 question. The last, from Ada Lovelace:\n> deploy it\n\nweft's last answer:\n\nwhich branch?"},
		{name: "NoAnswer", to: thread.PlatformLinear, chain: []thread.Stitch{input(1, thread.PlatformDiscord, "ada", "hello?")}},
		{name: "Empty", to: thread.PlatformLinear},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := Summary(tc.chain, tc.to)
			require.Equal(t, tc.want != "", ok)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestSummaryTruncatesLongAnswers(t *testing.T) {
	t.Parallel()
	long := make([]rune, maxSummaryAnswer+10)
	for i := range long {
		long[i] = 'é'
	}
	got, ok := Summary([]thread.Stitch{input(1, thread.PlatformDiscord, "ada", "q"), reply(2, string(long))}, thread.PlatformLinear)
	require.True(t, ok)
	require.Contains(t, got, string(long[:maxSummaryAnswer])+"…")
	require.NotContains(t, got, string(long[:maxSummaryAnswer+1]))
}

func TestSummaryID(t *testing.T) {
	t.Parallel()
	id, s := uuid.New(), Surface{Platform: thread.PlatformLinear, Target: "session-1"}
	require.Equal(t, SummaryID(id, s, 7), SummaryID(id, s, 7), "the same summary, the same row")
	require.NotEqual(t, SummaryID(id, s, 7), SummaryID(id, s, 8))
	require.NotEqual(t, SummaryID(id, s, 7), SummaryID(uuid.New(), s, 7))
	require.NotEqual(t, SummaryID(id, s, 7), SummaryID(id, Surface{Platform: thread.PlatformSlack, Target: "session-1"}, 7))
}
