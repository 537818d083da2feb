package apiproxy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
)

// A hold is one call of Hold: while it is in force, the requests it matches
// wait and their response bodies stop.
type hold struct {
	match    Matcher
	released chan struct{} // closed by release
}

// gate is the set of holds in force and the log of requests received.
type gate struct {
	mu       sync.Mutex
	holds    []*hold
	received []*http.Request // summaries: no body, no context
}

// Hold stops the traffic m matches until release is called:
//
//   - a new matching request waits before it is forwarded;
//   - the response body of a matching request already running (a watch)
//     delivers nothing more: the proxy stops reading from the upstream, whose
//     bytes queue in the connection's buffers.
//
// After release everything held flows again, in order, with nothing lost.
// Requests and bodies that match several holds flow when the last of them is
// released. release may be called more than once; Close ends what is held.
//
// The hold is in force when Hold returns: no byte the upstream sends on a
// matching body after that reaches the client before release. It stops
// bodies, not headers: a matching request forwarded just before the hold may
// still get its status line, then waits for its body.
//
// A hold over many events can outlast a real apiserver's patience: once the
// connection's buffers are full it closes a watch that does not keep up.
// The end of the stream is held like the rest, so the client sees the
// events, then the end, after release, and relists as it would.
func (p *Proxy) Hold(m Matcher) (release func()) {
	h := &hold{match: m, released: make(chan struct{})}
	p.gate.mu.Lock()
	p.gate.holds = append(p.gate.holds, h)
	p.gate.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.gate.mu.Lock()
			p.gate.holds = slices.DeleteFunc(p.gate.holds, func(x *hold) bool { return x == h })
			p.gate.mu.Unlock()
			close(h.released)
		})
	}
}

// Requests returns how many requests m matches among those the proxy has
// received, held or not, so a test can tell that a hold caught something.
func (p *Proxy) Requests(m Matcher) int {
	p.gate.mu.Lock()
	received := slices.Clone(p.gate.received)
	p.gate.mu.Unlock()
	n := 0
	for _, r := range received {
		if m(r) {
			n++
		}
	}
	return n
}

// record logs r for Requests. It keeps a copy without the body or the
// context, which end with the request.
func (g *gate) record(r *http.Request) {
	c := r.Clone(context.Background())
	c.Body, c.GetBody = http.NoBody, nil
	g.mu.Lock()
	g.received = append(g.received, c)
	g.mu.Unlock()
}

// wait returns when no hold in force matches r, or with an error when ctx
// ends first. It blocks on the release of one matching hold at a time and
// looks again, so a hold placed meanwhile is honoured too.
func (g *gate) wait(ctx context.Context, r *http.Request) error {
	for {
		h := g.holding(r)
		if h == nil {
			return nil
		}
		select {
		case <-h.released:
		case <-ctx.Done():
			return fmt.Errorf("waiting for a hold on %s %s: %w", r.Method, r.URL.Path, context.Cause(ctx))
		}
	}
}

// holding returns a hold in force that matches r, or nil. Matchers run
// outside the lock, so one may do anything but block.
func (g *gate) holding(r *http.Request) *hold {
	g.mu.Lock()
	holds := slices.Clone(g.holds)
	g.mu.Unlock()
	for _, h := range holds {
		if h.match(r) {
			return h
		}
	}
	return nil
}

// heldBody is an upstream response body that a hold can stop. Each read
// takes bytes from the upstream and hands them on only when no hold matches
// the request, so ReverseProxy's copy loop blocks inside Read, stops asking
// the upstream for more, and resumes with the bytes in order.
type heldBody struct {
	io.ReadCloser
	ctx  context.Context // the request's: the client went away or the proxy closed
	req  *http.Request   // as the client sent it, for the matchers
	gate *gate
}

// Read waits after reading rather than before: a Read already blocked on
// the upstream when a hold begins must not deliver what arrives next.
func (b *heldBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if werr := b.gate.wait(b.ctx, b.req); werr != nil {
		// Nobody is left to receive the bytes.
		return 0, werr
	}
	return n, err
}
