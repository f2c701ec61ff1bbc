package app

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/weft-dev/weft/internal/agent"
	"github.com/weft-dev/weft/internal/attachment"
	"github.com/weft-dev/weft/internal/discovery"
	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/mcpclient"
	"github.com/weft-dev/weft/internal/outbox"
	"github.com/weft-dev/weft/internal/processor"
	surfacediscord "github.com/weft-dev/weft/internal/surface/discord"
	surfacegithub "github.com/weft-dev/weft/internal/surface/github"
	surfacelinear "github.com/weft-dev/weft/internal/surface/linear"
	surfaceslack "github.com/weft-dev/weft/internal/surface/slack"
	"github.com/weft-dev/weft/internal/thread"
)

// Config is weft's configuration, read once from the environment by
// LoadConfig; a caller may then change it (a demo points the platforms at
// fakes) before New.
type Config struct {
	DatabaseURL string
	// DatabaseDirectURL is WEFT_DATABASE_DIRECT_URL: the database itself,
	// when DATABASE_URL goes through a transaction pooler (PgBouncer).
	// Migrations and River's client (LISTEN/NOTIFY, leader election) use
	// it; set, it implies DatabasePooler "transaction".
	DatabaseDirectURL string
	// DatabasePooler is WEFT_DATABASE_POOLER: "transaction" when
	// DATABASE_URL goes through a pooler in transaction pooling, which
	// keeps no prepared statement, LISTEN or session lock past a
	// transaction; "" for a direct connection.
	DatabasePooler  string
	Addr            string
	LogLevel        string
	ShutdownTimeout time.Duration
	// APIToken is WEFT_API_TOKEN, the bearer token of the REST API, /mcp
	// and /metrics; empty turns them off.
	APIToken string
	// DebugAddr is WEFT_DEBUG_ADDR: when set, Go's pprof profiles are
	// served there, on their own listener and never on Addr.
	DebugAddr string
	// MetricsAddr is WEFT_METRICS_ADDR: when set, /metrics (without the
	// token), /healthz and /readyz are served there for every role.
	MetricsAddr string
	// Role is "all" (serve and work), "api" (serve only) or "worker".
	Role string
	// DBConns and IntakeDBConns size serve's two pools (WEFT_DB_CONNS,
	// WEFT_INTAKE_DB_CONNS), unless DATABASE_URL sets pool_max_conns: the
	// processor's, and the intake's that webhooks, the gateway and the API
	// write through.
	DBConns, IntakeDBConns int

	LLMProvider string // "openai", "anthropic", or "" for none
	LLMAPIKey   string
	LLMBaseURL  string
	// Providers are every provider's variables, by name: an organisation
	// may choose a model of another provider than the agent's.
	Providers map[string]ProviderAccess
	Model     string
	FastModel string
	// Fast is the fast model's own provider (WEFT_FAST_LLM_PROVIDER,
	// WEFT_FAST_LLM_API_KEY, WEFT_FAST_LLM_BASE_URL); its zero value
	// means the agent's provider.
	Fast     FastProvider
	MaxSteps int
	// MCP are the MCP servers whose tools the agent may call
	// (WEFT_MCP_CONFIG); nil without.
	MCP *mcpclient.Config
	// ApprovalTimeout is how long a tool call waits for a person's
	// approval before it is denied (WEFT_APPROVAL_TIMEOUT, default 24h).
	ApprovalTimeout time.Duration
	// Approvers are the platform user ids who may decide approvals
	// (WEFT_APPROVERS, comma-separated); empty: anyone in the conversation.
	Approvers   []string
	TurnWorkers int
	// LeaseTTL and SweepInterval bound how soon a crashed replica's turns
	// resume elsewhere: after the lease lapses, at the next sweep.
	LeaseTTL      time.Duration
	SweepInterval time.Duration
	// TurnTimeout bounds one attempt of a turn (processor.Config).
	TurnTimeout time.Duration
	// HistoryTTL is how long a platform thread's fetched history is reused.
	HistoryTTL time.Duration
	// Files bounds the files people attach that are read for the model
	// (WEFT_FILE_MAX_BYTES, WEFT_FILE_TIMEOUT, WEFT_FILE_TEXT_BUDGET).
	Files attachment.Limits
	// Persona opens every new thread's system prompt (WEFT_PERSONA, or the
	// text of WEFT_PERSONA_FILE); empty is thread.DefaultPersona.
	Persona string
	// LLMRetryWindow is how long a turn waits out an unavailable model
	// (agent.Runner.RetryWindow); 0 is agent.DefaultRetryWindow.
	LLMRetryWindow time.Duration

	Linear  surfacelinear.Config
	Discord surfacediscord.Config
	Slack   surfaceslack.Config
	// SlackInstall is the Slack OAuth install and SLACK_ALLOWED_TEAMS.
	SlackInstall SlackInstallConfig
	// GitHub is the GitHub App (GITHUB_*).
	GitHub surfacegithub.Config
	// Discovery tunes relevant thread discovery (MAX_RELEVANT_THREADS,
	// RELEVANCE_SCORE_THRESHOLD, THREAD_FETCH_TIMEOUT_MS).
	Discovery discovery.Config
	// Tracing is OpenTelemetry's (telemetry.go).
	Tracing TracingConfig
	// Echo is what a thread's other surfaces hear of a conversation going on
	// elsewhere (WEFT_ECHO_LINEAR, WEFT_ECHO_DISCORD, WEFT_ECHO_SLACK,
	// WEFT_ECHO_IDLE).
	Echo outbox.Echo
	// Stream says where answers show as the model writes them (stream.go).
	Stream StreamConfig

	// Set by the caller, not the environment.

	// Registry receives weft's metrics and is what /metrics exports; nil
	// makes a fresh one.
	Registry *prometheus.Registry
	// WrapModel, Observer and DBTracer let a benchmark time the weft it
	// built, unchanged: WrapModel wraps the model provider the agent
	// calls, Observer is told when turns start and finish, and DBTracer
	// traces the processor's pool (not the intake's). Nil changes nothing.
	WrapModel func(llm.Provider) llm.Provider
	Observer  processor.Observer
	DBTracer  pgx.QueryTracer
}

