// Package mirror_test measures reloader-mirror's throughput against
// go-containerregistry's crane.Copy of the same release set between two
// loopback registries, in the same run, and the cost of a no-op re-run.
// It runs only under -bench:
//
//	go test ./bench/mirror/ -run XXX -bench . -benchtime 1x [-mirror.mib 1024]
package mirror_test

import (
	"context"
	"flag"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/mirror/registry"
	"github.com/reloader-dev/reloader/mirror/testrelease"
	"github.com/reloader-dev/reloader/release/trust"
	testregistry "github.com/reloader-dev/reloader/test/registry"
)

var sizeMiB = flag.Int("mirror.mib", 1024, "approximate release size in MiB")

func start(b *testing.B) *testregistry.Registry {
	r, err := testregistry.StartInProcess(testregistry.InProcessOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		remote.DefaultTransport.(*http.Transport).CloseIdleConnections()
		_ = r.Stop()
	})
	return r
}

func BenchmarkMirrorVersusCrane(b *testing.B) {
	ctx := context.Background()
	src := start(b)
	s, err := testrelease.NewKeySigner()
	if err != nil {
		b.Fatal(err)
	}
	// Five platform images, each with its own layers of 16 MiB.
	const layer = 16 << 20
	per := *sizeMiB * (1 << 20) / 5 / layer
	if per < 1 {
		per = 1
	}
	rel, err := testrelease.Publish(ctx, testrelease.Options{Registry: src.Host, Signer: s, Seed: 7, LayerBytes: layer, LayersPerImage: per})
	if err != nil {
		b.Fatal(err)
	}
	var total int64
	for range b.N {
		cl, _ := registry.New(registry.Options{})
		dst := start(b)
		t0 := time.Now()
		rc, err := mirror.Mirror(ctx, mirror.Options{
			Source: &mirror.RegistrySource{Client: cl}, LockJSON: rel.LockJSON, LockBundle: rel.LockBundle,
			Policy: trust.Policy{PublicKey: s.Key.Public()}, Client: cl, Target: dst.Host + "/m",
		})
		if err != nil {
			b.Fatal(err)
		}
		mirrorDur := time.Since(t0)
		total = rc.Stats.BytesPushed

		t1 := time.Now()
		rc2, err := mirror.Mirror(ctx, mirror.Options{
			Source: &mirror.RegistrySource{Client: cl}, LockJSON: rel.LockJSON, LockBundle: rel.LockBundle,
			Policy: trust.Policy{PublicKey: s.Key.Public()}, Client: cl, Target: dst.Host + "/m",
		})
		if err != nil {
			b.Fatal(err)
		}
		noop := time.Since(t1)

		cdst := start(b)
		m, _ := mirror.NewMapping(cdst.Host+"/c", rel.Lock, nil)
		t2 := time.Now()
		for _, a := range rel.Lock.Artifacts {
			if err := crane.Copy(a.Repository+"@"+a.Digest, m.Repository(a.Repository)+"@"+a.Digest, crane.WithContext(ctx)); err != nil {
				b.Fatal(err)
			}
		}
		craneDur := time.Since(t2)
		cl.Close()
		mbps := func(d time.Duration) float64 { return float64(total) / (1 << 20) / d.Seconds() }
		b.ReportMetric(mbps(mirrorDur), "mirror-MiB/s")
		b.ReportMetric(mbps(craneDur), "crane-MiB/s")
		b.ReportMetric(craneDur.Seconds()/mirrorDur.Seconds(), "speedup-vs-crane")
		b.ReportMetric(noop.Seconds(), "noop-rerun-s")
		b.ReportMetric(float64(rc2.Stats.BytesPushed), "noop-rerun-bytes")
		b.Logf("%d MiB: mirror %s (verify+push+read-back verify), crane.Copy %s (no verification), no-op re-run %s pushing %d bytes",
			total>>20, mirrorDur.Round(time.Millisecond), craneDur.Round(time.Millisecond), noop.Round(time.Millisecond), rc2.Stats.BytesPushed)
	}
}
