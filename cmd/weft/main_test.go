package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/app"
)

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestMigrateAndOps(t *testing.T) {
	t.Parallel()
	url := dbtest.URL(t)
	e := env(map[string]string{"DATABASE_URL": url})
	ctx := context.Background()
	weft := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(ctx, append([]string{"weft"}, args...), e, &out, &errOut)
		return out.String(), err
	}

	out, err := weft("migrate", "status")
	require.NoError(t, err)
	require.Contains(t, out, "00001_threads.sql")
	require.NotContains(t, out, "pending")

	out, err = weft("migrate", "down")
	require.NoError(t, err)
	require.Contains(t, out, "rolled back")
	out, err = weft("migrate", "status")
	require.NoError(t, err)
	require.Contains(t, out, "pending")
	out, err = weft("migrate", "up")
	require.NoError(t, err)
	require.Contains(t, out, "applied")

	out, err = weft("ops")
	require.NoError(t, err)
	for _, v := range db.Views() {
		require.Contains(t, out, v)
	}
	for _, v := range db.Views() {
		out, err = weft("ops", v)
		require.NoError(t, err, v)
		require.Contains(t, out, "(0 rows)", v)
	}

	store, p, err := app.Open(ctx, &app.Config{DatabaseURL: url}, dbtest.Logger(t))
	require.NoError(t, err)
	defer p.Close()
	for i := range 3 {
		_, err := store.Pool().Exec(ctx, `INSERT INTO threads (thread_id, thread_type, goal) VALUES (gen_random_uuid(), 'autonomous', $1)`,
			fmt.Sprintf("goal number %d with a rather long description that must be cut in the table", i))
		require.NoError(t, err)
	}
	out, err = weft("ops", "thread_overview")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 5, out) // header, 3 rows, count
	require.True(t, strings.HasPrefix(lines[0], "THREAD_ID"), out)
	// Aligned: every row's status column starts where the header's does.
	col := strings.Index(lines[0], "STATUS")
	for _, l := range lines[1:4] {
		require.Equal(t, "pending", strings.Fields(l[col:])[0], out)
	}
	require.Equal(t, "(3 rows)", lines[4])

	_, err = weft("ops", "no_such_view")
	require.Error(t, err)
	_, err = weft("migrate", "sideways")
	require.ErrorIs(t, err, errUsage)
	_, err = weft("frobnicate")
	require.ErrorIs(t, err, errUsage)
}

// TestHelp: every subcommand's --help prints its usage and succeeds,
// without touching the database (the configuration here has none, and an
// invalid role: serve or mcp starting would fail), and the top-level help
// names every subcommand.
func TestHelp(t *testing.T) {
	t.Parallel()
	e := env(map[string]string{"DATABASE_URL": "postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=1", "WEFT_ROLE": "neither"})
	weft := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(context.Background(), append([]string{"weft"}, args...), e, &out, &bytes.Buffer{})
		return out.String(), err
	}
	for _, args := range [][]string{
		{"help"}, {"--help"}, {"-h"}, {"help", "serve"},
		{"serve", "--help"}, {"serve", "-h"}, {"mcp", "--help"}, {"migrate", "--help"}, {"ops", "--help"},
		{"thread", "--help"}, {"thread", "create", "--help"}, {"thread", "show", "--help"}, {"thread", "reply", "--help"}, {"bench", "--help"},
		{"version", "--help"},
	} {
		out, err := weft(args...)
		require.NoError(t, err, args)
		require.Contains(t, out, "usage", args)
	}
	out, err := weft("help")
	require.NoError(t, err)
	for _, cmd := range []string{"serve", "demo", "migrate", "ops", "thread create", "thread show", "mcp", "bench store|turns|linear|replies|discord|slack|github|console|stream|tools|soak|scale", "help"} {
		require.Contains(t, out, "weft "+cmd)
	}
	out, err = weft("thread", "create", "--help")
	require.NoError(t, err)
	require.Contains(t, out, "-detach")
	_, err = weft("serve", "extra")
	require.ErrorIs(t, err, errUsage)
}

