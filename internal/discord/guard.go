package discord

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// Gateway opcodes the guard looks at.
const (
	gatewayDispatch       = 0
	gatewayHeartbeat      = 1
	gatewayIdentify       = 2
	gatewayInvalidSession = 9
	gatewayHeartbeatAck   = 11
)

// closeZombie is the close code sent to Discord for a zombie connection:
// any code but 1000 and 1001 keeps the session resumable.
const closeZombie = 4000

// gatewayGuard sits, in process, between discordgo's gateway connection
// and Discord's, and makes discordgo v0.29.0 keep Discord's gateway rules
// where it does not (none of this is configurable in discordgo, and a fork
// would carry all of it for four rules):
//   - after an Invalid Session (op 9) discordgo identifies at once; the
//     guard holds op 9 back for a random 1–5 s, as Discord asks;
//   - discordgo identifies whenever it is told to; the guard holds every
//     Identify for the identifyLimiter, which every shard of the process
//     shares;
//   - discordgo finds a zombie connection only after five unanswered
//     heartbeats, and closes it with 1000, which ends the session, so its
//     resume is refused; the guard closes at the first heartbeat whose
//     predecessor went unanswered, with closeZombie towards Discord, and
//     discordgo then resumes;
//   - discordgo resumes on the URL it first connected to; the guard
//     connects resumes to READY's resume_gateway_url.
//
// discordgo dials the guard through its Dialer: an in-memory pipe whose
// other end a goroutine of the guard serves for as long as the connection
// lasts; the guard dials Discord and relays every message unchanged.
//
// Closing the guard ends its relays and their waits, but a later dial
// still works: discordgo's reconnect loop cannot be stopped once running
// and ends only when a connection opens (which Client then closes).
type gatewayGuard struct {
	shardID     int
	limiter     *identifyLimiter
	upstream    *websocket.Dialer
	invalidWait func() time.Duration
	logger      *slog.Logger

	ctx    context.Context // ends at close: waits stop waiting
	cancel context.CancelFunc

	mu        sync.Mutex
	resumeURL string
	relays    map[*relay]bool
}

// relay is one connection's pair of websockets.
type relay struct {
	up, down *websocket.Conn
	done     chan struct{}
}

func newGatewayGuard(shardID int, limiter *identifyLimiter, logger *slog.Logger) *gatewayGuard {
	ctx, cancel := context.WithCancel(context.Background())
	return &gatewayGuard{
		shardID: shardID, limiter: limiter, logger: logger,
		upstream:    &websocket.Dialer{Proxy: http.ProxyFromEnvironment, HandshakeTimeout: handshakeTimeout},
		invalidWait: invalidSessionWait,
		ctx:         ctx, cancel: cancel,
		relays: make(map[*relay]bool),
	}
}

// handshakeTimeout bounds each websocket handshake, as discordgo's default
// dialer does.
const handshakeTimeout = 45 * time.Second

// invalidSessionWait is Discord's wait after an Invalid Session: random,
// between 1 and 5 s.
func invalidSessionWait() time.Duration {
	return time.Second + rand.N(4*time.Second)
}

// dialer is discordgo's Session.Dialer: every connection goes to the guard.
func (g *gatewayGuard) dialer() *websocket.Dialer {
	return &websocket.Dialer{
		NetDialContext:    g.dial("ws"),
		NetDialTLSContext: g.dial("wss"),
		HandshakeTimeout:  handshakeTimeout,
	}
}

// dial gives discordgo one end of a pipe and serves the other, with the
// scheme discordgo meant (a wss connection's TLS is the guard's to do).
func (g *gatewayGuard) dial(scheme string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(context.Context, string, string) (net.Conn, error) {
		client, server := net.Pipe()
		go g.serveConn(server, scheme)
		return client, nil
	}
}

// serveConn reads discordgo's websocket handshake from the pipe and
// answers it through handle.
func (g *gatewayGuard) serveConn(conn net.Conn, scheme string) {
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(handshakeTimeout))
	br := bufio.NewReader(conn)
	r, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	_ = conn.SetReadDeadline(time.Time{})
	w := &pipeResponse{conn: conn, rw: bufio.NewReadWriter(br, bufio.NewWriter(conn)), header: http.Header{}}
	g.handle(w, r, scheme)
}

