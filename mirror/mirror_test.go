package mirror_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/reloader-dev/reloader/internal/progress"
	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/mirror/registry"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
	testregistry "github.com/reloader-dev/reloader/test/registry"
)

func startInProcess(t *testing.T, wrap func(http.Handler) http.Handler) *testregistry.Registry {
	t.Helper()
	r, err := testregistry.StartInProcess(testregistry.InProcessOptions{Wrap: wrap})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// go-containerregistry's shared transport (used to publish the
		// test release) may hold connections that never carried a
		// request; the server would wait on them.
		remote.DefaultTransport.(*http.Transport).CloseIdleConnections()
		_ = r.Stop()
	})
	return r
}

func newClient(t *testing.T) *registry.Client {
	t.Helper()
	c, err := registry.New(registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// fixture is a published key-signed release and the policy that trusts it.
type fixture struct {
	src    *testregistry.Registry
	tamper *tamperer
	rel    *fixtureRelease
	signer fixtureSigner
	policy trust.Policy
}

// shared is the release most tests mirror. Publishing runs the release
// pipeline (build, SBOMs, signing), so it is made once per test binary, on
// first use, into a source registry TestMain stops; each test gets its own
// copy of the release and a disarmed tamperer. Tests only read the source.
var shared struct {
	once sync.Once
	f    fixture
	err  error
	stop func()
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.stop != nil {
		shared.stop()
	}
	os.Exit(code)
}

// publish returns a key-signed pipeline release; mutate, if given, changes
// the options and publishes a release of the test's own.
func publish(t *testing.T, mutate func(*publishOptions)) fixture {
	t.Helper()
	if mutate != nil {
		tp := &tamperer{}
		f, err := publishTo(t.TempDir(), startInProcess(t, tp.wrap), tp, mutate)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	shared.once.Do(func() {
		dir, err := os.MkdirTemp("", "mirror-test-")
		if err != nil {
			shared.err = err
			return
		}
		tp := &tamperer{}
		src, err := testregistry.StartInProcess(testregistry.InProcessOptions{Wrap: tp.wrap})
		if err != nil {
			shared.err = err
			return
		}
		shared.stop = func() {
			remote.DefaultTransport.(*http.Transport).CloseIdleConnections()
			_ = src.Stop()
			_ = os.RemoveAll(dir)
		}
		shared.f, shared.err = publishTo(dir, src, tp, nil)
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	f := shared.f
	f.tamper.arm("")
	rel := *f.rel
	l := *rel.Lock
	l.Artifacts = slices.Clone(l.Artifacts)
	rel.Lock = &l
	f.rel = &rel
	return f
}

// copyOptions is one copy run: the release as read and whom to trust,
// then where it goes.
type copyOptions struct {
	Source               mirror.Source
	LockJSON, LockBundle []byte
	Policy               trust.Policy
	mirror.PushOptions
}

func (f fixture) options(t *testing.T, target string) copyOptions {
	return copyOptions{
		Source:   &mirror.RegistrySource{Client: newClient(t), Name: "source"},
		LockJSON: f.rel.LockJSON, LockBundle: f.rel.LockBundle,
		Policy: f.policy,
		PushOptions: mirror.PushOptions{Client: newClient(t), Target: target,
			Backoff: 10 * time.Millisecond},
	}
}

// copyRelease verifies the release at its source and pushes it, as
// reloader-mirror copy does.
func copyRelease(ctx context.Context, opts copyOptions) (*mirror.Receipt, error) {
	v, err := trust.NewVerifier(opts.Policy)
	if err != nil {
		return nil, err
	}
	rel, err := mirror.VerifyToPush(ctx, opts.Source, opts.LockJSON, opts.LockBundle, v, opts.PushOptions)
	if err != nil {
		return nil, err
	}
	return rel.Push(ctx, opts.PushOptions)
}

// assertMirrored checks every artifact of the lock is at the target under its
// digest, with its tag, and that the copy verifies offline from the target.
func assertMirrored(t *testing.T, f fixture, target string, rc *mirror.Receipt) {
	t.Helper()
	ctx := context.Background()
	c := newClient(t)
	m, err := mirror.NewMapping(target, f.rel.Lock, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range f.rel.Lock.Artifacts {
		r, err := c.Repository(ctx, m.Repository(a.Repository), false)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := r.GetManifest(ctx, a.Digest); err != nil {
			t.Errorf("%s %s %s not at the target by digest: %v", a.Kind, a.Name, a.Digest, err)
		}
		if a.Tag != "" {
			d, ok, err := r.HeadManifest(ctx, a.Tag)
			if err != nil || !ok || d.Digest != a.Digest {
				t.Errorf("tag %s:%s points at %q (%v), want %s", r.Name, a.Tag, d.Digest, err, a.Digest)
			}
		}
	}
	src := &mirror.RegistrySource{Client: c, Map: m.Repository}
	v, err := trust.NewVerifier(f.policy)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mirror.Verify(ctx, src, f.rel.LockJSON, f.rel.LockBundle, v); err != nil {
		t.Errorf("the copy does not verify at the target: %v", err)
	}
	for _, s := range rc.Verification.Subjects {
		if !s.Verified {
			t.Errorf("receipt: %s %s not verified", s.Kind, s.Name)
		}
	}
}

func TestCopyToRegistryWithReferrersAPIPreservesEveryDigest(t *testing.T) {
	f := publish(t, nil)
	dst := startInProcess(t, nil)
	target := dst.Host + "/mirror/reloader"
	opts := f.options(t, target)
	var out bytes.Buffer
	opts.Progress = progress.New(&out, progress.Options{})
	rc, err := copyRelease(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	assertMirrored(t, f, target, rc)
	// Progress tells what each phase did, the read-back included.
	if want := fmt.Sprintf("verifying at target: done, %d in", rc.Stats.ManifestsPushed); !strings.Contains(out.String(), want) {
		t.Errorf("progress lacks %q:\n%s", want, out.String())
	}
	for repo, mode := range rc.Referrers {
		if mode != "referrers-api" {
			t.Errorf("%s: referrers mode %s, want referrers-api", repo, mode)
		}
	}
	if rc.Stats.FallbackIndexes != 0 {
		t.Errorf("wrote %d fallback indexes to a registry with the referrers API", rc.Stats.FallbackIndexes)
	}
	if rc.Stats.BlobsMounted+rc.Stats.BlobsPushed == 0 {
		t.Error("no blob moved")
	}
}

func TestCopyToDistributionWritesTagFallbackKeepingArtifactType(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the distribution registry")
	}
	f := publish(t, nil)
	dst, err := testregistry.StartDistribution(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dst.Stop() })
	target := dst.Host + "/mirror"
	rc, err := copyRelease(context.Background(), f.options(t, target))
	if err != nil {
		t.Fatal(err)
	}
	assertMirrored(t, f, target, rc)
	if rc.Stats.FallbackIndexes == 0 {
		t.Fatal("no referrers fallback index written to a registry without the referrers API")
	}
	// The SBOM referrers of a standard platform image must be listed in its
	// fallback index with their artifactType and annotations.
	ctx := context.Background()
	img := f.rel.Lock.Find(release.KindImage, "reloader")[0]
	sboms := map[string]string{}
	for _, a := range f.rel.Lock.Find(release.KindSBOM, "reloader") {
		if a.Subject == img.Digest {
			sboms[a.Digest] = a.ArtifactType
		}
	}
	idx := img.Digest
	r, _ := newClient(t).Repository(ctx, target+"/reloader", false)
	raw, _, err := r.GetManifest(ctx, strings.Replace(idx, ":", "-", 1))
	if err != nil {
		t.Fatal(err)
	}
	var fi struct {
		Manifests []struct {
			Digest       string            `json:"digest"`
			ArtifactType string            `json:"artifactType"`
			Annotations  map[string]string `json:"annotations"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal(raw, &fi); err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, d := range fi.Manifests {
		if want, ok := sboms[d.Digest]; ok {
			found++
			if d.ArtifactType != want {
				t.Errorf("fallback descriptor %s has artifactType %q, want %q", d.Digest, d.ArtifactType, want)
			}
			if d.Annotations["org.opencontainers.image.created"] == "" {
				t.Errorf("fallback descriptor %s lost its annotations", d.Digest)
			}
		}
	}
	if len(sboms) == 0 || found != len(sboms) {
		t.Errorf("fallback index lists %d of the image's %d SBOM referrers: %s", found, len(sboms), raw)
	}
	// A re-run does nothing but look.
	rc2, err := copyRelease(context.Background(), f.options(t, target))
	if err != nil {
		t.Fatal(err)
	}
	if rc2.Stats.BlobsPushed != 0 || rc2.Stats.ManifestsPushed != 0 || rc2.Stats.TagsWritten != 0 || rc2.Stats.FallbackIndexes != 0 {
		t.Errorf("re-run wrote: %+v", rc2.Stats)
	}
}

// countingHandler records writes, so rejection tests can prove nothing was
// pushed.
type countingHandler struct {
	mu     sync.Mutex
	writes []string
	// heads counts HEAD requests.
	heads int
}

func (c *countingHandler) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			c.mu.Lock()
			c.heads++
			c.mu.Unlock()
		}
		if r.Method == http.MethodPut || r.Method == http.MethodPost || r.Method == http.MethodPatch {
			c.mu.Lock()
			c.writes = append(c.writes, r.Method+" "+r.URL.Path)
			c.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

func (c *countingHandler) manifestWrites() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, w := range c.writes {
		if strings.Contains(w, "/manifests/") {
			n++
		}
	}
	return n
}

func (c *countingHandler) headRequests() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.heads
}

func (c *countingHandler) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.writes)
}

// tamperer sits in front of the source registry and, once armed, flips the
// last byte of whatever it serves under one digest: a corrupted disk, a
// hostile mirror.
type tamperer struct {
	mu     sync.Mutex
	digest string
}

func (tp *tamperer) arm(digest string) {
	tp.mu.Lock()
	tp.digest = digest
	tp.mu.Unlock()
}

func (tp *tamperer) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tp.mu.Lock()
		d := tp.digest
		tp.mu.Unlock()
		if d == "" || r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/"+d) {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if len(body) > 0 {
			body[len(body)-1] ^= 0x01
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}

// lastLayer returns the digest of the last layer of manifest a.
func lastLayer(t *testing.T, a release.Artifact) string {
	t.Helper()
	ctx := context.Background()
	r, err := newClient(t).Repository(ctx, a.Repository, false)
	if err != nil {
		t.Fatal(err)
	}
	raw, _, err := r.GetManifest(ctx, a.Digest)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Layers []struct{ Digest string } `json:"layers"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m.Layers[len(m.Layers)-1].Digest
}

// A copy writes every blob before the first manifest, and every manifest by
// digest before the first tag: no manifest ever names a blob the target does
// not hold yet (each upload was hashed as it streamed and checked by the
// registry), and no tag points at anything not yet verified at the target.
// The lock artifact comes last, after the release's tags.
func TestCopyWritesBlobsThenManifestsThenTags(t *testing.T) {
	f := publish(t, nil)
	var ch countingHandler
	dst := startInProcess(t, ch.wrap)
	if _, err := copyRelease(context.Background(), f.options(t, dst.Host+"/ordered")); err != nil {
		t.Fatal(err)
	}
	lastBlob, firstManifest, lastManifest, firstTag := -1, -1, -1, -1
	for i, w := range ch.writes {
		if strings.Contains(w, "/reloader-release/") {
			continue
		}
		switch ref := w[strings.LastIndex(w, "/")+1:]; {
		case strings.Contains(w, "/blobs/"):
			lastBlob = i
		case strings.HasPrefix(ref, "sha256:"):
			if firstManifest < 0 {
				firstManifest = i
			}
			lastManifest = i
		default:
			if firstTag < 0 {
				firstTag = i
			}
		}
	}
	if lastBlob < 0 || firstManifest < 0 || firstTag < 0 {
		t.Fatalf("copy wrote blobs up to %d, manifests from %d, tags from %d: %v", lastBlob, firstManifest, firstTag, ch.writes)
	}
	if lastBlob > firstManifest {
		t.Errorf("blob write %q came after manifest write %q", ch.writes[lastBlob], ch.writes[firstManifest])
	}
	if lastManifest > firstTag {
		t.Errorf("manifest write %q came after tag write %q", ch.writes[lastManifest], ch.writes[firstTag])
	}
}
