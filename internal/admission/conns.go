package admission

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// refuseWithin bounds the time a refused connection is given: to send its
// request (read, so that closing does not reset the connection before the
// client reads the answer) and to take the 503.
const refuseWithin = 250 * time.Millisecond

// refusal is the whole answer to a connection over the bound.
const refusal = "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: text/plain; charset=utf-8\r\n" +
	"Content-Length: 26\r\nConnection: close\r\n\r\nover capacity, retry soon\n"

// LimitConns wraps ln so that at most limit of its connections are open at
// once. A connection past the bound is accepted all the same and answered
// at once, 503 with Retry-After, then closed: it is never left waiting in
// the kernel's accept queue, where a client would time out with no answer.
func LimitConns(ln net.Listener, limit int) net.Listener {
	return &connLimit{Listener: ln, limit: int64(max(1, limit))}
}

type connLimit struct {
	net.Listener
	limit int64
	open  atomic.Int64
}

func (l *connLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) <= l.limit {
			return &limitedConn{Conn: c, l: l}, nil
		}
		l.open.Add(-1)
		go refuse(c)
	}
}

func refuse(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(refuseWithin))
	var buf [4096]byte
	_, _ = c.Read(buf[:])
	_, _ = io.WriteString(c, refusal)
}

// limitedConn gives its place back when it closes, once.
type limitedConn struct {
	net.Conn
	l    *connLimit
	once sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.open.Add(-1) })
	return err
}