// Default models per provider, used when WEFT_MODEL / WEFT_FAST_MODEL are unset.
var defaultModels = map[string][2]string{
	"openai":    {"gpt-4o", "gpt-4o-mini"},
	"anthropic": {"claude-sonnet-4-5", "claude-haiku-4-5"},
}

// defaultDatabaseURL is the local PostgreSQL `make run` finds on a fresh
// machine, the same database (the Makefile passes DATABASE_URL anyway, which
// differs only where db/devdb.sh started a private cluster).
const defaultDatabaseURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

func LoadConfig(getenv func(string) string) (*Config, error) {
	cfg := &Config{
		DatabaseURL:       getenv("DATABASE_URL"),
		DatabaseDirectURL: getenv("WEFT_DATABASE_DIRECT_URL"),
		DatabasePooler:    getenv("WEFT_DATABASE_POOLER"),
		Addr:              getenv("WEFT_ADDR"),
		LogLevel:          getenv("WEFT_LOG_LEVEL"),
		APIToken:          getenv("WEFT_API_TOKEN"),
		DebugAddr:         getenv("WEFT_DEBUG_ADDR"),
		MetricsAddr:       getenv("WEFT_METRICS_ADDR"),
		ShutdownTimeout:   30 * time.Second,
	}
	if cfg.DatabaseURL == "" {
		cfg.DatabaseURL = defaultDatabaseURL
	}
	if cfg.Addr == "" {
		cfg.Addr = ":8080"
	}
	switch cfg.DatabasePooler {
	case "":
		if cfg.DatabaseDirectURL != "" {
			cfg.DatabasePooler = "transaction"
		}
	case "transaction":
	default:
		return nil, fmt.Errorf("WEFT_DATABASE_POOLER: %q is not transaction (or unset, for none)", cfg.DatabasePooler)
	}
	cfg.SlackInstall = loadSlackInstall(getenv)
	var err error
	if cfg.Linear, err = surfacelinear.Load(getenv); err != nil {
		return nil, err
	}
	if cfg.Slack, err = loadSlack(getenv); err != nil {
		return nil, err
	}
	if cfg.Discord, err = loadDiscord(getenv); err != nil {
		return nil, err
	}
	if cfg.GitHub, err = surfacegithub.Load(getenv); err != nil {
		return nil, err
	}
	if cfg.Discovery, err = loadDiscoveryConfig(getenv); err != nil {
		return nil, err
	}
	cfg.Role = getenv("WEFT_ROLE")
	switch cfg.Role {
	case "":
		cfg.Role = "all"
	case "all", "api", "worker":
	default:
		return nil, fmt.Errorf("WEFT_ROLE: %q is not all, api or worker", cfg.Role)
	}

	cfg.LLMProvider = getenv("WEFT_LLM_PROVIDER")
	cfg.Providers = loadProviders(getenv)
	switch cfg.LLMProvider {
	case "":
	case "openai":
		cfg.LLMAPIKey, cfg.LLMBaseURL = getenv("OPENAI_API_KEY"), getenv("OPENAI_BASE_URL")
	case "anthropic":
		cfg.LLMAPIKey, cfg.LLMBaseURL = getenv("ANTHROPIC_API_KEY"), getenv("ANTHROPIC_BASE_URL")
	default:
		return nil, fmt.Errorf("WEFT_LLM_PROVIDER: %q is not openai or anthropic", cfg.LLMProvider)
	}
	cfg.Model, cfg.FastModel = getenv("WEFT_MODEL"), getenv("WEFT_FAST_MODEL")
	if d, ok := defaultModels[cfg.LLMProvider]; ok {
		cfg.Model = cmp.Or(cfg.Model, d[0])
	}
	if cfg.Fast, err = loadFastProvider(getenv, cfg); err != nil {
		return nil, err
	}
	fastProvider := cmp.Or(cfg.Fast.Provider, cfg.LLMProvider)
	if d, ok := defaultModels[fastProvider]; ok {
		cfg.FastModel = cmp.Or(cfg.FastModel, d[1])
	}
	cfg.FastModel = cmp.Or(cfg.FastModel, cfg.Model)
	if f := getenv("WEFT_MCP_CONFIG"); f != "" {
		if cfg.MCP, err = mcpclient.Load(f, getenv); err != nil {
			return nil, err
		}
	}
	cfg.ApprovalTimeout = agent.DefaultApprovalTimeout
	for _, id := range strings.Split(getenv("WEFT_APPROVERS"), ",") {
		if id = strings.TrimSpace(id); id != "" {
			cfg.Approvers = append(cfg.Approvers, id)
		}
	}
	if cfg.MaxSteps, err = intEnv(getenv, "WEFT_MAX_STEPS", 20); err != nil {
		return nil, err
	}
	if cfg.TurnWorkers, err = intEnv(getenv, "WEFT_TURN_WORKERS", 100); err != nil {
		return nil, err
	}
	maxBytes, err := intEnv(getenv, "WEFT_FILE_MAX_BYTES", attachment.DefaultMaxBytes)
	if err != nil {
		return nil, err
	}
	cfg.Files.MaxBytes = int64(maxBytes)
	if cfg.Files.TextBudget, err = intEnv(getenv, "WEFT_FILE_TEXT_BUDGET", attachment.DefaultTextBudget); err != nil {
		return nil, err
	}
	cfg.Files.Timeout = attachment.DefaultTimeout
	// A few connections keep the background's database work from crowding
	// out the intake's: more made acknowledgements' tail latency worse, for
	// no more turns (docs/architecture.md, "Measured").
	if cfg.DBConns, err = intEnv(getenv, "WEFT_DB_CONNS", 4); err != nil {
		return nil, err
	}
	if cfg.IntakeDBConns, err = intEnv(getenv, "WEFT_INTAKE_DB_CONNS", 8); err != nil {
		return nil, err
	}
	for key, d := range map[string]*time.Duration{
		"WEFT_SHUTDOWN_TIMEOUT": &cfg.ShutdownTimeout,
		"WEFT_LEASE_TTL":        &cfg.LeaseTTL,
		"WEFT_SWEEP_INTERVAL":   &cfg.SweepInterval,
		"WEFT_TURN_TIMEOUT":     &cfg.TurnTimeout,
		"WEFT_HISTORY_TTL":      &cfg.HistoryTTL,
		"WEFT_LLM_RETRY_WINDOW": &cfg.LLMRetryWindow,
		"WEFT_APPROVAL_TIMEOUT": &cfg.ApprovalTimeout,
		"WEFT_FILE_TIMEOUT":     &cfg.Files.Timeout,
	} {
		if v := getenv(key); v != "" {
			if *d, err = time.ParseDuration(v); err != nil || *d <= 0 {
				return nil, fmt.Errorf("%s: %q is not a positive duration", key, v)
			}
		}
	}
	if cfg.Echo, err = loadEcho(getenv); err != nil {
		return nil, err
	}
	if cfg.Stream, err = loadStream(getenv); err != nil {
		return nil, err
	}
	cfg.Tracing = loadTracing(getenv)
	if cfg.Persona, err = loadPersona(getenv); err != nil {
		return nil, err
	}
	return cfg, nil
}

