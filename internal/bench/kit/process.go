package kit

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is a server the bench started as a child process (`weft serve`),
// so that its memory is its own and can be read from /proc.
type Process struct {
	cmd    *exec.Cmd
	stderr *tail
	exited chan struct{}
	err    error // set before exited closes
}

// Start runs path with args and env added to this process's environment
// (later entries win), keeping the tail of its stderr for errors.
func Start(path string, args []string, env []string) (*Process, error) {
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), env...)
	p := &Process{cmd: cmd, stderr: &tail{max: 16 << 10}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", path, err)
	}
	go func() { p.err = cmd.Wait(); close(p.exited) }()
	return p, nil
}

// PID is the child's process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Done is closed when the child has exited.
func (p *Process) Done() <-chan struct{} { return p.exited }

// Stderr is the last 16 KiB the child wrote to stderr.
func (p *Process) Stderr() string { return p.stderr.String() }

// StderrLines is how many lines the child has written to stderr: its log
// lines, at the level it was started with.
func (p *Process) StderrLines() int {
	p.stderr.mu.Lock()
	defer p.stderr.mu.Unlock()
	return p.stderr.lines
}

// WaitReady polls url until it answers 200, the child exits, or timeout.
func (p *Process) WaitReady(ctx context.Context, url string, timeout time.Duration) error {
	if err := WaitHTTP(ctx, url, timeout, p.exited); !errors.Is(err, errGone) {
		return err
	}
	return fmt.Errorf("server exited before it was ready: %v", p.err)
}

// errGone is WaitHTTP's answer when the server went away first.
var errGone = errors.New("server gone")

// WaitHTTP polls url until it answers 200, gone is closed (the server
// went away), or timeout.
func WaitHTTP(ctx context.Context, url string, timeout time.Duration, gone <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-gone:
			return errGone
		case <-ctx.Done():
			return fmt.Errorf("server not ready: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// WaitListening waits until addr accepts a TCP connection, the child exits,
// or timeout: for a child that serves no readiness endpoint.
func (p *Process) WaitListening(ctx context.Context, addr string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	for {
		if c, err := d.DialContext(ctx, "tcp", addr); err == nil {
			return c.Close()
		}
		select {
		case <-p.exited:
			return fmt.Errorf("child exited before it listened: %v", p.err)
		case <-ctx.Done():
			return fmt.Errorf("child not listening on %s: %w", addr, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Memory is the child's resident memory now and at its peak (VmRSS and
// VmHWM of /proc/PID/status), in bytes.
func (p *Process) Memory() (rss, peak int64, err error) { return memoryOf(p.PID()) }

// SelfMemory is Memory of this process.
func SelfMemory() (rss, peak int64, err error) { return memoryOf(os.Getpid()) }

// ResetSelfPeak starts this process's peak RSS (VmHWM) over from its
// current RSS, so that a later SelfMemory's peak is one run's.
func ResetSelfPeak() error { return resetPeak("self") }

// ResetPeak is ResetSelfPeak for the child.
func (p *Process) ResetPeak() error { return resetPeak(strconv.Itoa(p.PID())) }

func resetPeak(pid string) error {
	if err := os.WriteFile("/proc/"+pid+"/clear_refs", []byte("5"), 0); err != nil {
		return fmt.Errorf("reset peak rss: %w", err)
	}
	return nil
}

func memoryOf(pid int) (rss, peak int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("read process status: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("parse %s: %w", k, err)
		}
		if k == "VmRSS" {
			rss = kb << 10
		} else {
			peak = kb << 10
		}
	}
	return rss, peak, nil
}

// Stop sends SIGTERM and waits for the child to exit, killing it after
// grace.
func (p *Process) Stop(grace time.Duration) error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return p.err
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("server did not stop within %s and was killed", grace)
	}
}

// tail keeps the last max bytes written to it, and counts its lines.
type tail struct {
	mu    sync.Mutex
	max   int
	b     []byte
	lines int
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	t.lines += bytes.Count(p, []byte{'\n'})
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// FreeAddr picks a free loopback address.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("pick a port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// Ready waits until a child started on addr is ready to be measured.
type Ready func(ctx context.Context, p *Process, addr string) error

// ReadyAt is ready when addr answers 200 on path (WaitReady).
func ReadyAt(path string, timeout time.Duration) Ready {
	return func(ctx context.Context, p *Process, addr string) error {
		return p.WaitReady(ctx, "http://"+addr+path, timeout)
	}
}

// Listening is ready when addr accepts a connection (WaitListening).
func Listening(timeout time.Duration) Ready {
	return func(ctx context.Context, p *Process, addr string) error { return p.WaitListening(ctx, addr, timeout) }
}

// StartSelf starts this binary as a child process listening on a free
// loopback address, with the arguments and environment (added to this
// process's) that launch gives for that address, and waits until ready;
// a child that never is is stopped, and the error carries the stderr of
// what it is. It returns the child and its address.
func StartSelf(ctx context.Context, what string, launch func(addr string) (args, env []string), ready Ready) (*Process, string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, "", fmt.Errorf("find the weft-bench binary: %w", err)
	}
	addr, err := FreeAddr()
	if err != nil {
		return nil, "", err
	}
	args, env := launch(addr)
	p, err := Start(exe, args, env)
	if err != nil {
		return nil, "", err
	}
	if err := ready(ctx, p, addr); err != nil {
		_ = p.Stop(5 * time.Second)
		return nil, "", fmt.Errorf("%w\n%s stderr:\n%s", err, what, p.Stderr())
	}
	return p, addr, nil
}

// StartServe starts `weft-bench serve` (weft serve itself) as a child on
// the database at url, with the model at modelURL (OpenAI's protocol) and
// env's platform settings, and waits until it is ready.
func StartServe(ctx context.Context, url, role, modelURL string, env ...string) (*Process, string, error) {
	return StartSelf(ctx, "weft serve", func(addr string) ([]string, []string) {
		return []string{"serve"}, append([]string{
			"DATABASE_URL=" + url, "WEFT_ADDR=" + addr, "WEFT_LOG_LEVEL=error", "WEFT_ROLE=" + role, "WEFT_SHUTDOWN_TIMEOUT=5s",
			"WEFT_LLM_PROVIDER=openai", "OPENAI_API_KEY=bench", "OPENAI_BASE_URL=" + modelURL,
		}, env...)
	}, ReadyAt("/readyz", 60*time.Second))
}

// FetchProfile gets a pprof profile from url (a process's pprof
// endpoint, which takes as long as the profile lasts) and writes it to
// path.
func FetchProfile(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile: %s", resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("profile: %w", err)
	}
	return f.Close()
}
