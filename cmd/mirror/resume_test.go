package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/releasetest"
	testregistry "github.com/reloader-dev/reloader/test/registry"
	"github.com/reloader-dev/reloader/test/tools"
)

// uploadCounter is a reverse proxy on loopback in front of the registry
// that counts, per run, the blob uploads completed (by repository and
// digest) and the bytes of every upload body sent, and can be pointed at a
// restarted registry.
type uploadCounter struct {
	backend atomic.Pointer[url.URL]
	mu      sync.Mutex
	run     int
	// completed[run][repo@digest] is the bytes that upload sent.
	completed []map[string]int64
	sent      []int64
	// pending is the bytes sent per upload session, until it completes.
	pending map[string]int64
	// onComplete is called, without the lock, after each completion.
	onComplete func(run, n int)
}

func newUploadCounter() *uploadCounter {
	return &uploadCounter{completed: []map[string]int64{{}}, sent: []int64{0}, pending: map[string]int64{}}
}

func (c *uploadCounter) nextRun() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.run++
	c.completed = append(c.completed, map[string]int64{})
	c.sent = append(c.sent, 0)
}

type countingBody struct {
	io.ReadCloser
	add func(int)
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.add(n)
	return n, err
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(s int) { w.status = s; w.ResponseWriter.WriteHeader(s) }

func (c *uploadCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	repo, session, isUpload := strings.Cut(r.URL.Path, "/blobs/uploads/")
	repo = strings.TrimPrefix(repo, "/v2/")
	if isUpload && r.Body != nil && (r.Method == http.MethodPatch || r.Method == http.MethodPut || r.Method == http.MethodPost) {
		r.Body = countingBody{r.Body, func(n int) {
			c.mu.Lock()
			c.sent[c.run] += int64(n)
			c.pending[session] += int64(n)
			c.mu.Unlock()
		}}
	}
	proxy := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(c.backend.Load())
		pr.Out.Host = pr.In.Host
	}}
	sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	proxy.ServeHTTP(sw, r)
	d := r.URL.Query().Get("digest")
	if r.URL.Query().Get("mount") != "" {
		d = r.URL.Query().Get("mount")
	}
	if !isUpload || sw.status != http.StatusCreated || d == "" {
		return
	}
	c.mu.Lock()
	run := c.run
	c.completed[run][repo+"@"+d] = c.pending[session]
	delete(c.pending, session)
	n := len(c.completed[run])
	f := c.onComplete
	c.mu.Unlock()
	if f != nil {
		f(run, n)
	}
}

