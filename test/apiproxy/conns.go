package apiproxy

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"
)

// conns are the proxy's connections to the upstream, so that Close can
// close every one. CloseIdleConnections would not do: when the last request
// has ended, its HTTP/2 stream may still be winding down, and a connection
// that is not idle yet would stay open, with its goroutines, for good.
type conns struct {
	mu     sync.Mutex
	open   map[*conn]struct{}
	closed bool
}

// conn is one connection to the upstream, which forgets itself when closed.
type conn struct {
	net.Conn
	set *conns
}

// dial is the transport's dialer (rest.Config.Dial).
func (s *conns) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	c := &conn{Conn: nc, set: s}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		nc.Close()
		return nil, errors.New("apiproxy: closed")
	}
	if s.open == nil {
		s.open = map[*conn]struct{}{}
	}
	s.open[c] = struct{}{}
	return c, nil
}

func (c *conn) Close() error {
	c.set.mu.Lock()
	delete(c.set.open, c)
	c.set.mu.Unlock()
	return c.Conn.Close()
}

// closeAll closes every connection and refuses new ones.
func (s *conns) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for c := range s.open {
		_ = c.Conn.Close()
	}
	clear(s.open)
}
