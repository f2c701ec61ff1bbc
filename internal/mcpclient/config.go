package mcpclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"
)

// DefaultTimeout bounds one tool call when a server's entry sets none.
const DefaultTimeout = 60 * time.Second

// Approval says which of a server's calls wait for a person's approval.
type Approval string

// The approval rules a server's "weft" object may name.
const (
	// ApprovalWrites (the default) runs a tool whose annotations say
	// readOnlyHint: true at once; any other waits for approval.
	ApprovalWrites Approval = "writes"
	// ApprovalAlways makes every call wait for approval.
	ApprovalAlways Approval = "always"
	// ApprovalNever runs every call at once.
	ApprovalNever Approval = "never"
)

// Config is a WEFT_MCP_CONFIG file: the MCP servers whose tools the agent
// may call, by name.
type Config struct {
	Servers map[string]Server
}

// Names are the servers' names, sorted.
func (c *Config) Names() []string {
	if c == nil {
		return nil
	}
	names := make([]string, 0, len(c.Servers))
	for n := range c.Servers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// ServersFor are the names of the servers whose tools conversations of
// organisation org are offered, sorted.
func (c *Config) ServersFor(org string) []string {
	var out []string
	for _, n := range c.Names() {
		if o := c.Servers[n].Weft.Organisations; len(o) == 0 || slices.Contains(o, org) {
			out = append(out, n)
		}
	}
	return out
}

// Server is one entry of "mcpServers": a stdio server (Command) or a
// Streamable HTTP one (URL), and weft's own settings for it.
type Server struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	// Type is accepted as other clients write it ("stdio", "http",
	// "streamable-http"); the transport follows Command or URL.
	Type string   `json:"type"`
	Weft Settings `json:"weft"`
}

// Settings are weft's own settings for a server, its entry's "weft" object.
type Settings struct {
	// Tools are globs (path.Match) of the tool names offered to the model;
	// empty offers all.
	Tools    []string `json:"tools"`
	Approval Approval `json:"approval"`
	// Timeout bounds one call; zero is DefaultTimeout.
	Timeout duration `json:"timeout"`
	// Organisations are the organisations (weft tenant link) whose
	// conversations get this server; empty is all.
	Organisations []string `json:"organisations"`
}

// CallTimeout is the bound of one call to the server.
func (s Settings) CallTimeout() time.Duration {
	if s.Timeout <= 0 {
		return DefaultTimeout
	}
	return time.Duration(s.Timeout)
}

// Offers reports whether the tool named name is on the allow-list.
func (s Settings) Offers(name string) bool {
	if len(s.Tools) == 0 {
		return true
	}
	for _, g := range s.Tools {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// NeedsApproval applies the server's approval rule to a tool that says it
// is (or is not) read-only.
func (s Settings) NeedsApproval(readOnly bool) bool {
	switch s.Approval {
	case ApprovalNever:
		return false
	case ApprovalAlways:
		return true
	}
	return !readOnly
}

// duration reads "30s" (a Go duration) or a number of seconds.
type duration time.Duration

func (d *duration) UnmarshalJSON(b []byte) error {
	var secs float64
	if err := json.Unmarshal(b, &secs); err == nil {
		*d = duration(secs * float64(time.Second))
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New(`"timeout" is a duration such as "30s" or a number of seconds`)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf(`"timeout": %w`, err)
	}
	*d = duration(v)
	return nil
}

// nameRE is what a server's name may hold: it becomes part of the tool
// names the model sees (mcp__SERVER__TOOL), which providers limit to these
// characters.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// Load reads the config file at file, expanding ${VAR} from getenv.
func Load(file string, getenv func(string) string) (*Config, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("mcp config: %w", err)
	}
	c, err := Parse(data, getenv)
	if err != nil {
		return nil, fmt.Errorf("mcp config %s: %w", file, err)
	}
	return c, nil
}

// Parse reads a config file's contents. Its errors name the line and the
// reason, or the server and the reason.
func Parse(data []byte, getenv func(string) string) (*Config, error) {
	var file struct {
		Servers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return nil, atLine(data, err)
	}
	if file.Servers == nil {
		return nil, errors.New(`line 1: no "mcpServers" object`)
	}
	c := &Config{Servers: map[string]Server{}}
	for name, raw := range file.Servers {
		line := lineOf(data, bytes.Index(data, []byte(`"`+name+`"`)))
		var s Server
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			return nil, fmt.Errorf("line %d: server %q: %w", line, name, err)
		}
		if err := s.check(name); err != nil {
			return nil, fmt.Errorf("line %d: server %q: %w", line, name, err)
		}
		var missing []string
		expand := func(v string) string { return expandVars(v, getenv, &missing) }
		s.Command, s.URL = expand(s.Command), expand(s.URL)
		for i := range s.Args {
			s.Args[i] = expand(s.Args[i])
		}
		for k, v := range s.Env {
			s.Env[k] = expand(v)
		}
		for k, v := range s.Headers {
			s.Headers[k] = expand(v)
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("line %d: server %q: ${%s} is not set in the environment", line, name, missing[0])
		}
		if s.Weft.Approval == "" {
			s.Weft.Approval = ApprovalWrites
		}
		c.Servers[name] = s
	}
	return c, nil
}

