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
	"github.com/weft-dev/weft/internal/thread"
)

func threadCmd(ctx context.Context, cfg *config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, "usage: weft thread create --goal TEXT [--detach] | weft thread show ID\n")
		return errUsage
	}
	switch args[0] {
	case "create":
		return threadCreate(ctx, cfg, logger, args[1:], stdout, stderr)
	case "show":
		if len(args) != 2 {
			fmt.Fprint(stderr, "usage: weft thread show ID\n")
			return errUsage
		}
		return threadShow(ctx, cfg, logger, args[1], stdout)
	}
	fmt.Fprintf(stderr, "weft thread: unknown action %q (want create or show)\n", args[0])
	return errUsage
}

// progressPoll is how often `thread create` looks for new stitches to print.
const progressPoll = 100 * time.Millisecond

// threadCreate creates an autonomous thread and, unless detached, works it
// in this process, printing each step, until it finishes.
func threadCreate(ctx context.Context, cfg *config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("weft thread create", flag.ContinueOnError)
	fs.SetOutput(stderr)
	goal := fs.String("goal", "", "what the thread should achieve (required)")
	detach := fs.Bool("detach", false, "only create the thread; a running `weft serve` works it")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if strings.TrimSpace(*goal) == "" {
		fmt.Fprint(stderr, "weft thread create: --goal is required\n")
		return errUsage
	}
	store, pool, err := openMigrated(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer pool.Close()
	eng, err := newEngine(ctx, cfg, logger, store, store, !*detach)
	if err != nil {
		return err
	}
	th, err := eng.ingest.StartThread(ctx, eng.ingest.Builder().WithGoal(*goal).Autonomous().
		WithInitialPrompt(thread.Stitch{Content: *goal, Source: thread.PlatformCLI}))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "thread %s created\n", th.ID)
	if *detach {
		return nil
	}
	if err := eng.proc.Start(ctx); err != nil {
		return err
	}
	defer func() { _ = eng.stop(ctx, logger, cfg.ShutdownTimeout) }()

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

// threadShow prints a thread and its stitches as a timeline.
func threadShow(ctx context.Context, cfg *config, logger *slog.Logger, idText string, stdout io.Writer) error {
	id, err := uuid.Parse(idText)
	if err != nil {
		return fmt.Errorf("thread id %q: %w", idText, err)
	}
	store, pool, err := openStore(ctx, cfg, logger)
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
