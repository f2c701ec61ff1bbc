package app

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/thread"
)

func TestConfigPools(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		env          map[string]string
		work, intake int
		wantErr      bool
	}{
		{name: "Defaults", work: 4, intake: 8},
		{name: "Set", env: map[string]string{"WEFT_DB_CONNS": "20", "WEFT_INTAKE_DB_CONNS": "12"}, work: 20, intake: 12},
		{name: "NotANumber", env: map[string]string{"WEFT_DB_CONNS": "many"}, wantErr: true},
		{name: "Zero", env: map[string]string{"WEFT_INTAKE_DB_CONNS": "0"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := LoadConfig(func(k string) string { return tc.env[k] })
			if tc.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.work, cfg.DBConns)
			require.Equal(t, tc.intake, cfg.intakeDB().DBConns, "the intake pool is sized apart")
			require.Equal(t, tc.work, cfg.DBConns, "sizing the intake leaves the processor's pool as it was")
		})
	}
}

func TestConfigPersona(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file, empty := filepath.Join(dir, "persona.txt"), filepath.Join(dir, "empty.txt")
	require.NoError(t, os.WriteFile(file, []byte("You are Ada, Acme's release engineer.\n"), 0o600))
	require.NoError(t, os.WriteFile(empty, []byte(" \n"), 0o600))
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    string
		wantErr bool
	}{
		{name: "Default", want: ""},
		{name: "Text", env: map[string]string{"WEFT_PERSONA": " You are Ada. "}, want: "You are Ada."},
		{name: "File", env: map[string]string{"WEFT_PERSONA_FILE": file}, want: "You are Ada, Acme's release engineer."},
		{name: "Both", env: map[string]string{"WEFT_PERSONA": "x", "WEFT_PERSONA_FILE": file}, wantErr: true},
		{name: "MissingFile", env: map[string]string{"WEFT_PERSONA_FILE": filepath.Join(dir, "nope")}, wantErr: true},
		{name: "EmptyFile", env: map[string]string{"WEFT_PERSONA_FILE": empty}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := LoadConfig(func(k string) string { return tc.env[k] })
			if tc.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, cfg.Persona)
		})
	}
}

func TestConfigEcho(t *testing.T) {
	t.Parallel()
	type policies = map[thread.Platform]thread.EchoPolicy
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    policies
		idle    time.Duration
		wantErr string
	}{
		{name: "Defaults", idle: 10 * time.Minute,
			want: policies{thread.PlatformLinear: thread.EchoSummary, thread.PlatformDiscord: thread.EchoAnswers, thread.PlatformSlack: thread.EchoAnswers,
				thread.PlatformGitHub: thread.EchoSummary}},
		{name: "Set", env: map[string]string{"WEFT_ECHO_LINEAR": "everything", "WEFT_ECHO_DISCORD": "None", "WEFT_ECHO_SLACK": " summary ", "WEFT_ECHO_IDLE": "90s"},
			idle: 90 * time.Second,
			want: policies{thread.PlatformLinear: thread.EchoEverything, thread.PlatformDiscord: thread.EchoNone, thread.PlatformSlack: thread.EchoSummary,
				thread.PlatformGitHub: thread.EchoSummary}},
		{name: "OneSet", env: map[string]string{"WEFT_ECHO_DISCORD": "summary"}, idle: 10 * time.Minute,
			want: policies{thread.PlatformLinear: thread.EchoSummary, thread.PlatformDiscord: thread.EchoSummary, thread.PlatformSlack: thread.EchoAnswers,
				thread.PlatformGitHub: thread.EchoSummary}},
		{name: "GitHub", env: map[string]string{"WEFT_ECHO_GITHUB": "answers"}, idle: 10 * time.Minute,
			want: policies{thread.PlatformLinear: thread.EchoSummary, thread.PlatformDiscord: thread.EchoAnswers, thread.PlatformSlack: thread.EchoAnswers,
				thread.PlatformGitHub: thread.EchoAnswers}},
		{name: "UnknownPolicy", env: map[string]string{"WEFT_ECHO_LINEAR": "all"},
			wantErr: `WEFT_ECHO_LINEAR: invalid: echo policy "all" is not everything, answers, summary or none`},
		{name: "UnknownSlackPolicy", env: map[string]string{"WEFT_ECHO_SLACK": "answer"}, wantErr: `WEFT_ECHO_SLACK: invalid: echo policy "answer"`},
		{name: "IdleNotADuration", env: map[string]string{"WEFT_ECHO_IDLE": "10"}, wantErr: `WEFT_ECHO_IDLE: "10" is not a positive duration`},
		{name: "IdleNegative", env: map[string]string{"WEFT_ECHO_IDLE": "-1m"}, wantErr: `WEFT_ECHO_IDLE: "-1m" is not a positive duration`},
		{name: "IdleZero", env: map[string]string{"WEFT_ECHO_IDLE": "0s"}, wantErr: `WEFT_ECHO_IDLE: "0s" is not a positive duration`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := LoadConfig(func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, cfg.Echo.Policies)
			require.Equal(t, tc.idle, cfg.Echo.Idle)
		})
	}
}