// An import killed (kill -9 of the real binary) halfway through the blobs,
// with the registry restarted meanwhile and again during the next run,
// completes on that next run without sending again any blob it had
// completed, and no tag exists at the target before the run that completes.
func TestImportResumesAfterKill9AndARegistryRestart(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds reloader-mirror and runs the distribution registry")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "reloader-mirror")
	if err := tools.GoBuild(ctx, "./cmd/mirror", bin); err != nil {
		t.Fatal(err)
	}
	src := startRegistry(t)
	s, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rel, err := releasetest.Publish(ctx, releasetest.Options{Registry: src.Host, Signer: s, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(dir, "cosign.pub")
	_ = os.WriteFile(key, s.PublicKeyPEM(), 0o644)
	trustFlags := []string{"--key", key, "--allow-unscanned", "--allow-no-provenance"}
	archive := filepath.Join(dir, "reloader-v1.2.3.tar")
	if code, _, errs := runCLI(t, append([]string{"export", "--lock-ref", rel.LockRef, "--to", archive}, trustFlags...)...); code != cli.ExitOK {
		t.Fatalf("export: exit %d: %s", code, errs)
	}
	code, out, errs := runCLI(t, append([]string{"plan", "-f", archive, "-o", "json"}, trustFlags...)...)
	var plan struct{ Blobs int }
	if code != cli.ExitOK || json.Unmarshal([]byte(out), &plan) != nil || plan.Blobs < 4 {
		t.Fatalf("plan: exit %d: %s %s", code, out, errs)
	}

	storage := filepath.Join(dir, "registry")
	reg, err := testregistry.StartDistribution(ctx, storage)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = reg.Stop() }()
	restart := func() {
		t.Helper()
		if err := reg.Stop(); err != nil {
			t.Errorf("stopping the registry: %v", err)
		}
		if reg, err = testregistry.StartDistribution(ctx, storage); err != nil {
			t.Fatal(err)
		}
	}
	counter := newUploadCounter()
	counter.backend.Store(&url.URL{Scheme: "http", Host: reg.Host})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: counter, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()
	target := l.Addr().String() + "/platform/reloader"

	half := (plan.Blobs + 1) / 2
	killed := make(chan struct{})
	var once sync.Once
	counter.onComplete = func(run, n int) {
		if run == 0 && n >= half {
			once.Do(func() { close(killed) })
		}
	}
	importCmd := func() *exec.Cmd {
		cmd := exec.CommandContext(ctx, bin, append([]string{"import", "-f", archive, "--target", target, "-j", "2", "-o", "json"}, trustFlags...)...)
		cmd.Env = append(os.Environ(), "DOCKER_CONFIG="+t.TempDir())
		return cmd
	}
	first := importCmd()
	var firstErr strings.Builder
	first.Stderr = &firstErr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- first.Wait() }()
	select {
	case <-killed:
		if err := first.Process.Kill(); err != nil { // SIGKILL: no cleanup runs
			t.Fatal(err)
		}
		<-done
	case err := <-done:
		t.Fatalf("the import finished (%v) before half of the %d blobs were at the target: %s", err, plan.Blobs, firstErr.String())
	}
	counter.mu.Lock()
	completedBefore := len(counter.completed[0])
	counter.mu.Unlock()
	// No tag anywhere at the target: tags come last.
	for _, repo := range catalog(t, reg.Host) {
		resp, err := http.Get("http://" + reg.Host + "/v2/" + repo + "/tags/list")
		if err != nil {
			t.Fatal(err)
		}
		var tl struct{ Tags []string }
		_ = json.NewDecoder(resp.Body).Decode(&tl)
		resp.Body.Close()
		if len(tl.Tags) > 0 {
			t.Errorf("after kill -9 at %d of %d blobs, %s has tags %v", completedBefore, plan.Blobs, repo, tl.Tags)
		}
	}

	restart()
	counter.backend.Store(&url.URL{Scheme: "http", Host: reg.Host})
	counter.nextRun()
	var restartOnce sync.Once
	restarted := make(chan struct{})
	counter.onComplete = func(run, n int) {
		if run == 1 && n >= 1 {
			restartOnce.Do(func() {
				go func() {
					defer close(restarted)
					restart()
					counter.backend.Store(&url.URL{Scheme: "http", Host: reg.Host})
				}()
			})
		}
	}
	second := importCmd()
	out2, err := second.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("the import after kill -9 failed: %v: %s %s\n%s", err, out2, stderr, reg.Logs(40))
	}
	select {
	case <-restarted:
	default:
		t.Log("the second run needed no upload, so the registry was not restarted during it")
	}
	counter.mu.Lock()
	var resent []string
	var resentBytes int64
	for k, n := range counter.completed[1] {
		if _, ok := counter.completed[0][k]; ok {
			resent = append(resent, k)
			resentBytes += n
		}
	}
	sent0, sent1, completedAfter := counter.sent[0], counter.sent[1], len(counter.completed[1])
	counter.mu.Unlock()
	t.Logf("%d blobs; killed after %d completed uploads (%d bytes sent); the next run completed %d uploads (%d bytes sent), of them %d already completed before (%d bytes re-sent)",
		plan.Blobs, completedBefore, sent0, completedAfter, sent1, len(resent), resentBytes)
	if len(resent) > 0 {
		t.Errorf("the resumed import sent again %d blobs it had completed: %v", len(resent), resent)
	}
	var rc struct {
		Stats struct{ BlobsPresent, BlobsPushed int }
	}
	if err := json.Unmarshal(out2, &rc); err != nil || rc.Stats.BlobsPresent < completedBefore {
		t.Errorf("receipt of the resumed import: %v: %s", err, out2)
	}
	if code, _, errs := runCLI(t, append([]string{"verify", "--lock-ref", reg.Host + "/platform/reloader/reloader-release:v1.2.3", "--target", reg.Host + "/platform/reloader"}, trustFlags...)...); code != cli.ExitOK {
		t.Fatalf("the release at the target after the resumed import: exit %d: %s", code, errs)
	}
}