// TestVersion: weft version answers without a configuration (the
// environment here is invalid) with the stamped version and toolchain.
func TestVersion(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	err := run(context.Background(), []string{"weft", "version"}, env(map[string]string{"WEFT_ROLE": "neither"}), &out, &bytes.Buffer{})
	require.NoError(t, err)
	require.Regexp(t, `^weft dev \(.*go1\.[0-9.]+ [a-z0-9]+/[a-z0-9]+\)\n$`, out.String())
	err = run(context.Background(), []string{"weft", "version", "extra"}, env(nil), &bytes.Buffer{}, &bytes.Buffer{})
	require.ErrorIs(t, err, errUsage)
}

// TestBinaryLinksNoTesting: the weft binary carries no testing package
// (benchmarks live in weft-bench), and the fakes only for weft demo.
func TestBinaryLinksNoTesting(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", ".").Output()
	require.NoError(t, err)
	const weft = "github.com/weft-dev/weft/"
	fake := func(pkg string) bool { return strings.HasPrefix(pkg, weft) && strings.HasSuffix(pkg, "test") }
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, " ")
		require.False(t, pkg == "testing" || strings.HasPrefix(pkg, "testing/"), "cmd/weft links %s", pkg)
		for _, imp := range strings.Fields(imports) {
			require.False(t, fake(imp) && pkg != weft+"internal/demo" && !fake(pkg), "%s links the fake %s", pkg, imp)
		}
	}
}

func TestDemoHelp(t *testing.T) {
	t.Parallel()
	var stdout bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"weft", "demo", "-h"}, env(nil), &stdout, &bytes.Buffer{}))
	require.True(t, strings.HasPrefix(stdout.String(), "Usage: weft demo"))
	require.Equal(t, 1, strings.Count(stdout.String(), "Usage:"))
	require.Contains(t, stdout.String(), "  -exit\n", "the flags are listed")
	require.ErrorIs(t, run(context.Background(), []string{"weft", "demo", "extra"}, env(nil), &bytes.Buffer{}, &bytes.Buffer{}), errUsage)

	// The demo listens where WEFT_ADDR says, as serve does.
	stdout.Reset()
	require.NoError(t, run(context.Background(), []string{"weft", "demo", "-h"}, env(map[string]string{"WEFT_ADDR": "127.0.0.1:18181"}), &stdout, &bytes.Buffer{}))
	require.Contains(t, stdout.String(), `(default "127.0.0.1:18181")`)
}

// TestImportRules keeps the package map's rules (docs/architecture.md): the
// domain imports nothing of weft, the seam's shared shapes only the
// domain, and a platform client only the domain, the seam's shapes (its
// error kind and webhook reading), the retry helper and the cache,
// never another client.
func TestImportRules(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "../../...").Output()
	require.NoError(t, err)
	const weft = "github.com/weft-dev/weft/"
	allowed := map[string][]string{
		"internal/thread":  nil,
		"internal/surface": {"internal/thread"},
		"internal/linear":  {"internal/thread", "internal/surface", "internal/retry"},
		"internal/discord": {"internal/thread", "internal/surface", "internal/retry"},
		"internal/slack":   {"internal/thread", "internal/surface", "internal/retry", "internal/ttlcache"},
		"internal/github":  {"internal/thread", "internal/surface", "internal/surface/webhook"},
		"internal/llm":     {"internal/retry"},
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, " ")
		ok, ruled := allowed[strings.TrimPrefix(pkg, weft)]
		if !ruled {
			continue
		}
		seen++
		for _, imp := range strings.Fields(imports) {
			if strings.HasPrefix(imp, weft) {
				require.Contains(t, ok, strings.TrimPrefix(imp, weft), "%s may not import %s", pkg, imp)
			}
		}
	}
	require.Equal(t, len(allowed), seen, "every ruled package was listed")
}