// handle takes one connection from discordgo: it dials Discord (the resume
// URL once READY named one), then relays until either side ends.
func (g *gatewayGuard) handle(w http.ResponseWriter, r *http.Request, scheme string) {
	target, resuming := g.target(scheme, r)
	header := http.Header{}
	if v := r.Header.Get("Accept-Encoding"); v != "" {
		header.Set("Accept-Encoding", v)
	}
	up, resp, err := g.upstream.DialContext(context.Background(), target, header)
	if err != nil {
		if resuming {
			// The next attempt goes to the connect URL.
			g.setResumeURL("")
		}
		status := http.StatusBadGateway
		if resp != nil {
			status = resp.StatusCode
			resp.Body.Close()
		}
		http.Error(w, err.Error(), status)
		return
	}
	upgrader := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	down, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		up.Close()
		return
	}
	rl := &relay{up: up, down: down, done: make(chan struct{})}
	g.mu.Lock()
	g.relays[rl] = true
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		delete(g.relays, rl)
		g.mu.Unlock()
		close(rl.done)
	}()
	g.relay(up, down)
}

// target is where a connection goes: the URL discordgo dialled, or for a
// resume (any connection after READY: discordgo resumes once it has a
// session) Ready's resume_gateway_url with discordgo's query.
func (g *gatewayGuard) target(scheme string, r *http.Request) (string, bool) {
	u := url.URL{Scheme: scheme, Host: r.Host, Path: r.URL.Path, RawQuery: r.URL.RawQuery}
	g.mu.Lock()
	resume := g.resumeURL
	g.mu.Unlock()
	if resume == "" {
		return u.String(), false
	}
	ru, err := url.Parse(resume)
	if err != nil {
		return u.String(), false
	}
	ru.RawQuery = r.URL.RawQuery
	return ru.String(), true
}

func (g *gatewayGuard) setResumeURL(u string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.resumeURL = u
}

// relay copies messages both ways until either side ends, then closes
// both: discordgo sees its connection fail and reconnects.
func (g *gatewayGuard) relay(up, down *websocket.Conn) {
	var acked atomic.Bool
	acked.Store(true) // the first heartbeat has no predecessor
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		g.toDiscord(up, down, &acked)
		up.Close()
		down.Close()
	}()
	go func() {
		defer wg.Done()
		g.fromDiscord(up, down, &acked)
		up.Close()
		down.Close()
	}()
	wg.Wait()
}

// toDiscord relays discordgo's messages: Identify after the limiter's
// wait, heartbeats unless the previous one went unanswered, close frames
// with their code (1000 on Stop, ending the session).
func (g *gatewayGuard) toDiscord(up, down *websocket.Conn, acked *atomic.Bool) {
	for {
		typ, msg, err := down.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				_ = up.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(ce.Code, ce.Text), time.Now().Add(time.Second))
			}
			return
		}
		switch f, _ := decodeFrame(typ, msg); f.Op {
		case gatewayHeartbeat:
			if !acked.Swap(false) {
				g.logger.Warn("discord gateway zombie: no heartbeat ACK since the last heartbeat; reconnecting to resume")
				_ = up.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(closeZombie, "zombie connection"), time.Now().Add(time.Second))
				return
			}
		case gatewayIdentify:
			// Cut short only by close, after which the connection is
			// closed at once anyway.
			_ = g.limiter.wait(g.ctx, g.shardID)
		}
		if err := up.WriteMessage(typ, msg); err != nil {
			return
		}
	}
}

