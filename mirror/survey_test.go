package mirror_test

import (
	"context"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/mirror"
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
		asked:          func() bool { heads, _ := ch.requests(); return heads > 0 },
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

func verifyToPush(t *testing.T, opts copyOptions) *mirror.Release {
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
