package bench

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
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
	model   *llmtest.Server
	timer   *modelTimer
	serve   *kit.Process
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
	duration := fs.Duration("duration", 30*time.Second, "how long the steady run of follow-ups lasts")
	rate := fs.Int("rate", 20, "follow-up messages per second, spread round-robin over the threads")
	threads := fs.Int("threads", 50, "tracked Discord threads, each opened by a mention before the steady run")
	wait := fs.Duration("wait", 30*time.Second, "how long to wait for the setup's and the steady run's replies")
	keep := fs.Bool("keep", false, "keep the scratch database afterwards")
	scratch := fs.String("db", "weft_bench_discord", "name of the scratch database (dropped first if it exists)")
	modelDelay := fs.Duration("model-delay", 0, "how long the fake model takes to answer: 0 is the issue's instant model; "+
		"above the typing delay (500ms) every turn shows the typing indicator, which is then measured")
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	if *rate < 1 || *threads < 1 || *duration <= 0 || *wait <= 0 {
		return badFlags(fs, stderr)
	}

	url, cleanup, err := scratchDatabase(ctx, cfg, logger, *scratch, *keep)
	if err != nil {
		return err
	}
	defer cleanup()
	b, err := startDiscordBench(ctx, url, *modelDelay)
	if err != nil {
		return err
	}
	defer b.close(logger)
	fmt.Fprintf(stdout, "weft-bench discord: weft serve pid %d on scratch database %s; fakes: discordtest (REST + gateway), llmtest (model answering at once)\n\n", b.serve.PID(), *scratch)

	// Setup: one mention per thread, paced at the steady rate, then every
	// thread's first reply.
	mentions := make([]discordPost, *threads)
	startup := len(b.discord.Requests())
	for i := range mentions {
		if err := retry.Sleep(ctx, time.Second/time.Duration(*rate)); err != nil {
			return err
		}
		at := time.Now()
		m := b.discord.PostUserMessage(b.channel, b.user, fmt.Sprintf("<@%s> %s why does the login redirect lose the return URL?", b.discord.BotUser().ID, benchTag(i)))
		// A thread started from a message has the message's id.
		mentions[i] = discordPost{channel: m.ID, tag: i, at: at}
	}
	opened, missing, err := b.await(ctx, mentions, *wait)
	if err != nil {
		return err
	}
	// The steady run starts once the mentions' work is all done (answers
	// after notices, joins), so it times follow-ups alone.
	setupRequests, burst, err := b.settle(ctx, startup, mentions, *wait)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Setup: %d mentions at %d/s, %d threads answered:\n", *threads, *rate, len(opened.total))
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "figure\tsamples\tp50\tp99\tmax\ttarget\t")
	mentionOK := opened.own.Percentile(99) <= targetDiscordReplyP99
	fmt.Fprintf(tw, "mention dispatched → first reply at fake, our time\t%d\t%s\t%s\t%s\tp99 ≤ %s %s\t\n", len(opened.own),
		ms(opened.own.Percentile(50)), ms(opened.own.Percentile(99)), ms(opened.own.Percentile(100)), targetDiscordReplyP99, verdict(mentionOK))
	fmt.Fprintf(tw, "  of which end to end (model included)\t%d\t%s\t%s\t%s\t\t\n", len(opened.total),
		ms(opened.total.Percentile(50)), ms(opened.total.Percentile(99)), ms(opened.total.Percentile(100)))
	for _, r := range []struct {
		name string
		l    kit.Latencies
	}{
		{"  of which → thread opened at fake (gateway, lane, REST)", burst.opened},
		{"  of which thread opened → first reply (turn, discovery, REST)", burst.first},
		{"mention dispatched → its answer (last reply), our time", burst.answers},
	} {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t\t\n", r.name, len(r.l), ms(r.l.Percentile(50)), ms(r.l.Percentile(99)), ms(r.l.Percentile(100)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	perMention, routes := restPerMention(setupRequests, *threads)
	// The protocol's ceiling: every REST call of every mention shares the
	// bot's global limit, so mentions faster than it allows queue there.
	ceiling := float64(globalRESTLimit) / perMention
	fmt.Fprintf(stdout, "REST calls per mention: %.1f (%s); Discord's global limit of %d/s allows %.1f mentions/s (anchor); offered %d/s = %.2f× it\n",
		perMention, routes, globalRESTLimit, ceiling, *rate, float64(*rate)/ceiling)
	if missing > 0 {
		return fmt.Errorf("%d of %d mentions got no reply within %s\nweft serve stderr:\n%s", missing, *threads, *wait, b.serve.Stderr())
	}

	// Steady load: follow-ups open-loop, round-robin over the threads.
	n := int(duration.Seconds() * float64(*rate))
	posts := make([]discordPost, 0, n)
	var lag time.Duration
	start := time.Now()
	for i := range n {
		sched := start.Add(time.Duration(i) * time.Second / time.Duration(*rate))
		if err := retry.Sleep(ctx, time.Until(sched)); err != nil {
			return err
		}
		th := mentions[i%len(mentions)].channel
		tag := *threads + i
		at := time.Now()
		lag = max(lag, at.Sub(sched))
		b.discord.PostUserMessage(th, b.user, fmt.Sprintf("follow-up %s: and what about the logout redirect?", benchTag(tag)))
		posts = append(posts, discordPost{channel: th, tag: tag, at: at})
	}
	got, missing, err := b.await(ctx, posts, *wait)
	if err != nil {
		return err
	}

	pass := missing == 0 && mentionOK
	fmt.Fprintf(stdout, "\nSteady %d/s for %s over %d threads: %d follow-ups, %d replies, %d with a typing indicator of their own (generator lag max %s)\n",
		*rate, *duration, *threads, len(posts), len(got.total), len(got.typing), ms(lag))
	tw = tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "figure\tsamples\tp50\tp99\tp99.9\tmax\ttarget\t")
	row := func(name string, l kit.Latencies, target string) {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t\n", name, len(l), ms(l.Percentile(50)), ms(l.Percentile(99)), ms(l.Percentile(99.9)), ms(l.Percentile(100)), target)
	}
	ownOK := got.own.Percentile(99) <= targetDiscordReplyP99 && missing == 0
	pass = pass && ownOK
	row("message dispatched → reply at fake, our time", got.own, fmt.Sprintf("p99 ≤ %s, all answered %s", targetDiscordReplyP99, verdict(ownOK)))
	row("  of which end to end (model included)", got.total, "")
	row("  of which model calls (excluded)", got.model, "")
	// A post without a typing POST of its own passes if its reply came
	// within the typing target: nobody was left waiting without a sign.
	typingOK := got.typing.Percentile(99) <= targetDiscordTypingP99 && got.untyped.Percentile(100) <= targetDiscordTypingP99
	pass = pass && typingOK
	row("message dispatched → first typing at fake", got.typing, fmt.Sprintf("p99 ≤ %s %s", targetDiscordTypingP99, verdict(typingOK)))
	row("  no typing of its own: reply (model included)", got.untyped, fmt.Sprintf("all ≤ %s", targetDiscordTypingP99))
	if err := tw.Flush(); err != nil {
		return err
	}
	if missing > 0 {
		fmt.Fprintf(stdout, "note: %d follow-ups had no reply within %s\n", missing, *wait)
	}

	_, peak, err := b.serve.Memory()
	if err != nil {
		return err
	}
	pass = pass && peak <= targetRSS
	fmt.Fprintf(stdout, "\npeak RSS of weft serve (VmHWM): %s (target ≤ %s) %s\n", mib(peak), mib(targetRSS), verdict(peak <= targetRSS))
	fmt.Fprintf(stdout, "\noverall: %s\n", verdict(pass))
	return nil
}