func TestConfigMCP(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.json"), filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(good, []byte(`{"mcpServers": {"gh": {"url": "https://x/mcp", "headers": {"A": "${TOKEN}"}}}}`), 0o600))
	require.NoError(t, os.WriteFile(bad, []byte("{\"mcpServers\": {\n \"gh\": {\"url\": \"x\" \"oops\"}}}"), 0o600))
	env := map[string]string{"WEFT_MCP_CONFIG": good, "TOKEN": "t"}
	cfg, err := LoadConfig(func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Equal(t, "t", cfg.MCP.Servers["gh"].Headers["A"])
	env["WEFT_MCP_CONFIG"] = bad
	_, err = LoadConfig(func(k string) string { return env[k] })
	require.ErrorContains(t, err, "bad.json: line 2:", "a bad file stops weft at start with the line")
	delete(env, "WEFT_MCP_CONFIG")
	cfg, err = LoadConfig(func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Nil(t, cfg.MCP)
}

// The fast model may have its own provider (relevant-thread-discovery.md
// ranks with a cheaper model): WEFT_FAST_LLM_PROVIDER, its key and base URL.
func TestConfigFastProvider(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		env     map[string]string
		fast    FastProvider
		model   string
		wantErr string
	}{
		{name: "TheAgentsProvider", env: map[string]string{"WEFT_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "sk"}, model: "gpt-4o-mini"},
		{name: "AnotherProvider", env: map[string]string{"WEFT_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "sk",
			"WEFT_FAST_LLM_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "ak"},
			fast: FastProvider{Provider: "anthropic", APIKey: "ak"}, model: "claude-haiku-4-5"},
		{name: "OwnKeyAndURL", env: map[string]string{"WEFT_LLM_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "ak",
			"WEFT_FAST_LLM_PROVIDER": "openai", "WEFT_FAST_LLM_API_KEY": "local", "WEFT_FAST_LLM_BASE_URL": "http://127.0.0.1:11434/v1", "WEFT_FAST_MODEL": "llama3.2"},
			fast: FastProvider{Provider: "openai", APIKey: "local", BaseURL: "http://127.0.0.1:11434/v1"}, model: "llama3.2"},
		{name: "BaseURLAlone", env: map[string]string{"WEFT_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "sk", "WEFT_FAST_LLM_BASE_URL": "http://fast/v1"},
			fast: FastProvider{Provider: "openai", APIKey: "sk", BaseURL: "http://fast/v1"}, model: "gpt-4o-mini"},
		{name: "UnknownProvider", env: map[string]string{"WEFT_FAST_LLM_PROVIDER": "gemini"}, wantErr: "WEFT_FAST_LLM_PROVIDER"},
		{name: "NoProviderAtAll", env: map[string]string{"WEFT_FAST_LLM_BASE_URL": "http://fast/v1"}, wantErr: "WEFT_FAST_LLM_PROVIDER"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := LoadConfig(env(tc.env))
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.fast, cfg.Fast)
			require.Equal(t, tc.model, cfg.FastModel)
		})
	}
}
