package bench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/weft-dev/weft/internal/app"
	"github.com/weft-dev/weft/internal/bench/kit"
	"github.com/weft-dev/weft/internal/discord/discordtest"
	"github.com/weft-dev/weft/internal/llm/llmtest"
	"github.com/weft-dev/weft/internal/retry"
)

// Targets of issue 5 item 9.
const (
	targetDiscordReplyP99  = 500 * time.Millisecond
	targetDiscordTypingP99 = 2 * time.Second
	discordBenchGuild      = "100000000000000001"
)

// discordBench is one `weft bench discord` run: weft serve as a child
// process talking to the fake Discord (REST and gateway) and, through a
// timing proxy, to the fake model.
type discordBench struct {
	discord *discordtest.Server
	*served
	channel string
	user    discordtest.User
}

// discordPost is one user message the bench posted: in which channel, with
// which tag, and when the fake began dispatching it on the gateway.
type discordPost struct {
	channel string
	tag     int
	at      time.Time
}

// benchDiscord drives a real weft serve (`weft-bench serve`, as a child process,
// on a scratch database) through the fake Discord with an instant fake
// model: it opens -threads Discord threads with one mention each, waits for
// their first replies, then posts follow-ups open-loop at -rate across them
// and times each from its gateway dispatch to the reply's arrival at the
// fake (less the model's time) and to the first typing indicator.
func benchDiscord(ctx context.Context, cfg *app.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("weft-bench discord", flag.ContinueOnError)
	cf := chatFlagsOn(fs, "weft_bench_discord", "tracked Discord threads, each opened by a mention before the steady run")
	sc := cf.scratch
	modelDelay := fs.Duration("model-delay", 0, "how long the fake model takes to answer: 0 is the issue's instant model; "+
		"above the typing delay (500ms) every turn shows the typing indicator, which is then measured")
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	if !cf.valid() {
		return badFlags(fs, stderr)
	}

	url, cleanup, err := sc.create(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer cleanup()
	b, err := startDiscordBench(ctx, url, *modelDelay)
	if err != nil {
		return err
	}
	defer b.close(logger)
	fmt.Fprintf(stdout, "weft-bench discord: weft serve pid %d on scratch database %s; fakes: discordtest (REST + gateway), llmtest (model answering at once)\n\n", b.proc.PID(), *sc.name)

	mentions, mentionOK, err := b.mentions(ctx, stdout, cf)
	if err != nil {
		return err
	}
	steadyOK, err := b.followUps(ctx, stdout, cf, mentions)
	if err != nil {
		return err
	}
	return b.overall(stdout, mentionOK && steadyOK)
}

// mentions opens the bench's threads: one mention each, paced at the
// steady rate, then every thread's first reply. It prints their figures
// and returns the mentions and whether their target was met.
func (b *discordBench) mentions(ctx context.Context, stdout io.Writer, cf *chatFlags) ([]discordPost, bool, error) {
	mentions := make([]discordPost, cf.threads)
	startup := len(b.discord.Requests())
	if _, err := kit.Pace(ctx, cf.rate, cf.threads, func(i int) error {
		at := time.Now()
		m := b.discord.PostUserMessage(b.channel, b.user, fmt.Sprintf("<@%s> %s why does the login redirect lose the return URL?", b.discord.BotUser().ID, kit.Tag(i)))
		// A thread started from a message has the message's id.
		mentions[i] = discordPost{channel: m.ID, tag: i, at: at}
		return nil
	}); err != nil {
		return nil, false, err
	}
	opened, missing, err := b.await(ctx, mentions, cf.wait)
	if err != nil {
		return nil, false, err
	}
	// The steady run starts once the mentions' work is all done (answers
	// after notices, joins), so it times follow-ups alone.
	setupRequests, burst, err := b.settle(ctx, startup, mentions, cf.wait)
	if err != nil {
		return nil, false, err
	}
	fmt.Fprintf(stdout, "Setup: %d mentions at %d/s, %d threads answered:\n", cf.threads, cf.rate, len(opened.total))
	tw := kit.NewTable(stdout, 50, 99, 100)
	mentionOK := opened.own.Percentile(99) <= targetDiscordReplyP99
	tw.Row("mention dispatched → first reply at fake, our time", opened.own, fmt.Sprintf("p99 ≤ %s %s", targetDiscordReplyP99, kit.Verdict(mentionOK)))
	tw.Row("  of which end to end (model included)", opened.total, "")
	tw.Row("  of which → thread opened at fake (gateway, lane, REST)", burst.opened, "")
	tw.Row("  of which thread opened → first reply (turn, discovery, REST)", burst.first, "")
	tw.Row("mention dispatched → its answer (last reply), our time", burst.answers, "")
	if err := tw.Flush(); err != nil {
		return nil, false, err
	}
	perMention, routes := restPerMention(setupRequests, cf.threads)
	// The protocol's ceiling: every REST call of every mention shares the
	// bot's global limit, so mentions faster than it allows queue there.
	ceiling := float64(globalRESTLimit) / perMention
	fmt.Fprintf(stdout, "REST calls per mention: %.1f (%s); Discord's global limit of %d/s allows %.1f mentions/s (anchor); offered %d/s = %.2f× it\n",
		perMention, routes, globalRESTLimit, ceiling, cf.rate, float64(cf.rate)/ceiling)
	if missing > 0 {
		return nil, false, fmt.Errorf("%d of %d mentions got no reply within %s\nweft serve stderr:\n%s", missing, cf.threads, cf.wait, b.proc.Stderr())
	}
	return mentions, mentionOK, nil
}

// followUps posts follow-ups open-loop at the steady rate, round-robin over
// the mentions' threads, prints their figures and returns whether their
// targets were met.
func (b *discordBench) followUps(ctx context.Context, stdout io.Writer, cf *chatFlags, mentions []discordPost) (bool, error) {
	var posts []discordPost
	lag, err := cf.paceFollowUps(ctx, func(thread, tag int) {
		th := mentions[thread].channel
		at := time.Now()
		b.discord.PostUserMessage(th, b.user, fmt.Sprintf("follow-up %s: and what about the logout redirect?", kit.Tag(tag)))
		posts = append(posts, discordPost{channel: th, tag: tag, at: at})
	})
	if err != nil {
		return false, err
	}
	got, missing, err := b.await(ctx, posts, cf.wait)
	if err != nil {
		return false, err
	}

	pass := missing == 0
	fmt.Fprintf(stdout, "\nSteady %d/s for %s over %d threads: %d follow-ups, %d replies, %d with a typing indicator of their own (generator lag max %s)\n",
		cf.rate, cf.duration, cf.threads, len(posts), len(got.total), len(got.typing), kit.Ms(lag))
	tw := kit.NewTable(stdout, 50, 99, 99.9, 100)
	row := tw.Row
	ownOK := got.own.Percentile(99) <= targetDiscordReplyP99 && missing == 0
	pass = pass && ownOK
	row("message dispatched → reply at fake, our time", got.own, fmt.Sprintf("p99 ≤ %s, all answered %s", targetDiscordReplyP99, kit.Verdict(ownOK)))
	row("  of which end to end (model included)", got.total, "")
	row("  of which model calls (excluded)", got.model, "")
	// A post without a typing POST of its own passes if its reply came
	// within the typing target: nobody was left waiting without a sign.
	typingOK := got.typing.Percentile(99) <= targetDiscordTypingP99 && got.untyped.Percentile(100) <= targetDiscordTypingP99
	pass = pass && typingOK
	row("message dispatched → first typing at fake", got.typing, fmt.Sprintf("p99 ≤ %s %s", targetDiscordTypingP99, kit.Verdict(typingOK)))
	row("  no typing of its own: reply (model included)", got.untyped, fmt.Sprintf("all ≤ %s", targetDiscordTypingP99))
	if err := tw.Flush(); err != nil {
		return false, err
	}
	if missing > 0 {
		fmt.Fprintf(stdout, "note: %d follow-ups had no reply within %s\n", missing, cf.wait)
	}
	return pass, nil
}

// startDiscordBench starts the fakes and weft serve on the database at url,
// and waits until weft is ready and its gateway has identified.
func startDiscordBench(ctx context.Context, url string, modelDelay time.Duration) (*discordBench, error) {
	b := &discordBench{discord: discordtest.NewServer(nil), user: discordtest.User{ID: "200000000000000001", Name: "ada"}}
	b.channel = b.discord.AddChannel(discordBenchGuild)
	var err error
	b.served, err = startServed(ctx, url, "all", true, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "The redirect drops the return URL; keep it in the state parameter.", Delay: modelDelay}
	}, discordEnv(b.discord, discordBenchGuild)...)
	if err == nil {
		err = b.awaitGateway(ctx, b.discord)
	}
	if err != nil {
		b.discord.Close()
		return nil, err
	}
	return b, nil
}