// FastProvider is where the fast model (WEFT_FAST_MODEL) is asked when it
// is not the agent's provider: relevant-thread-discovery.md ranks with a
// cheaper, faster model, which may live elsewhere (a local server, another
// vendor).
type FastProvider struct {
	Provider, APIKey, BaseURL string
}

// loadFastProvider reads WEFT_FAST_LLM_PROVIDER and its key and base URL:
// the key defaults to the provider's own variable (OPENAI_API_KEY,
// ANTHROPIC_API_KEY), and a base URL alone points the agent's provider
// elsewhere for the fast model.
func loadFastProvider(getenv func(string) string, cfg *Config) (FastProvider, error) {
	f := FastProvider{Provider: getenv("WEFT_FAST_LLM_PROVIDER"), APIKey: getenv("WEFT_FAST_LLM_API_KEY"), BaseURL: getenv("WEFT_FAST_LLM_BASE_URL")}
	if f == (FastProvider{}) {
		return f, nil
	}
	switch f.Provider {
	case "":
		if cfg.LLMProvider == "" {
			return f, errors.New("WEFT_FAST_LLM_API_KEY/WEFT_FAST_LLM_BASE_URL: set WEFT_FAST_LLM_PROVIDER (or WEFT_LLM_PROVIDER)")
		}
		f.Provider = cfg.LLMProvider
		f.APIKey = cmp.Or(f.APIKey, cfg.LLMAPIKey)
	case "openai":
		f.APIKey = cmp.Or(f.APIKey, getenv("OPENAI_API_KEY"))
	case "anthropic":
		f.APIKey = cmp.Or(f.APIKey, getenv("ANTHROPIC_API_KEY"))
	default:
		return f, fmt.Errorf("WEFT_FAST_LLM_PROVIDER: %q is not openai or anthropic", f.Provider)
	}
	return f, nil
}

