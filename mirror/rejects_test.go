//go:build !race

package mirror_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/mirror/registry"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/release"
)

func TestCopyRejectsBeforePushingAnything(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		fix    func(t *testing.T) fixture
		tamper func(t *testing.T, f fixture)
		want   string
	}{
		{
			name: "a flipped byte in a blob",
			fix:  func(t *testing.T) fixture { return publish(t, nil) },
			tamper: func(t *testing.T, f fixture) {
				f.tamper.arm(lastLayer(t, f.rel.Lock.Find(release.KindImage, "reloader")[0]))
			},
			want: "digest",
		},
		{
			name:   "a changed manifest",
			fix:    func(t *testing.T) fixture { return publish(t, nil) },
			tamper: func(t *testing.T, f fixture) { f.tamper.arm(f.rel.Chart) },
			want:   "digest",
		},
		{
			name: "a removed signature",
			fix:  func(t *testing.T) fixture { return publish(t, nil) },
			tamper: func(t *testing.T, f fixture) {
				l := *f.rel.Lock
				l.Artifacts = nil
				for _, a := range f.rel.Lock.Artifacts {
					if a.Kind == release.KindSignature && a.Subject == f.rel.Chart {
						continue
					}
					l.Artifacts = append(l.Artifacts, a)
				}
				resign(t, f, &l)
			},
			want: "no signature verified",
		},
		{
			name: "a signature by another key",
			fix: func(t *testing.T) fixture {
				other, err := releasetest.NewKeySigner(t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				return publish(t, func(o *releasetest.Options) { o.SignaturesBy = &other })
			},
			tamper: func(*testing.T, fixture) {},
			want:   "verification failed",
		},
		{
			name: "a lock signed by another key",
			fix:  func(t *testing.T) fixture { return publish(t, nil) },
			tamper: func(t *testing.T, f fixture) {
				other, err := releasetest.NewKeySigner(t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				*f.rel = *republishLockWith(t, f, other)
			},
			want: "lock's signature",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.fix(t)
			tc.tamper(t, f)
			var ch countingHandler
			dst := startInProcess(t, ch.wrap)
			opts := f.options(t, dst.Host+"/mirror")
			var started requestStarts
			opts.Client = started.client(t)
			_, err := copyRelease(ctx, opts)
			if err == nil {
				t.Fatal("tampered release was mirrored")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
			// The target was asked what it holds during verification;
			// a rejection ends those questions before it is returned.
			asked := started.n.Load()
			time.Sleep(100 * time.Millisecond)
			if now := started.n.Load(); now != asked {
				t.Errorf("%d requests to the target started after the rejection was returned", now-asked)
			}
			if n := ch.manifestWrites(); n != 0 {
				t.Errorf("%d manifest or tag writes reached the target: %v", n, ch.writes)
			}
			if tc.name != "a flipped byte in a blob" && ch.count() != 0 {
				// Only a blob streamed from the source can turn out wrong
				// after the first write; then the registry refuses to
				// commit it (checked below) and nothing refers to it.
				t.Errorf("%d writes reached the target before the rejection: %v", ch.count(), ch.writes)
			}
			if d := f.tamper.digest; d != "" {
				r, _ := newClient(t).Repository(ctx, dst.Host+"/mirror/reloader", false)
				if _, ok, _ := r.HeadBlob(ctx, d); ok {
					t.Errorf("tampered blob %s was committed at the target", d)
				}
			}
		})
	}
}

func resign(t *testing.T, f fixture, l *release.Lock) {
	t.Helper()
	*f.rel = *republishLockWith(t, fixture{src: f.src, rel: &releasetest.Release{Lock: l}, signer: f.signer}, f.signer)
}

func republishLockWith(t *testing.T, f fixture, s releasetest.Signer) *releasetest.Release {
	t.Helper()
	lockJSON, err := f.rel.Lock.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.SignLock(context.Background(), lockJSON)
	if err != nil {
		t.Fatal(err)
	}
	out := *f.rel
	out.LockJSON, out.LockBundle = lockJSON, b
	return &out
}

// requestStarts counts the requests a client starts: unlike a count at the
// registry, which may see an aborted request late, it says exactly what the
// client did after a call returned.
type requestStarts struct {
	n  atomic.Int64
	rt http.RoundTripper
}

func (c *requestStarts) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.rt.RoundTrip(r)
}

func (c *requestStarts) CloseIdleConnections() {
	c.rt.(*http.Transport).CloseIdleConnections()
}

func (c *requestStarts) client(t *testing.T) *registry.Client {
	t.Helper()
	c.rt = http.DefaultTransport.(*http.Transport).Clone()
	cl, err := registry.New(registry.Options{Transport: c})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}