func (b *discordBench) close(logger *slog.Logger) {
	b.stop(logger)
	b.discord.Close()
}

// discordTimes are the latencies of the posts that were answered.
type discordTimes struct {
	total  kit.Latencies // dispatch → reply POST at the fake
	own    kit.Latencies // total less the model calls the post caused
	model  kit.Latencies // those model calls' time
	typing kit.Latencies // dispatch → first typing POST in its channel
	// untyped are the totals of the answered posts that had no typing POST
	// of their own (the turn ended, cancelling it, before it was sent).
	untyped kit.Latencies
}

// nextInChannel returns, for each post, when the next post in its channel
// was dispatched (zero for the last).
func nextInChannel(posts []discordPost) []time.Time {
	next := make([]time.Time, len(posts))
	last := map[string]int{}
	for k, p := range posts {
		if i, ok := last[p.channel]; ok {
			next[i] = p.at
		}
		last[p.channel] = k
	}
	return next
}

// await waits up to wait for a reply to every post and returns the
// latencies and how many posts had none. In each channel, posts and the
// bot's message POSTs are matched in order: a post takes the first POST
// that arrived after its dispatch and that no earlier post took.
func (b *discordBench) await(ctx context.Context, posts []discordPost, wait time.Duration) (discordTimes, int, error) {
	deadline := time.Now().Add(wait)
	for {
		replies, typing := map[string][]time.Time{}, map[string][]time.Time{}
		for _, r := range b.discord.Requests() {
			channel, what, ok := channelRequest(r)
			switch {
			case !ok || r.Method != http.MethodPost || r.Status >= 300:
			case what == "messages":
				replies[channel] = append(replies[channel], r.At)
			case what == "typing":
				typing[channel] = append(typing[channel], r.At)
			}
		}
		var out discordTimes
		used := map[string]int{} // per channel, replies taken so far
		next := nextInChannel(posts)
		for k, p := range posts {
			rs := replies[p.channel]
			i := used[p.channel]
			for i < len(rs) && rs[i].Before(p.at) {
				i++
			}
			if i == len(rs) {
				used[p.channel] = i
				continue
			}
			used[p.channel] = i + 1
			total := rs[i].Sub(p.at)
			model := b.timer.Spent(p.tag)
			out.total = append(out.total, total)
			out.model = append(out.model, model)
			out.own = append(out.own, total-model)
			// Only a typing POST before the channel's next post is this
			// post's: a later one belongs to the next turn.
			if j := slices.IndexFunc(typing[p.channel], func(t time.Time) bool { return !t.Before(p.at) }); j >= 0 &&
				(next[k].IsZero() || typing[p.channel][j].Before(next[k])) {
				out.typing = append(out.typing, typing[p.channel][j].Sub(p.at))
			} else {
				out.untyped = append(out.untyped, total)
			}
		}
		missing := len(posts) - len(out.total)
		if missing == 0 || time.Now().After(deadline) {
			out.total, out.own, out.model, out.typing, out.untyped = out.total.Sorted(), out.own.Sorted(), out.model.Sorted(), out.typing.Sorted(), out.untyped.Sorted()
			return out, missing, nil
		}
		if err := retry.Sleep(ctx, 200*time.Millisecond); err != nil {
			return out, missing, err
		}
	}
}