// startDiscordBench starts the fakes and weft serve on the database at url,
// and waits until weft is ready and its gateway has identified.
func startDiscordBench(ctx context.Context, url string, modelDelay time.Duration) (_ *discordBench, err error) {
	b := &discordBench{discord: discordtest.NewServer(nil), model: llmtest.NewServer(nil),
		user: discordtest.User{ID: "200000000000000001", Name: "ada"}}
	b.model.SetDefault(func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "The redirect drops the return URL; keep it in the state parameter.", Delay: modelDelay}
	})
	b.timer, err = newModelTimer(b.model.URL())
	if err != nil {
		b.discord.Close()
		b.model.Close()
		return nil, err
	}
	defer func() {
		if err != nil {
			b.discord.Close()
			b.timer.Close()
			b.model.Close()
		}
	}()
	b.channel = b.discord.AddChannel(discordBenchGuild)

	var addr string
	b.serve, addr, err = startServe(url, "all", b.timer.URL+"/v1",
		"DISCORD_BOT_TOKEN="+discordtest.Token, "DISCORD_API_URL="+b.discord.URL(), "DISCORD_GATEWAY_URL=",
		"DISCORD_APPLICATION_ID="+b.discord.ApplicationID(), "DISCORD_ALLOWED_GUILDS="+discordBenchGuild,
		"DISCORD_PUBLIC_KEY="+discordtest.NewInteractionSigner().PublicKeyHex(), "DISCORD_SHARD_COUNT=1")
	if err != nil {
		return nil, err
	}
	// The model fakes live as long as the server that calls them.
	go func() { <-b.serve.Done(); b.timer.Close(); b.model.Close() }()
	if err := b.serve.WaitReady(ctx, "http://"+addr+"/readyz", 60*time.Second); err != nil {
		_ = b.serve.Stop(5 * time.Second)
		return nil, fmt.Errorf("%w\nweft serve stderr:\n%s", err, b.serve.Stderr())
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(b.discord.Identifies()) == 0 {
		if time.Now().After(deadline) {
			_ = b.serve.Stop(5 * time.Second)
			return nil, fmt.Errorf("weft's gateway never identified\nweft serve stderr:\n%s", b.serve.Stderr())
		}
		if err := retry.Sleep(ctx, 20*time.Millisecond); err != nil {
			_ = b.serve.Stop(5 * time.Second)
			return nil, err
		}
	}
	return b, nil
}

