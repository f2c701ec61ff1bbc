package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/app"
	"github.com/weft-dev/weft/internal/thread"
)

const (
	threadUsage = `usage: weft thread create --goal TEXT [--detach]
       weft thread show ID
       weft thread reply ID TEXT

  create  create an autonomous thread and work it in this process, printing
          each step, until it finishes (--detach: only create it, for a
          running weft serve to work)
  show    print a thread and its stitches as a timeline
  reply   answer a thread that waits for a person: its question, or a
          request for approval ("approve", "deny: why"); a running weft
          serve takes the turn up
`
	createUsage = "usage: weft thread create --goal TEXT [--detach]\n\n"
	showUsage   = "usage: weft thread show ID\n"
	replyUsage  = "usage: weft thread reply ID TEXT\n"
)

func threadCmd(ctx context.Context, cfg *app.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return badUsage(stderr, "thread")
	}
	switch args[0] {
	case "create":
		return threadCreate(ctx, cfg, logger, args[1:], stdout, stderr)
	case "show":
		if len(args) == 2 && isHelp(args[1]) {
			fmt.Fprint(stdout, showUsage)
			return nil
		}
		if len(args) != 2 {
			fmt.Fprint(stderr, showUsage)
			return errUsage
		}
		return threadShow(ctx, cfg, logger, args[1], stdout)
	case "reply":
		if len(args) == 2 && isHelp(args[1]) {
			fmt.Fprint(stdout, replyUsage)
			return nil
		}
		if len(args) < 3 || strings.TrimSpace(strings.Join(args[2:], " ")) == "" {
			fmt.Fprint(stderr, replyUsage)
			return errUsage
		}
		return threadReply(ctx, cfg, logger, args[1], strings.Join(args[2:], " "), stdout)
	}
	if isHelp(args[0]) {
		fmt.Fprint(stdout, threadUsage)
		return nil
	}
	fmt.Fprintf(stderr, "weft thread: unknown action %q (want create, show or reply)\n", args[0])
	return errUsage
}

// progressPoll is how often `thread create` looks for new stitches to print.
const progressPoll = 100 * time.Millisecond

// threadCreate creates an autonomous thread and, unless detached, works it
// in this process, printing each step, until it finishes.
func threadCreate(ctx context.Context, cfg *app.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("weft thread create", flag.ContinueOnError)
	goal := fs.String("goal", "", "what the thread should achieve (required)")
	detach := fs.Bool("detach", false, "only create the thread; a running `weft serve` works it")
	if done, err := parseFlags(fs, args, createUsage, stdout, stderr); done {
		return err
	}
	if strings.TrimSpace(*goal) == "" {
		fmt.Fprint(stderr, "weft thread create: --goal is required\n")
		return errUsage
	}
	// Detached, it only enqueues; else it works jobs here, serving nothing.
	c := *cfg
	c.Role = "worker"
	if *detach {
		c.Role = "api"
	}
	a, err := app.New(ctx, &c, logger)
	if err != nil {
		return err
	}
	defer a.Close()
	in := a.Ingester()
	th, err := in.StartThread(ctx, in.Builder().WithGoal(*goal).Autonomous().
		WithInitialPrompt(thread.Stitch{Content: *goal, Source: thread.PlatformCLI}))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "thread %s created\n", th.ID)
	if *detach {
		return nil
	}
	if err := a.Work(ctx); err != nil {
		return err
	}
	defer func() { _ = a.Stop(ctx) }()
	store := a.Store()

	var printed int64
	tick := time.NewTicker(progressPoll)
	defer tick.Stop()
	for {
		ss, err := store.Stitches(ctx, th.ID, db.StitchPage{After: printed})
		if err != nil {
			return err
		}
		for i := range ss {
			printStitch(stdout, &ss[i])
			printed = ss[i].Seq
		}
		cur, err := store.Thread(ctx, th.ID)
		if err != nil {
			return err
		}
		if cur.Status.Final() && cur.LeaseOwner == "" && cur.StitchCount == printed {
			fmt.Fprintf(stdout, "thread %s %s\n", th.ID, cur.Status)
			if cur.Status != thread.StatusCompleted {
				return fmt.Errorf("thread %s: %s", cur.Status, cur.Error)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			fmt.Fprintf(stdout, "interrupted; the thread goes on when `weft serve` runs: weft thread show %s\n", th.ID)
			return nil
		case <-tick.C:
		}
	}
}

