package discovery

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/weft-dev/weft/internal/history"
	"github.com/weft-dev/weft/internal/thread"
)

// pick is a channel message judged relevant, with why and how much.
type pick struct {
	msg    ChannelMessage
	reason string
	score  float64
}

// rank picks the messages most relevant to prompt, best first, at most
// MaxThreads: by the fast model, or by keywords when the model fails or
// answers with anything but the JSON asked for. how says which.
func (d *Discovery) rank(ctx context.Context, cfg Config, platform, prompt string, cands []ChannelMessage) ([]pick, string) {
	if d.Fast != nil {
		// A slow model is a failed one: the person is waiting for the answer.
		rankCtx, cancel := context.WithTimeout(ctx, rankTimeout)
		picks, err := d.rankByModel(rankCtx, cfg, platform, prompt, cands)
		cancel()
		if err == nil {
			return picks, "the fast model"
		}
		d.Logger.WarnContext(ctx, "relevance ranking by the fast model failed; matching keywords instead", slog.Any("error", err))
	}
	return rankByKeywords(prompt, cands, cfg.MaxThreads), "keyword match"
}

// rankTimeout bounds the ranking call, retries included, before keywords
// take over; the origin expects it to take about a second.
const rankTimeout = 15 * time.Second

const rankSystem = "You find the %s messages relevant to a request. Answer with a JSON array only, no prose."

// rankPrompt is the origin's prompt, for the platform's message ids.
const rankPrompt = `You are analyzing a %s channel to find messages relevant to this request:
%q

Here are the recent channel messages, as [message id] author: text:
%s
Return a JSON array of relevant message ids with reasoning:
[
  {"id": %q, "reason": "Mentions team_abc123", "score": 0.9},
  {"id": %q, "reason": "Discusses cold start performance", "score": 0.8}
]

Only include messages with score >= %g. Answer [] if none is relevant.`

func (d *Discovery) rankByModel(ctx context.Context, cfg Config, platform, prompt string, cands []ChannelMessage) ([]pick, error) {
	var list strings.Builder
	byID := make(map[string]ChannelMessage, len(cands))
	for _, m := range cands {
		byID[m.ID] = m
		fmt.Fprintf(&list, "[%s] %s: %s\n", m.ID, history.OrUnknown(m.Author), Clip(m.Text, maxText))
	}
	reply, err := d.Fast.Ask(ctx, fmt.Sprintf(rankSystem, platform), fmt.Sprintf(rankPrompt, platform, prompt, list.String(),
		exampleID(cands[0].ID, 0), exampleID(cands[0].ID, 1), cfg.ScoreThreshold))
	if err != nil {
		return nil, err
	}
	ranks, err := parseRanking(reply)
	if err != nil {
		return nil, err
	}
	var picks []pick
	for _, r := range ranks {
		m, ok := byID[string(r.ID)]
		// Ids the model made up, or repeated, are dropped.
		if ok && r.Score >= cfg.ScoreThreshold && !slices.ContainsFunc(picks, func(p pick) bool { return p.msg.ID == m.ID }) {
			picks = append(picks, pick{msg: m, reason: r.Reason, score: r.Score})
		}
	}
	slices.SortStableFunc(picks, func(a, b pick) int { return cmp.Compare(b.score, a.score) })
	return picks[:min(len(picks), cfg.MaxThreads)], nil
}

// exampleID is a made-up id of id's shape (a Discord snowflake, a Slack
// ts), so the model sees the form to answer in without a real message
// being suggested: the digits counted up from 1, the last one plus k.
func exampleID(id string, k int) string {
	b := []byte(id)
	n, last := 0, -1
	for i, c := range b {
		if c >= '0' && c <= '9' {
			n++
			b[i], last = byte('0'+n%10), i
		}
	}
	if last >= 0 {
		b[last] = byte('0' + (int(b[last]-'0')+k)%10)
	}
	return string(b)
}

// ranking is one entry of the model's answer.
type ranking struct {
	ID     flexID  `json:"id"`
	Reason string  `json:"reason"`
	Score  float64 `json:"score"`
}

// flexID reads an id given as a string or a bare number: models drop the
// quotes at times, and a snowflake does not survive a float64.
type flexID string

func (f *flexID) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*f = flexID(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*f = flexID(n.String())
	return nil
}

// parseRanking reads the model's answer: a JSON array, possibly in a code
// fence (models add one though asked not to), or an object whose one field
// holds it.
func parseRanking(reply string) ([]ranking, error) {
	s := strings.TrimSpace(reply)
	if rest, ok := strings.CutPrefix(s, "```"); ok {
		s = strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(rest, "json")), "```")
	}
	var list []ranking
	err := json.Unmarshal([]byte(s), &list)
	if err == nil {
		return list, nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &obj) == nil && len(obj) == 1 {
		for _, v := range obj {
			if json.Unmarshal(v, &list) == nil {
				return list, nil
			}
		}
	}
	return nil, fmt.Errorf("relevance ranking is not the JSON array asked for: %w", err)
}

// rankByKeywords is the fallback: messages sharing the prompt's keywords,
// by the share of keywords they contain, newer first among equals. Any
// shared keyword counts: RELEVANCE_SCORE_THRESHOLD is on the model's scale,
// and the MaxThreads cap keeps a common word from flooding the prompt.
func rankByKeywords(prompt string, cands []ChannelMessage, most int) []pick {
	words := keywords(prompt)
	var picks []pick
	for _, m := range slices.Backward(cands) {
		text := strings.ToLower(m.Text)
		var hits []string
		for _, w := range words {
			if strings.Contains(text, w) {
				hits = append(hits, w)
			}
		}
		if len(hits) > 0 {
			picks = append(picks, pick{msg: m, reason: "mentions " + strings.Join(hits, ", "), score: float64(len(hits)) / float64(len(words))})
		}
	}
	slices.SortStableFunc(picks, func(a, b pick) int { return cmp.Compare(b.score, a.score) })
	return picks[:min(len(picks), most)]
}

// keywords are the prompt's distinctive words, lowercased: three characters
// or more, no stop words, no ids of mentions, and identifiers such as
// team_abc123 or build-2 kept whole.
func keywords(prompt string) []string {
	words := strings.FieldsFunc(strings.ToLower(prompt), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-'
	})
	var out []string
	for _, w := range words {
		w = strings.Trim(w, "-_")
		if utf8.RuneCountInString(w) >= 3 && !stopWords[w] && !thread.IsSnowflake(w) && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// stopWords are too common to tell one message from another.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`the and for are but not you your yours with this that these those from have has had was were
		what when where which who whom why how can could would should will shall may might must about into onto over under
		any all our ours out get got does did doing done its it's there their them they then than also just like some more
		most very been being here hey hello please thanks thank know need want tell find look anyone someone something
		anything everyone other again still yet now today yesterday tomorrow weft`) {
		m[w] = true
	}
	return m
}()