// settleQuiet is how long the fake Discord must see no request for a
// mention burst's work to count as done.
const settleQuiet = 500 * time.Millisecond

// burstTimes are where a mention burst's time went, per mention.
type burstTimes struct {
	opened  kit.Latencies // dispatch → thread start at the fake
	first   kit.Latencies // thread start → first reply, less model time
	answers kit.Latencies // dispatch → last reply, less model time
}

// settle waits, up to wait, until every mention's thread is joined and no
// REST call came for settleQuiet, then returns the requests since startup
// and where each answered mention's time went.
func (b *discordBench) settle(ctx context.Context, startup int, mentions []discordPost, wait time.Duration) ([]discordtest.Request, burstTimes, error) {
	deadline := time.Now().Add(wait)
	for {
		reqs := b.discord.Requests()[startup:]
		joined := map[string]bool{}
		started, first, last := map[string]time.Time{}, map[string]time.Time{}, map[string]time.Time{}
		for _, r := range reqs {
			// ok is false for a deeper path; channel and what are still set.
			channel, what, ok := channelRequest(r)
			mention, startsThread := strings.CutSuffix(strings.TrimPrefix(what, "messages/"), "/threads")
			switch {
			case r.Method == http.MethodPut && what == "thread-members/@me":
				joined[channel] = true
			case r.Method == http.MethodPost && startsThread && r.Status < 300:
				started[mention] = r.At
			case ok && r.Method == http.MethodPost && what == "messages" && r.Status < 300:
				if _, seen := first[channel]; !seen {
					first[channel] = r.At
				}
				last[channel] = r.At
			}
		}
		quiet := len(reqs) > 0 && time.Since(reqs[len(reqs)-1].At) >= settleQuiet
		if (quiet && len(joined) >= len(mentions)) || time.Now().After(deadline) {
			var out burstTimes
			for _, m := range mentions {
				at, answered := last[m.channel]
				opened, ok := started[m.channel]
				if !answered || !ok {
					continue
				}
				model := b.timer.Spent(m.tag)
				out.opened = append(out.opened, opened.Sub(m.at))
				out.first = append(out.first, first[m.channel].Sub(opened)-model)
				out.answers = append(out.answers, at.Sub(m.at)-model)
			}
			out.opened, out.first, out.answers = out.opened.Sorted(), out.first.Sorted(), out.answers.Sorted()
			return reqs, out, nil
		}
		if err := retry.Sleep(ctx, 100*time.Millisecond); err != nil {
			return nil, burstTimes{}, err
		}
	}
}

// globalRESTLimit is Discord's global REST limit per bot token, requests
// a second (internal/discord's limiter enforces it).
const globalRESTLimit = 50

// snowflakes finds ids in a REST path.
var snowflakes = regexp.MustCompile(`[0-9]{15,20}`)

// restPerMention is the REST calls weft made per mention, and their
// routes with counts.
func restPerMention(reqs []discordtest.Request, mentions int) (float64, string) {
	count := map[string]int{}
	for _, r := range reqs {
		count[r.Method+" "+snowflakes.ReplaceAllString(r.Path, "{id}")]++
	}
	keys := slices.Sorted(maps.Keys(count))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s ×%d", k, count[k])
	}
	return float64(len(reqs)) / float64(max(mentions, 1)), strings.Join(parts, ", ")
}

// channelRequest splits a REST path /channels/{id}/{what}.
func channelRequest(r discordtest.Request) (channel, what string, ok bool) {
	rest, ok := strings.CutPrefix(r.Path, "/channels/")
	if !ok {
		return "", "", false
	}
	channel, what, ok = strings.Cut(rest, "/")
	return channel, what, ok && !strings.Contains(what, "/")
}
