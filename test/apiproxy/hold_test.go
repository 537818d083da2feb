package apiproxy_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/test/apiproxy"
)

// quiet is how long a test watches for something a hold must prevent: a
// negative can only be shown by waiting. The upstream writes a line every
// 3ms, so about 60 lines come and are held meanwhile.
const quiet = 200 * time.Millisecond

// A watch stream under a hold delivers nothing the upstream writes after
// the hold began; on release it resumes where it stopped, every line in
// order and none lost, however many came meanwhile.
func TestAHeldStreamStopsAndResumesInOrderWithNothingLost(t *testing.T) {
	up := startUpstream(t)
	p := startProxy(t, up)
	c, _ := clientOf(t, p)
	ls := lines(get(t, c, p.URL()+"/api/v1/namespaces/ns1/configmaps?watch=true").Body)
	s := stream{t: t, lines: ls}
	s.expect(3)

	release := p.Hold(apiproxy.Resource("configmaps"))
	heldFrom := up.started.Load() // lines above this were written under the hold
	s.quietAbove(heldFrom)
	written := up.started.Load()
	if written < heldFrom+10 {
		t.Fatalf("the upstream wrote only %d lines under the hold; the test shows nothing", written-heldFrom)
	}

	release()
	s.expect(written + 5)
	if n := p.Requests(apiproxy.Resource("configmaps")); n != 1 {
		t.Errorf("Requests(configmaps) = %d; want 1", n)
	}
}

// A new request that a hold matches is received but not forwarded until the
// hold is released; then it completes with the upstream's answer.
func TestANewMatchingRequestWaitsWhileHeldAndCompletesAfterRelease(t *testing.T) {
	up := startUpstream(t)
	p := startProxy(t, up)
	c, _ := clientOf(t, p)
	const path = "/api/v1/namespaces/ns1/configmaps/app"

	release := p.Hold(apiproxy.Resource("configmaps"))
	answered := send(t.Context(), c, http.MethodGet, p.URL()+path)
	eventually(t, 5*time.Second, "the proxy receives the request", func() bool {
		return p.Requests(apiproxy.Resource("configmaps")) == 1
	})
	select {
	case a := <-answered:
		t.Fatalf("answered under the hold: %q %v", a.body, a.err)
	case <-time.After(quiet):
	}
	if n := up.hitsOf(path); n != 0 {
		t.Fatalf("the upstream saw the held request %d times", n)
	}

	release()
	a := receive(t, answered, 5*time.Second)
	if want := `GET ` + path + ` auth="Bearer upstream-token"`; a.err != nil || a.body != want {
		t.Fatalf("after release: %q %v; want %q", a.body, a.err, want)
	}
	release() // a second release changes nothing
}

// A hold stops only what it matches: other resources are read and watched
// as usual, on the same HTTP/2 connection as a stopped watch and a waiting
// request.
func TestARequestAHoldDoesNotMatchPasses(t *testing.T) {
	up := startUpstream(t)
	p := startProxy(t, up)
	c, _ := clientOf(t, p)
	held := lines(get(t, c, p.URL()+"/api/v1/namespaces/ns1/configmaps?watch=true").Body)
	next(t, held, 5*time.Second)

	release := p.Hold(apiproxy.Resource("configmaps"))
	defer release()
	waiting := send(t.Context(), c, http.MethodGet, p.URL()+"/api/v1/namespaces/ns1/configmaps/app")
	eventually(t, 5*time.Second, "the proxy receives the held request", func() bool {
		return p.Requests(apiproxy.Resource("configmaps")) == 2
	})

	a := receive(t, send(t.Context(), c, http.MethodGet, p.URL()+"/api/v1/namespaces/ns1/secrets/s"), 5*time.Second)
	if a.err != nil {
		t.Fatalf("a Secret read under a ConfigMap hold: %v", a.err)
	}
	resp := get(t, c, p.URL()+"/api/v1/secrets?watch=true")
	if resp.ProtoMajor != 2 {
		t.Fatalf("spoke %s; want HTTP/2, one connection for all", resp.Proto)
	}
	s := stream{t: t, lines: lines(resp.Body)}
	s.expect(5)
	select {
	case a := <-waiting:
		t.Fatalf("the held request was answered: %q %v", a.body, a.err)
	default:
	}
}

// Several holds may be in force at once; what more than one matches flows
// only when the last of them is released, and releasing one twice does not
// release another.
func TestWhatSeveralHoldsMatchWaitsForTheLastRelease(t *testing.T) {
	up := startUpstream(t)
	p := startProxy(t, up)
	c, _ := clientOf(t, p)
	s := stream{t: t, lines: lines(get(t, c, p.URL()+"/api/v1/namespaces/ns1/configmaps?watch=true").Body)}
	s.expect(1)
	const path = "/api/v1/namespaces/ns1/configmaps/app"

	releaseConfigMaps := p.Hold(apiproxy.Resource("configmaps"))
	releaseWrites := p.Hold(apiproxy.Writes())
	releaseWatches := p.Hold(func(r *http.Request) bool { return r.URL.Query().Get("watch") == "true" })
	heldFrom := up.started.Load()
	written := send(t.Context(), c, http.MethodPost, p.URL()+path)
	eventually(t, 5*time.Second, "the proxy receives the write", func() bool {
		return p.Requests(apiproxy.Writes()) == 1
	})

	releaseConfigMaps()
	releaseConfigMaps()
	s.quietAbove(heldFrom)
	select {
	case a := <-written:
		t.Fatalf("the write was answered under the Writes hold: %q %v", a.body, a.err)
	default:
	}

	releaseWrites()
	if a := receive(t, written, 5*time.Second); a.err != nil {
		t.Fatalf("the write after its last hold was released: %v", a.err)
	}
	s.quietAbove(heldFrom)
	sent := up.started.Load()
	releaseWatches()
	s.expect(sent + 5)
	if n := up.hitsOf(path); n != 1 {
		t.Errorf("the upstream saw the write %d times; want once", n)
	}
}

// stream follows the numbered lines of one watch and fails the test on a
// gap or a repeat.
type stream struct {
	t     *testing.T
	lines <-chan int
	last  int64
}

// expect reads lines, each the one after the last, up to line n.
func (s *stream) expect(n int64) {
	s.t.Helper()
	for s.last < n {
		got := int64(next(s.t, s.lines, 5*time.Second))
		if got != s.last+1 {
			s.t.Fatalf("line %d after line %d", got, s.last)
		}
		s.last = got
	}
}

// quietAbove reads lines for the quiet period and fails on any line above
// limit: one the upstream wrote after a hold began. Lines up to it were
// already on their way and may still come.
func (s *stream) quietAbove(limit int64) {
	s.t.Helper()
	end := time.After(quiet)
	for {
		select {
		case n, ok := <-s.lines:
			if !ok {
				s.t.Fatal("the stream ended")
			}
			if int64(n) != s.last+1 {
				s.t.Fatalf("line %d after line %d", n, s.last)
			}
			if int64(n) > limit {
				s.t.Fatalf("line %d came through a hold that began after line %d", n, limit)
			}
			s.last = int64(n)
		case <-end:
			return
		}
	}
}