func (b *discordBench) close(logger *slog.Logger) {
	if err := b.serve.Stop(15 * time.Second); err != nil {
		logger.Warn("stop weft serve", slog.Any("error", err), slog.String("stderr", b.serve.Stderr()))
	}
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

// benchTag marks the i-th message the bench posts, so that the model calls
// it causes can be told apart.
func benchTag(i int) string { return "wbm-" + strconv.Itoa(i) }

// benchTagPattern finds tags in a model request.
var benchTagPattern = regexp.MustCompile(`wbm-(\d+)`)

// modelTimer is a reverse proxy in front of the fake model that times each
// call, attributing it to the last tag in the request: the newest message
// of the conversation, the one that caused the turn.
type modelTimer struct {
	*httptest.Server

	mu    sync.Mutex
	spent map[int]time.Duration
}

func newModelTimer(target string) (*modelTimer, error) {
	u, err := neturl.Parse(target)
	if err != nil {
		return nil, err
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	t := &modelTimer{spent: map[int]time.Duration{}}
	t.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		start := time.Now()
		proxy.ServeHTTP(w, r)
		took := time.Since(start)
		if m := benchTagPattern.FindAllSubmatch(body, -1); len(m) > 0 {
			tag, _ := strconv.Atoi(string(m[len(m)-1][1]))
			t.mu.Lock()
			t.spent[tag] += took
			t.mu.Unlock()
		}
	}))
	return t, nil
}

// Spent is the time the model calls caused by the tag's message took.
func (t *modelTimer) Spent(tag int) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.spent[tag]
}
