package discovery

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/weft-dev/weft/internal/thread"
)

// pick is a channel message judged relevant, with why and how much, the
// timestamp the ranking named it by, and the topics it is relevant for
// (the summary's "about …").
type pick struct {
	msg    ChannelMessage
	ts     string
	reason string
	topics []string
	score  float64
}

// rank picks the messages most relevant to prompt, best first, at most
// MaxThreads: by the fast model, or by keywords when the model fails or
// answers with anything but the JSON asked for. how says which. A model
// that does not answer within RankTimeout fails it with errRankTimeout:
// the person is waiting, and the origin budgets about a second for it.
func (d *Discovery) rank(ctx context.Context, cfg Config, platform, prompt string, cands []ChannelMessage) ([]pick, string, error) {
	stamps := timestamps(cands)
	if d.Fast != nil {
		rankCtx, cancel := context.WithTimeout(ctx, cfg.RankTimeout)
		picks, err := d.rankByModel(rankCtx, cfg, platform, prompt, cands, stamps)
		cancel()
		if err == nil {
			return picks, "the fast model", nil
		}
		if ctx.Err() == nil && errors.Is(rankCtx.Err(), context.DeadlineExceeded) {
			return nil, "", fmt.Errorf("%w after %s: %w", errRankTimeout, cfg.RankTimeout, err)
		}
		d.Logger.WarnContext(ctx, "relevance ranking by the fast model failed; matching keywords instead", slog.Any("error", err))
	}
	return rankByKeywords(prompt, cands, stamps, cfg.MaxThreads), "keyword match", nil
}

const rankSystem = "Analyze which messages are relevant to this request. Answer with a JSON array only, no prose."

// rankPrompt is the origin's prompt template; messages are named by their
// timestamps, as [ts] author: text.
const rankPrompt = `You are analyzing a %s channel to find messages relevant to this request:
%q

Here are the recent channel messages:
%s
Return a JSON array of relevant message timestamps with reasoning:
[
  { "ts": "1234567890.123", "reason": "Mentions team_abc123", "score": 0.9 },
  { "ts": "1234567891.456", "reason": "Discusses cold start performance", "score": 0.8 }
]

Only include messages with score >= %g`

func (d *Discovery) rankByModel(ctx context.Context, cfg Config, platform, prompt string, cands []ChannelMessage, stamps []string) ([]pick, error) {
	var list strings.Builder
	byTS := make(map[string]int, len(cands))
	byID := make(map[string]int, len(cands))
	for i, m := range cands {
		byTS[stamps[i]], byID[m.ID] = i, i
		fmt.Fprintf(&list, "[%s] %s\n", stamps[i], said(m))
	}
	reply, err := d.Fast.Ask(ctx, rankSystem, fmt.Sprintf(rankPrompt, platform, prompt, list.String(), cfg.ScoreThreshold))
	if err != nil {
		return nil, err
	}
	ranks, err := parseRanking(reply)
	if err != nil {
		return nil, err
	}
	var picks []pick
	for _, r := range ranks {
		// The timestamp asked for; a model that answers with the
		// platform's message id instead is understood too.
		i, ok := byTS[string(r.TS)]
		if !ok {
			i, ok = byID[cmp.Or(string(r.ID), string(r.TS))]
		}
		// Messages the model made up, or repeated, are dropped.
		if ok && r.Score >= cfg.ScoreThreshold && !slices.ContainsFunc(picks, func(p pick) bool { return p.msg.ID == cands[i].ID }) {
			picks = append(picks, pick{msg: cands[i], ts: stamps[i], reason: r.Reason, topics: []string{topic(r.Reason)}, score: r.Score})
		}
	}
	slices.SortStableFunc(picks, func(a, b pick) int { return cmp.Compare(b.score, a.score) })
	return picks[:min(len(picks), cfg.MaxThreads)], nil
}

// topic is a model's reason as the summary's "about …": its first letter
// lowered ("Discusses cold starts" → "discusses cold starts").
func topic(reason string) string {
	reason = strings.TrimSuffix(Clip(reason, 80), ".")
	r, n := utf8.DecodeRuneInString(reason)
	if n == 0 || !unicode.IsUpper(r) {
		return reason
	}
	if next, _ := utf8.DecodeRuneInString(reason[n:]); unicode.IsUpper(next) {
		return reason // an acronym ("CI fails")
	}
	return string(unicode.ToLower(r)) + reason[n:]
}

// timestamps names each message as the origin's ranking does, by a
// timestamp of seconds and microseconds ("1700000000.123456"), the
// message's time. Two messages of one microsecond get the
// next free one, so every name is one message's.
func timestamps(msgs []ChannelMessage) []string {
	out := make([]string, len(msgs))
	seen := make(map[int64]bool, len(msgs))
	for i, m := range msgs {
		us := max(m.At.UnixMicro(), 0)
		for seen[us] {
			us++
		}
		seen[us] = true
		out[i] = fmt.Sprintf("%d.%06d", us/1_000_000, us%1_000_000)
	}
	return out
}

// tsTime is the time of a timestamp of timestamps'.
func tsTime(ts string) time.Time {
	sec, frac, _ := strings.Cut(ts, ".")
	s, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return time.Time{}
	}
	frac = (frac + "000000")[:6]
	us, _ := strconv.ParseInt(frac, 10, 64)
	return time.Unix(s, us*1000).UTC()
}

// ranking is one entry of the model's answer.
type ranking struct {
	TS     flexID  `json:"ts"`
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
func rankByKeywords(prompt string, cands []ChannelMessage, stamps []string, most int) []pick {
	words := keywords(prompt)
	var picks []pick
	for i, m := range slices.Backward(cands) {
		text := strings.ToLower(m.Text)
		var hits []string
		for _, w := range words {
			if strings.Contains(text, w) {
				hits = append(hits, w)
			}
		}
		if len(hits) > 0 {
			picks = append(picks, pick{msg: m, ts: stamps[i], reason: "mentions " + strings.Join(hits, ", "), topics: hits,
				score: float64(len(hits)) / float64(len(words))})
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