func (s *Server) check(name string) error {
	switch {
	case !nameRE.MatchString(name) || strings.Contains(name, "__"):
		return errors.New("a name is 1 to 32 letters, digits, - or _ (no __)")
	case s.Command == "" && s.URL == "":
		return errors.New(`needs "command" (stdio) or "url" (Streamable HTTP)`)
	case s.Command != "" && s.URL != "":
		return errors.New(`has both "command" and "url"`)
	case s.Command == "" && (len(s.Args) > 0 || len(s.Env) > 0):
		return errors.New(`"args" and "env" are for a stdio server ("command")`)
	case s.URL == "" && len(s.Headers) > 0:
		return errors.New(`"headers" are for an HTTP server ("url")`)
	case s.Weft.Timeout < 0:
		return errors.New(`"timeout" is negative`)
	}
	switch s.Type {
	case "", "stdio", "http", "streamable-http", "streamableHttp":
	default:
		return fmt.Errorf(`"type" %q is not stdio or http (weft speaks stdio and Streamable HTTP)`, s.Type)
	}
	switch s.Weft.Approval {
	case "", ApprovalWrites, ApprovalAlways, ApprovalNever:
	default:
		return fmt.Errorf(`"approval" %q is not never, always or writes`, s.Weft.Approval)
	}
	for _, g := range s.Weft.Tools {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf(`"tools" glob %q: %w`, g, err)
		}
	}
	return nil
}

var varRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// expandVars replaces ${VAR} (and ${VAR:-default}) from getenv; a variable
// that is unset and has no default is added to missing.
func expandVars(v string, getenv func(string) string, missing *[]string) string {
	return varRE.ReplaceAllStringFunc(v, func(m string) string {
		sub := varRE.FindStringSubmatch(m)
		if val := getenv(sub[1]); val != "" {
			return val
		}
		if sub[2] != "" {
			return sub[3]
		}
		*missing = append(*missing, sub[1])
		return ""
	})
}

// atLine names the line of a JSON syntax or type error.
func atLine(data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Errorf("line %d: %w", lineOf(data, int(syn.Offset)), err)
	case errors.As(err, &typ):
		return fmt.Errorf("line %d: %w", lineOf(data, int(typ.Offset)), err)
	}
	return fmt.Errorf("line 1: %w", err)
}

func lineOf(data []byte, offset int) int {
	if offset < 0 {
		return 1
	}
	return bytes.Count(data[:min(offset, len(data))], []byte("\n")) + 1
}