// loadPersona reads WEFT_PERSONA, or the file WEFT_PERSONA_FILE names (a
// persona is often long, and a file keeps it out of the process list).
func loadPersona(getenv func(string) string) (string, error) {
	text, file := getenv("WEFT_PERSONA"), getenv("WEFT_PERSONA_FILE")
	switch {
	case text != "" && file != "":
		return "", errors.New("WEFT_PERSONA and WEFT_PERSONA_FILE are both set: set one")
	case file == "":
		return strings.TrimSpace(text), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("WEFT_PERSONA_FILE: %w", err)
	}
	persona := strings.TrimSpace(string(b))
	if persona == "" {
		return "", fmt.Errorf("WEFT_PERSONA_FILE: %s is empty", file)
	}
	return persona, nil
}

// loadEcho reads the echo policy of each platform and the idle delay of
// summaries; unset, outbox.DefaultEcho's.
func loadEcho(getenv func(string) string) (outbox.Echo, error) {
	echo := outbox.DefaultEcho()
	for key, p := range map[string]thread.Platform{
		"WEFT_ECHO_LINEAR": thread.PlatformLinear, "WEFT_ECHO_DISCORD": thread.PlatformDiscord, "WEFT_ECHO_SLACK": thread.PlatformSlack,
		"WEFT_ECHO_GITHUB": thread.PlatformGitHub,
	} {
		if v := getenv(key); v != "" {
			policy, err := thread.ParseEchoPolicy(v)
			if err != nil {
				return outbox.Echo{}, fmt.Errorf("%s: %w", key, err)
			}
			echo.Policies[p] = policy
		}
	}
	if v := getenv("WEFT_ECHO_IDLE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return outbox.Echo{}, fmt.Errorf("WEFT_ECHO_IDLE: %q is not a positive duration", v)
		}
		echo.Idle = d
	}
	return echo, nil
}

