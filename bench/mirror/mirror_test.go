// Package mirror_test measures reloader-mirror's throughput against
// go-containerregistry's crane.Copy and regclient's regctl (pinned in
// hack/tools/bench) copying the same release set between two loopback
// registries, in the same run, and the cost of a no-op re-run. All get the
// same concurrency: the mirror's -concurrency blob transfers, crane.WithJobs
// and regctl's per-registry request limit of the same number, for every
// artifact of the set. Each repetition copies into fresh registries and
// rotates which tool goes first; the report gives the median and range. It
// runs only under -bench:
//
//	go test ./bench/mirror/ -run XXX -bench . -benchtime 1x [-mirror.reps 3]
package mirror_test

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/mirror/registry"
	"github.com/reloader-dev/reloader/release/pipeline"
	"github.com/reloader-dev/reloader/release/releasetest"
	"github.com/reloader-dev/reloader/release/trust"
	testregistry "github.com/reloader-dev/reloader/test/registry"
	"github.com/reloader-dev/reloader/test/tools"
)

var (
	reps        = flag.Int("mirror.reps", 3, "repetitions of each tool, order alternating")
	concurrency = flag.Int("mirror.concurrency", 4, "parallel blob transfers of both tools")
)

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

// spread is "median [min-max]" of durations in seconds.
func spread(d []time.Duration) (median time.Duration, text string) {
	s := slices.Clone(d)
	slices.Sort(s)
	median = s[len(s)/2]
	return median, fmt.Sprintf("%.2f s [%.2f-%.2f]", median.Seconds(), s[0].Seconds(), s[len(s)-1].Seconds())
}

func BenchmarkMirrorVersusCrane(b *testing.B) {
	ctx := context.Background()
	src := start(b)
	s, err := releasetest.NewKeySigner(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	// A real release: the pipeline builds the controller for every
	// platform it ships (a few minutes, once, outside the timed copies).
	rel, err := releasetest.Publish(ctx, releasetest.Options{Registry: src.Host, Signer: s, Seed: 7,
		MainPackage: "./cmd/reloader", Platforms: pipeline.StandardPlatforms()})
	if err != nil {
		b.Fatal(err)
	}
	pub, err := s.PublicKey()
	if err != nil {
		b.Fatal(err)
	}
	regctl, err := tools.Binary(ctx, tools.Bench, "regctl")
	if err != nil {
		b.Fatal(err)
	}
	// regctl reads its registry settings from a config file of its own.
	regctlEnv := append(os.Environ(), "REGCTL_CONFIG="+filepath.Join(b.TempDir(), "regctl.json"))
	regctlRun := func(args ...string) {
		cmd := exec.CommandContext(ctx, regctl, args...)
		cmd.Env = regctlEnv
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("regctl %v: %v\n%s", args, err, out)
		}
	}
	plainHTTP := func(host string) {
		regctlRun("registry", "set", host, "--tls", "disabled", "--req-concurrent", strconv.Itoa(*concurrency))
	}
	plainHTTP(src.Host)
	for range b.N {
		var total int64
		var mirrorRuns, craneRuns, regctlRuns, noopRuns []time.Duration
		runMirror := func() {
			cl, _ := registry.New(registry.Options{})
			defer cl.Close()
			dst := start(b)
			opts := mirror.PushOptions{Client: cl, Target: dst.Host + "/m", Concurrency: *concurrency}
			// A run is what reloader-mirror copy does: verify, then push.
			copyRelease := func() (*mirror.Receipt, error) {
				v, err := trust.NewVerifier(trust.Policy{PublicKey: pub})
				if err != nil {
					return nil, err
				}
				verified, err := mirror.Verify(ctx, &mirror.RegistrySource{Client: cl}, rel.LockJSON, rel.LockBundle, v)
				if err != nil {
					return nil, err
				}
				return verified.Push(ctx, opts)
			}
			t0 := time.Now()
			rc, err := copyRelease()
			if err != nil {
				b.Fatal(err)
			}
			mirrorRuns = append(mirrorRuns, time.Since(t0))
			total = rc.Stats.BytesPushed
			t1 := time.Now()
			rc2, err := copyRelease()
			if err != nil {
				b.Fatal(err)
			}
			noopRuns = append(noopRuns, time.Since(t1))
			if rc2.Stats.BytesPushed != 0 {
				b.Fatalf("no-op re-run pushed %d bytes", rc2.Stats.BytesPushed)
			}
		}
		runCrane := func() {
			cdst := start(b)
			m, _ := mirror.NewMapping(cdst.Host+"/c", rel.Lock, nil)
			t0 := time.Now()
			for _, a := range rel.Lock.Artifacts {
				if err := crane.Copy(a.Repository+"@"+a.Digest, m.Repository(a.Repository)+"@"+a.Digest,
					crane.WithContext(ctx), crane.WithJobs(*concurrency)); err != nil {
					b.Fatal(err)
				}
			}
			craneRuns = append(craneRuns, time.Since(t0))
		}
		runRegctl := func() {
			rdst := start(b)
			plainHTTP(rdst.Host)
			m, _ := mirror.NewMapping(rdst.Host+"/r", rel.Lock, nil)
			t0 := time.Now()
			for _, a := range rel.Lock.Artifacts {
				regctlRun("image", "copy", a.Repository+"@"+a.Digest, m.Repository(a.Repository)+"@"+a.Digest)
			}
			regctlRuns = append(regctlRuns, time.Since(t0))
		}
		contestants := []func(){runMirror, runCrane, runRegctl}
		for r := range *reps {
			for i := range contestants {
				contestants[(r+i)%len(contestants)]()
			}
		}
		mMed, mText := spread(mirrorRuns)
		cMed, cText := spread(craneRuns)
		rMed, rText := spread(regctlRuns)
		_, nText := spread(noopRuns)
		mbps := func(d time.Duration) float64 { return float64(total) / (1 << 20) / d.Seconds() }
		b.ReportMetric(mbps(mMed), "mirror-MiB/s")
		b.ReportMetric(mbps(cMed), "crane-MiB/s")
		b.ReportMetric(mbps(rMed), "regctl-MiB/s")
		b.ReportMetric(cMed.Seconds()/mMed.Seconds(), "speedup-vs-crane")
		b.ReportMetric(rMed.Seconds()/mMed.Seconds(), "speedup-vs-regctl")
		b.Logf("%d MiB, %d repetitions rotating, concurrency %d, median [min-max]: mirror %s (verify+push+read-back verify), crane.Copy WithJobs(%d) %s, regctl image copy %s (neither verifies), no-op re-run %s",
			total>>20, *reps, *concurrency, mText, *concurrency, cText, rText, nText)
	}
}