// threadReply answers a thread that waits for a person (a question, or a
// request for approval) with text, as its CLI user: the input and the turn
// that answers it, for a running weft serve to work.
func threadReply(ctx context.Context, cfg *app.Config, logger *slog.Logger, idText, text string, stdout io.Writer) error {
	id, err := uuid.Parse(idText)
	if err != nil {
		return fmt.Errorf("thread id %q: %w", idText, err)
	}
	c := *cfg
	c.Role = "api" // only enqueue: a running weft serve works the turn
	a, err := app.New(ctx, &c, logger)
	if err != nil {
		return err
	}
	defer a.Close()
	th, err := a.Store().Thread(ctx, id)
	if errors.Is(err, thread.ErrNotFound) {
		return fmt.Errorf("no thread %s", id)
	}
	if err != nil {
		return err
	}
	if th.Status != thread.StatusWaiting || th.WaitingReason == thread.WaitingIdle {
		return fmt.Errorf("thread %s is not waiting for an answer (it is %s)", id, th.Status)
	}
	s, err := a.Ingester().AddInput(ctx, id, thread.Stitch{Type: thread.StitchInitialPrompt, Content: strings.TrimSpace(text), Source: thread.PlatformCLI})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "reply recorded as stitch #%d; weft serve answers it: weft thread show %s\n", s.Seq, id)
	return nil
}

// threadShow prints a thread and its stitches as a timeline.
func threadShow(ctx context.Context, cfg *app.Config, logger *slog.Logger, idText string, stdout io.Writer) error {
	id, err := uuid.Parse(idText)
	if err != nil {
		return fmt.Errorf("thread id %q: %w", idText, err)
	}
	store, pool, err := app.Open(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer pool.Close()
	th, err := store.Thread(ctx, id)
	if errors.Is(err, thread.ErrNotFound) {
		return fmt.Errorf("no thread %s", id)
	}
	if err != nil {
		return err
	}
	status := string(th.Status)
	if th.WaitingReason != "" {
		status += " (" + string(th.WaitingReason) + ")"
	}
	fmt.Fprintf(stdout, "thread %s  %s  %s  %d stitches\ngoal: %s\n", th.ID, th.Type, status, th.StitchCount, th.Goal)
	if len(th.Result) > 0 {
		fmt.Fprintf(stdout, "result: %s\n", th.Result)
	}
	if th.Error != "" {
		fmt.Fprintf(stdout, "error: %s\n", th.Error)
	}
	fmt.Fprintln(stdout)
	var after int64
	for {
		ss, err := store.Stitches(ctx, id, db.StitchPage{After: after})
		if err != nil {
			return err
		}
		for i := range ss {
			printStitch(stdout, &ss[i])
			after = ss[i].Seq
		}
		if len(ss) < db.MaxStitchPage {
			return nil
		}
	}
}

// maxLine keeps one step of the timeline to a readable width.
const maxLine = 160

// printStitch prints one step of a timeline: position, time, type and what
// happened, on one line.
func printStitch(w io.Writer, s *thread.Stitch) {
	var what string
	switch s.Type {
	case thread.StitchLLMCall:
		what = fmt.Sprintf("%s %d→%d tokens %s", s.Model, s.InputTokens, s.OutputTokens, s.Latency.Round(time.Millisecond))
		if s.Content != "" {
			what += ": " + s.Content
		}
	case thread.StitchToolCall:
		what = fmt.Sprintf("%s(%s) → %s", s.ToolName, s.ToolInput, s.Content)
	default:
		what = s.Content
		if s.Author != nil && s.Author.Name != "" {
			what = s.Author.Name + ": " + what
		}
	}
	what = strings.Join(strings.Fields(what), " ")
	if r := []rune(what); len(r) > maxLine {
		what = string(r[:maxLine-1]) + "…"
	}
	fmt.Fprintf(w, "%4d  %s  %-21s %s\n", s.Seq, s.CreatedAt.Local().Format("15:04:05"), s.Type, what)
}