// intakeDB is the configuration the intake's pool is opened with.
func (c *Config) intakeDB() *Config {
	i := *c
	i.DBConns = c.IntakeDBConns
	i.DBTracer = nil
	return &i
}

func intEnv(getenv func(string) string, key string, def int) (int, error) {
	v := getenv(key)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s: %q is not a positive number", key, v)
	}
	return n, nil
}

func loadDiscord(getenv func(string) string) (surfacediscord.Config, error) {
	c := surfacediscord.Config{
		BotToken:          getenv("DISCORD_BOT_TOKEN"),
		PublicKey:         getenv("DISCORD_PUBLIC_KEY"),
		ApplicationID:     getenv("DISCORD_APPLICATION_ID"),
		CommandGuildID:    getenv("DISCORD_COMMAND_GUILD_ID"),
		APIURL:            getenv("DISCORD_API_URL"),
		GatewayURL:        getenv("DISCORD_GATEWAY_URL"),
		ContinueChannelID: getenv("DISCORD_CONTINUE_CHANNEL_ID"),
	}
	for _, g := range strings.Split(getenv("DISCORD_ALLOWED_GUILDS"), ",") {
		if g = strings.TrimSpace(g); g != "" {
			c.AllowedGuilds = append(c.AllowedGuilds, g)
		}
	}
	var err error
	if c.ShardCount, err = intEnv(getenv, "DISCORD_SHARD_COUNT", 1); err != nil {
		return c, err
	}
	if c.PublicKey != "" {
		if _, err := c.Key(); err != nil {
			return c, err
		}
	}
	return c, nil
}

func loadSlack(getenv func(string) string) (surfaceslack.Config, error) {
	perMinute, err := intEnv(getenv, "SLACK_HISTORY_PER_MINUTE", 50)
	if err != nil {
		return surfaceslack.Config{}, err
	}
	assist, err := surfaceslack.LoadAssistant(getenv)
	if err != nil {
		return surfaceslack.Config{}, err
	}
	return surfaceslack.Config{
		SigningSecret: getenv("SLACK_SIGNING_SECRET"),
		BotToken:      getenv("SLACK_BOT_TOKEN"),
		AppToken:      getenv("SLACK_APP_TOKEN"),
		APIURL:        getenv("SLACK_API_URL"),

		ContinueChannelID: getenv("SLACK_CONTINUE_CHANNEL_ID"),
		HistoryPerMinute:  perMinute,
		Assistant:         assist,
	}, nil
}
