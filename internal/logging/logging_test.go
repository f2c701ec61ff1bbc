package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// lines decodes the JSON lines written to b.
func lines(t *testing.T, b *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if l == "" {
			continue
		}
		m := map[string]any{}
		require.NoError(t, json.Unmarshal([]byte(l), &m))
		out = append(out, m)
	}
	return out
}

func newLogger(b *bytes.Buffer, level slog.Level, opts Options) *slog.Logger {
	return slog.New(New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: level}), opts))
}

func TestContextAttrs(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	log := newLogger(&b, slog.LevelDebug, Options{}).With("component", "processor")
	ctx := With(context.Background(), slog.String("request_id", "r1"), slog.String("component", "ignored"))
	ctx = With(ctx, slog.String("thread_id", "t1"))

	log.InfoContext(ctx, "one")
	log.InfoContext(ctx, "two", slog.String("thread_id", "own"))
	log.With("request_id", "logger's").InfoContext(ctx, "three")
	log.Info("four")
	log.With("component", "again").Info("five", slog.String("component", "line's"), slog.Int("n", 1), slog.Int("n", 2))

	got := lines(t, &b)
	require.Len(t, got, 5)
	require.Equal(t, "r1", got[0]["request_id"])
	require.Equal(t, "t1", got[0]["thread_id"])
	require.Equal(t, "processor", got[0]["component"])
	require.Equal(t, "own", got[1]["thread_id"], "the line's own key wins")
	require.Equal(t, "logger's", got[2]["request_id"], "the logger's own key wins")
	require.NotContains(t, got[3], "request_id")
	require.Equal(t, "processor", got[4]["component"], "the first component set wins")
	require.Equal(t, 1.0, got[4]["n"])
	// No key appears twice in any line (encoding/json keeps the last of
	// duplicates, so count in the raw text).
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		for _, k := range []string{`"component"`, `"request_id"`, `"thread_id"`, `"n"`} {
			require.LessOrEqual(t, strings.Count(l, k), 1, l)
		}
	}
}

func TestRepeatedFailuresOncePerInterval(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	log := newLogger(&b, slog.LevelInfo, Options{RepeatInterval: time.Hour})
	river, ingest := log.With("component", "river"), log.With("component", "ingest")
	for range 81 {
		river.Error("producer: Error fetching jobs")
		ingest.Error("producer: Error fetching jobs")
		river.Info("routine") // info lines are never held back
	}
	got := lines(t, &b)
	require.Len(t, got, 2+81)
	var errs int
	for _, l := range got {
		if l["level"] == "ERROR" {
			errs++
		}
	}
	require.Equal(t, 2, errs, "one line per component and message")
}

func TestRepeatsCountedWhenLetThrough(t *testing.T) {
	t.Parallel()
	rs := &repeats{seen: map[string]*repeat{}}
	t0 := time.Unix(0, 0)
	_, ok := rs.let("k", t0, time.Second)
	require.True(t, ok)
	for i := range 5 {
		_, ok = rs.let("k", t0.Add(time.Duration(i)*time.Millisecond), time.Second)
		require.False(t, ok)
	}
	held, ok := rs.let("k", t0.Add(time.Second), time.Second)
	require.True(t, ok)
	require.Equal(t, 5, held)
}

func TestRiverRoutineLinesAtDebug(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	log := newLogger(&b, slog.LevelInfo, Options{Demote: RiverDemote}).With("component", "river")
	log.Info("producer: Producer job counts", slog.Int("num_jobs_running", 1))
	log.Info("JobCleaner: Ran successfully", slog.Int("num_jobs_deleted", 0))
	log.Info("River client started")
	got := lines(t, &b)
	require.Len(t, got, 1)
	require.Equal(t, "River client started", got[0]["msg"])

	b.Reset()
	log = newLogger(&b, slog.LevelDebug, Options{Demote: RiverDemote})
	log.Info("producer: Producer job counts")
	got = lines(t, &b)
	require.Len(t, got, 1)
	require.Equal(t, "DEBUG", got[0]["level"])
}
