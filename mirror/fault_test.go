package mirror_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/release"
)

// faults sits in front of the target registry: it answers 503 to the first
// uploads, and resets the connection halfway through any upload of one blob
// while armed.
type faults struct {
	mu          sync.Mutex
	unavailable int
	resetDigest string
	uploads     int
}

func (f *faults) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		isUpload := r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/blobs/uploads/")
		f.mu.Lock()
		if isUpload {
			f.uploads++
		}
		unavailable := isUpload && f.unavailable > 0
		if unavailable {
			f.unavailable--
		}
		reset := isUpload && f.resetDigest != "" && r.URL.Query().Get("digest") == f.resetDigest
		f.mu.Unlock()
		switch {
		case unavailable:
			_, _ = io.Copy(io.Discard, r.Body)
			http.Error(w, "maintenance", http.StatusServiceUnavailable)
		case reset:
			_, _ = io.CopyN(io.Discard, r.Body, 100)
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
		default:
			h.ServeHTTP(w, r)
		}
	})
}

func (f *faults) set(fn func(*faults)) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
	n := f.uploads
	f.uploads = 0
	return n
}

func TestCopyRetriesServerErrorsAndResets(t *testing.T) {
	f := publish(t, nil)
	fl := &faults{}
	dst := startInProcess(t, fl.wrap)
	fl.set(func(fl *faults) { fl.unavailable = 3 })
	rc, err := copyRelease(context.Background(), f.options(t, dst.Host+"/mirror"))
	if err != nil {
		t.Fatal(err)
	}
	if rc.Stats.Retries < 3 {
		t.Errorf("recovered from three 503s with %d retries", rc.Stats.Retries)
	}
}

func TestInterruptedCopyFailsClearlyAndReRunSendsOnlyWhatIsMissing(t *testing.T) {
	f := publish(t, nil)
	fl := &faults{}
	dst := startInProcess(t, fl.wrap)
	target := dst.Host + "/mirror"
	broken := lastLayer(t, f.rel.Lock.Find(release.KindImage, "reloader-ubi")[0])
	fl.set(func(fl *faults) { fl.resetDigest = broken })

	opts := f.options(t, target)
	opts.Retries = -1
	_, err := copyRelease(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), broken) {
		t.Fatalf("interrupted copy: error %v does not name blob %s", err, broken)
	}
	// No tag may point at the incomplete copy.
	r, _ := newClient(t).Repository(context.Background(), target+"/reloader", false)
	if _, ok, _ := r.HeadManifest(context.Background(), "v1.2.3"); ok {
		t.Error("a tag was written by a failed copy")
	}

	fl.set(func(fl *faults) { fl.resetDigest = "" })
	rc, err := copyRelease(context.Background(), f.options(t, target))
	if err != nil {
		t.Fatal(err)
	}
	uploads := fl.set(func(*faults) {})
	if rc.Stats.BlobsPresent == 0 {
		t.Error("re-run found nothing from the first run")
	}
	// The lock artifact's blobs (at most three) are new on the re-run too.
	if uploads < rc.Stats.BlobsPushed || uploads > rc.Stats.BlobsPushed+3 {
		t.Errorf("re-run uploaded %d blobs, reported %d pushed", uploads, rc.Stats.BlobsPushed)
	}
	g, _ := mirror.BuildGraph(context.Background(), f.rel.Lock, &mirror.RegistrySource{Client: newClient(t)})
	if total := len(g.Blobs()); rc.Stats.BlobsPushed+rc.Stats.BlobsMounted >= total {
		t.Errorf("re-run moved %d of %d blobs: it did not resume", rc.Stats.BlobsPushed+rc.Stats.BlobsMounted, total)
	}
	assertMirrored(t, f, target, rc)
}