// fromDiscord relays Discord's messages: it notes heartbeat ACKs and
// READY's resume URL, and holds an Invalid Session back for invalidWait.
func (g *gatewayGuard) fromDiscord(up, down *websocket.Conn, acked *atomic.Bool) {
	for {
		typ, msg, err := up.ReadMessage()
		if err != nil {
			return
		}
		f, _ := decodeFrame(typ, msg)
		switch f.Op {
		case gatewayHeartbeatAck:
			acked.Store(true)
		case gatewayInvalidSession:
			t := time.NewTimer(g.invalidWait())
			select {
			case <-t.C:
			case <-g.ctx.Done():
				t.Stop()
			}
		case gatewayDispatch:
			if f.Type == "READY" {
				var ready struct {
					ResumeGatewayURL string `json:"resume_gateway_url"`
				}
				if json.Unmarshal(f.Data, &ready) == nil {
					g.setResumeURL(ready.ResumeGatewayURL)
				}
			}
		}
		if err := down.WriteMessage(typ, msg); err != nil {
			return
		}
	}
}

// close ends the waits and the relays open now, and waits for them;
// discordgo's session must be closed first, so that its close frame
// reaches Discord.
func (g *gatewayGuard) close() {
	g.cancel()
	g.mu.Lock()
	open := make([]*relay, 0, len(g.relays))
	for rl := range g.relays {
		rl.up.Close()
		rl.down.Close()
		open = append(open, rl)
	}
	g.mu.Unlock()
	for _, rl := range open {
		<-rl.done
	}
}

// gatewayFrame is the envelope of a gateway payload.
type gatewayFrame struct {
	Op   int             `json:"op"`
	Type string          `json:"t"`
	Data json.RawMessage `json:"d"`
}

// decodeFrame reads a payload's envelope; binary messages are zlib
// compressed, as discordgo asks Discord to send them.
func decodeFrame(typ int, msg []byte) (gatewayFrame, error) {
	var r io.Reader = bytes.NewReader(msg)
	if typ == websocket.BinaryMessage {
		z, err := zlib.NewReader(r)
		if err != nil {
			return gatewayFrame{Op: -1}, err
		}
		defer z.Close()
		r = z
	}
	f := gatewayFrame{Op: -1}
	err := json.NewDecoder(r).Decode(&f)
	return f, err
}

// identifyLimiter is Discord's identify rate limit for one bot: at most one
// Identify per interval in each bucket, a shard's bucket being its id
// modulo max_concurrency. Every shard of a process shares one.
type identifyLimiter struct {
	interval    time.Duration
	concurrency int

	mu   sync.Mutex
	next map[int]time.Time // bucket → when its next Identify may go
}

// identifyInterval is Discord's: one Identify per 5 s per bucket.
const identifyInterval = 5 * time.Second

// newIdentifyLimiter limits identifies for a bot whose max_concurrency is
// concurrency. weft uses 1, every bot's value below 150,000 guilds, which
// is within the limit for any bot.
func newIdentifyLimiter(concurrency int) *identifyLimiter {
	return &identifyLimiter{interval: identifyInterval, concurrency: max(concurrency, 1), next: make(map[int]time.Time)}
}

// wait blocks until shardID's bucket allows an Identify, and takes it.
func (l *identifyLimiter) wait(ctx context.Context, shardID int) error {
	key := shardID % l.concurrency
	l.mu.Lock()
	now := time.Now()
	at := l.next[key]
	if at.Before(now) {
		at = now
	}
	l.next[key] = at.Add(l.interval)
	l.mu.Unlock()
	d := time.Until(at)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// pipeResponse is the http.ResponseWriter of a handshake read from a
// pipe: enough for an error answer, and a Hijacker for the upgrade.
type pipeResponse struct {
	conn   net.Conn
	rw     *bufio.ReadWriter
	header http.Header
	wrote  bool
}

func (p *pipeResponse) Header() http.Header { return p.header }

func (p *pipeResponse) WriteHeader(status int) {
	if p.wrote {
		return
	}
	p.wrote = true
	p.header.Set("Connection", "close")
	fmt.Fprintf(p.rw, "HTTP/1.1 %d %s\r\n", status, http.StatusText(status))
	_ = p.header.Write(p.rw)
	_, _ = p.rw.WriteString("\r\n")
}

func (p *pipeResponse) Write(b []byte) (int, error) {
	p.WriteHeader(http.StatusOK)
	n, err := p.rw.Write(b)
	if err == nil {
		err = p.rw.Flush()
	}
	return n, err
}

func (p *pipeResponse) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return p.conn, p.rw, nil
}
