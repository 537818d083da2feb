package mirror_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
)

// gatedSource holds every blob read of the source (the signature layers
// the verification reads) until the target has been asked something, or
// until a timeout, which it records.
type gatedSource struct {
	*mirror.RegistrySource
	asked    func() bool
	timedOut *atomic.Bool
}

func (s gatedSource) Blob(ctx context.Context, repo, digest string) (io.ReadCloser, int64, error) {
	deadline := time.Now().Add(10 * time.Second)
	for !s.asked() && !s.timedOut.Load() {
		if time.Now().After(deadline) {
			s.timedOut.Store(true)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return s.RegistrySource.Blob(ctx, repo, digest)
}

func TestTheTargetIsAskedWhatItHoldsWhileTheSourceIsVerified(t *testing.T) {
	f := publish(t, nil)
	var ch countingHandler
	dst := startInProcess(t, ch.wrap)
	opts := f.options(t, dst.Host+"/asked")
	var timedOut atomic.Bool
	opts.Source = gatedSource{
		RegistrySource: opts.Source.(*mirror.RegistrySource),
		asked:          func() bool { return ch.headRequests() > 0 },
		timedOut:       &timedOut,
	}
	if _, err := copyRelease(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if timedOut.Load() {
		t.Error("the source's signatures were read for verification, and the target was asked nothing for 10 s: the questions wait for the verdict")
	}
}

func TestABlobSharedByRepositoriesIsUploadedOnceThoughTheTargetWasAskedBefore(t *testing.T) {
	// The in-process registry keeps one blob store, as distribution,
	// Harbor and Artifactory do: once a blob is written to one
	// repository, every other finds it. The survey, asked before any
	// write, said it was missing everywhere.
	f := publish(t, nil)
	dst := startInProcess(t, nil)
	rc, err := copyRelease(context.Background(), f.options(t, dst.Host+"/shared"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := mirror.BuildGraph(context.Background(), f.rel.Lock, &mirror.RegistrySource{Client: newClient(t)})
	if err != nil {
		t.Fatal(err)
	}
	distinct := map[string]int64{}
	for _, b := range g.Blobs() {
		distinct[b.Digest] = b.Size
	}
	var want int64
	for _, size := range distinct {
		want += size
	}
	if len(g.Blobs()) == len(distinct) {
		t.Fatal("the fixture shares no blob between repositories; this test needs one")
	}
	if rc.Stats.BytesPushed != want {
		t.Errorf("pushed %d bytes; the release's distinct blobs are %d", rc.Stats.BytesPushed, want)
	}
}

func TestAReleaseVerifiedForOneTargetIsPushedWholeToAnother(t *testing.T) {
	f := publish(t, nil)
	asked := startInProcess(t, nil)
	other := startInProcess(t, nil)
	opts := f.options(t, asked.Host+"/asked")
	rel := verifyToPush(t, opts)
	// The answers are the first target's; the other is asked for itself.
	opts.Target = other.Host + "/other"
	rc, err := rel.Push(context.Background(), opts.PushOptions)
	if err != nil {
		t.Fatal(err)
	}
	assertMirrored(t, f, opts.Target, rc)
}

func TestASecondPushOfOneReleaseAsksTheTargetAgain(t *testing.T) {
	f := publish(t, nil)
	dst := startInProcess(t, nil)
	opts := f.options(t, dst.Host+"/twice")
	rel := verifyToPush(t, opts)
	if _, err := rel.Push(context.Background(), opts.PushOptions); err != nil {
		t.Fatal(err)
	}
	// The survey said the target held nothing; the first push changed
	// that.
	rc, err := rel.Push(context.Background(), opts.PushOptions)
	if err != nil {
		t.Fatal(err)
	}
	if rc.Stats.BlobsPushed != 0 || rc.Stats.ManifestsPushed != 0 {
		t.Errorf("second push wrote again: %+v", rc.Stats)
	}
}

func verifyToPush(t *testing.T, opts copyOptions) *mirror.Verified {
	t.Helper()
	v, err := trust.NewVerifier(opts.Policy)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := mirror.VerifyToPush(context.Background(), opts.Source, opts.LockJSON, opts.LockBundle, v, opts.PushOptions)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

func TestATargetServingAlteredBytesFailsTheReadBackAndGetsNoTag(t *testing.T) {
	f := publish(t, nil)
	var sig release.Artifact
	for _, a := range f.rel.Lock.Artifacts {
		if a.Kind == release.KindSignature && a.Subject == f.rel.Chart {
			sig = a
		}
	}
	cases := []struct {
		name string
		// digest is what the target alters when it serves it.
		digest func(t *testing.T) string
	}{
		{"a manifest", func(*testing.T) string { return f.rel.Chart }},
		{"a signature layer", func(t *testing.T) string { return lastLayer(t, sig) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var lies tamperer
			var ch countingHandler
			dst := startInProcess(t, func(h http.Handler) http.Handler { return ch.wrap(lies.wrap(h)) })
			opts := f.options(t, dst.Host+"/lying")
			// Fresh: everything is written, then read back altered.
			lies.arm(tc.digest(t))
			_, err := copyRelease(context.Background(), opts)
			if err == nil || !strings.Contains(err.Error(), "digest") {
				t.Fatalf("copy to a target serving altered %s: %v, want a digest error", tc.name, err)
			}
			for _, w := range ch.writes {
				if ref := w[strings.LastIndex(w, "/")+1:]; strings.Contains(w, "/manifests/") && !strings.HasPrefix(ref, "sha256:") {
					t.Errorf("tag written though the read-back failed: %s", w)
				}
			}
			// A re-run: the target holds everything now, and the survey
			// asks before Push; the altered bytes it is served are not
			// taken for the target's content.
			_, err = copyRelease(context.Background(), opts)
			if err == nil || !strings.Contains(err.Error(), "digest") || !strings.Contains(err.Error(), "no tag was written") {
				t.Fatalf("re-run: %v, want a digest error", err)
			}
		})
	}
}
