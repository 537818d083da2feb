// Package mirror_test measures reloader-mirror's throughput against
// go-containerregistry's crane.Copy and regclient's regctl (pinned in
// hack/tools/bench) copying the same release set between two loopback
// registries, in the same run, and the cost of a no-op re-run of the mirror
// and of crane into the complete target. All get the same concurrency: the
// mirror's -concurrency blob transfers, crane.WithJobs and regctl's
// per-registry request limit of the same number, for every artifact of the
// set. Each repetition copies into fresh registries and rotates which tool
// goes first; the report gives the median and range.
//
// Two sizes: "real", the release of the real controller for every platform
// it ships (~33 MiB), and "1GiB", the same release with ~1 GiB of random
// data in its UBI base (releasetest.Options.PadBytes): the same lock layout
// (indexes, platform images, signatures, attestations, charts), larger
// blobs. It runs only under -bench:
//
//	go test ./bench/mirror/ -run XXX -bench . -benchtime 1x [-mirror.sizes real,1GiB] [-mirror.reps 3] [-mirror.bigreps 2] [-mirror.rtt 2ms]
//
// -mirror.rtt delays every request to every registry, as a round trip to a
// registry a network away would: on loopback a request costs microseconds,
// so only CPU is measured, and a tool's sequential round trips cost nothing.
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
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/mirror/registry"
	"github.com/reloader-dev/reloader/publish/pipeline"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
	testregistry "github.com/reloader-dev/reloader/test/registry"
	"github.com/reloader-dev/reloader/test/tools"
)

var (
	reps        = flag.Int("mirror.reps", 3, "repetitions of each tool on the real release, order rotating")
	bigReps     = flag.Int("mirror.bigreps", 2, "repetitions of each tool on the 1 GiB release, order rotating")
	concurrency = flag.Int("mirror.concurrency", 4, "parallel blob transfers of every tool")
	sizes       = flag.String("mirror.sizes", "real,1GiB", "release sizes to measure: real, 1GiB")
	rtt         = flag.Duration("mirror.rtt", 0, "delay added to every registry request, as a network round trip would (loopback has none)")
)

// benchCase is one release size.
type benchCase struct {
	name string
	pad  int64
	reps int
}

func cases() []benchCase {
	all := []benchCase{{"real", 0, *reps}, {"1GiB", 1 << 30, *bigReps}}
	want := strings.Split(*sizes, ",")
	return slices.DeleteFunc(all, func(c benchCase) bool { return !slices.Contains(want, c.name) })
}

// start runs a registry; stop frees it (an in-memory registry holds every
// byte pushed to it, so a 1 GiB case cannot keep its targets to the end).
func start(b *testing.B) (r *testregistry.Registry, stop func()) {
	var opts testregistry.InProcessOptions
	if d := *rtt; d > 0 {
		// Every tool pays the same delay per request: what a registry a
		// network away costs, and what concurrent reads can overlap.
		opts.Wrap = func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				time.Sleep(d)
				h.ServeHTTP(w, req)
			})
		}
	}
	r, err := testregistry.StartInProcess(opts)
	if err != nil {
		b.Fatal(err)
	}
	return r, func() {
		remote.DefaultTransport.(*http.Transport).CloseIdleConnections()
		_ = r.Stop()
	}
}

// spread is "median [min-max]" of durations in seconds; the median of an
// even count is the mean of the middle two.
func spread(d []time.Duration) (median time.Duration, text string) {
	s := slices.Clone(d)
	slices.Sort(s)
	median = s[len(s)/2]
	if len(s)%2 == 0 {
		median = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return median, fmt.Sprintf("%.2f s [%.2f-%.2f]", median.Seconds(), s[0].Seconds(), s[len(s)-1].Seconds())
}

func BenchmarkMirrorVersusCrane(b *testing.B) {
	for _, c := range cases() {
		b.Run(c.name, func(b *testing.B) { benchSize(b, c) })
	}
}

// bench is one size's fixture: the published release and the tools.
type bench struct {
	ctx       context.Context
	rel       *releasetest.Release
	src       string // the source registry's host
	signer    releasetest.Signer
	pub       any
	regctl    string
	regctlEnv []string
	// careful is the careful user's cosign-then-crane pipeline (copy only).
	careful *careful
}

func newBench(b *testing.B, c benchCase) *bench {
	ctx := context.Background()
	src, stop := start(b)
	b.Cleanup(stop)
	s, err := releasetest.NewKeySigner(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	// A real release: the pipeline builds the controller for every
	// platform it ships (a few minutes, once, outside the timed copies).
	rel, err := releasetest.Publish(ctx, releasetest.Options{Registry: src.Host, Signer: s, Seed: 7,
		MainPackage: "./cmd/reloader", Platforms: pipeline.StandardPlatforms(), PadBytes: c.pad})
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
	bn := &bench{ctx: ctx, rel: rel, src: src.Host, signer: s, pub: pub, regctl: regctl,
		regctlEnv: append(os.Environ(), "REGCTL_CONFIG="+filepath.Join(b.TempDir(), "regctl.json"))}
	bn.plainHTTP(b, src.Host)
	return bn
}

func (bn *bench) regctlRun(b *testing.B, args ...string) {
	cmd := exec.CommandContext(bn.ctx, bn.regctl, args...)
	cmd.Env = bn.regctlEnv
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("regctl %v: %v\n%s", args, err, out)
	}
}

func (bn *bench) plainHTTP(b *testing.B, host string) {
	bn.regctlRun(b, "registry", "set", host, "--tls", "disabled", "--req-concurrent", strconv.Itoa(*concurrency))
}

// runs are the timings of every repetition, by what was timed.
type runs struct {
	// import: the mirror imported an exported layout, crane and regctl
	// pushed from it (import_test.go); else all copied registry to registry.
	imported                                 bool
	total                                    int64
	mirror, mirrorNoop, crane, craneNoop, rg []time.Duration
	// careful and carefulNoop: the careful user's pipeline (copy only);
	// sha256sum: coreutils checking the archive's checksums (import only).
	careful, carefulNoop, sha256sum []time.Duration
}

// copyRelease is what reloader-mirror copy does: verify (asking the target
// what it holds meanwhile), then push.
func (bn *bench) copyRelease(cl *registry.Client, opts mirror.PushOptions) (*mirror.Receipt, error) {
	return bn.copyOf(bn.rel, cl, opts)
}

// copyOf is copyRelease of any release published to the source.
func (bn *bench) copyOf(rel *releasetest.Release, cl *registry.Client, opts mirror.PushOptions) (*mirror.Receipt, error) {
	v, err := trust.NewVerifier(trust.Policy{PublicKey: bn.pub})
	if err != nil {
		return nil, err
	}
	verified, err := mirror.VerifyToPush(bn.ctx, &mirror.RegistrySource{Client: cl}, rel.LockJSON, rel.LockBundle, v, opts)
	if err != nil {
		return nil, err
	}
	return verified.Push(bn.ctx, opts)
}

func (bn *bench) runMirror(b *testing.B, r *runs) { bn.runTwice(b, r, bn.copyRelease) }

// runTwice times write into a fresh target, then again into the now
// complete target: the no-op, which must push nothing.
func (bn *bench) runTwice(b *testing.B, r *runs, write func(*registry.Client, mirror.PushOptions) (*mirror.Receipt, error)) {
	cl, _ := registry.New(registry.Options{})
	defer cl.Close()
	dst, stop := start(b)
	defer stop()
	opts := mirror.PushOptions{Client: cl, Target: dst.Host + "/m", Concurrency: *concurrency}
	t0 := time.Now()
	rc, err := write(cl, opts)
	if err != nil {
		b.Fatal(err)
	}
	r.mirror = append(r.mirror, time.Since(t0))
	r.total = rc.Stats.BytesPushed
	t1 := time.Now()
	rc2, err := write(cl, opts)
	if err != nil {
		b.Fatal(err)
	}
	r.mirrorNoop = append(r.mirrorNoop, time.Since(t1))
	if rc2.Stats.BytesPushed != 0 {
		b.Fatalf("no-op re-run pushed %d bytes", rc2.Stats.BytesPushed)
	}
}

func (bn *bench) runCrane(b *testing.B, r *runs) { bn.everyArtifactTwice(b, r, bn.craneCopy) }

// craneCopy is crane.Copy of one artifact, at the mirror's concurrency.
func (bn *bench) craneCopy(a release.Artifact, target string) error {
	return crane.Copy(a.Repository+"@"+a.Digest, target, crane.WithContext(bn.ctx), crane.WithJobs(*concurrency))
}

// everyArtifact times write of every artifact of rel's lock to its
// reference in the registry host, under "/c".
func everyArtifact(b *testing.B, rel *releasetest.Release, host string, write func(a release.Artifact, target string) error) time.Duration {
	m, _ := mirror.NewMapping(host+"/c", rel.Lock, nil)
	t0 := time.Now()
	for _, a := range rel.Lock.Artifacts {
		if err := write(a, m.Repository(a.Repository)+"@"+a.Digest); err != nil {
			b.Fatalf("%s: %v", a.Digest, err)
		}
	}
	return time.Since(t0)
}

// everyArtifactTwice times write of every artifact of the lock (to its
// target reference) into a fresh registry, then again into the now
// complete one: crane's no-op.
func (bn *bench) everyArtifactTwice(b *testing.B, r *runs, write func(a release.Artifact, target string) error) {
	cdst, stop := start(b)
	defer stop()
	all := func() time.Duration { return everyArtifact(b, bn.rel, cdst.Host, write) }
	r.crane = append(r.crane, all())
	r.craneNoop = append(r.craneNoop, all())
}

func (bn *bench) runRegctl(b *testing.B, r *runs) {
	bn.regctlCopy(b, r, func(a release.Artifact) string { return a.Repository + "@" + a.Digest })
}

// regctlCopy times `regctl image copy` of every artifact of the lock, from
// where source says, into a fresh registry.
func (bn *bench) regctlCopy(b *testing.B, r *runs, source func(release.Artifact) string) {
	rdst, stop := start(b)
	defer stop()
	bn.plainHTTP(b, rdst.Host)
	m, _ := mirror.NewMapping(rdst.Host+"/r", bn.rel.Lock, nil)
	t0 := time.Now()
	for _, a := range bn.rel.Lock.Artifacts {
		bn.regctlRun(b, "image", "copy", source(a), m.Repository(a.Repository)+"@"+a.Digest)
	}
	r.rg = append(r.rg, time.Since(t0))
}

func benchSize(b *testing.B, c benchCase) {
	bn := newBench(b, c)
	bn.careful = newCareful(bn.ctx, b, bn.signer.PublicKeyPEM())
	for range b.N {
		r := &runs{}
		contestants := []func(*testing.B, *runs){bn.runMirror, bn.runCrane, bn.runRegctl, bn.runCareful}
		for rep := range c.reps {
			for i := range contestants {
				contestants[(rep+i)%len(contestants)](b, r)
			}
		}
		report(b, c, r)
	}
}

func report(b *testing.B, c benchCase, r *runs) {
	mMed, mText := spread(r.mirror)
	cMed, cText := spread(r.crane)
	rMed, rText := spread(r.rg)
	nMed, nText := spread(r.mirrorNoop)
	cnMed, cnText := spread(r.craneNoop)
	mbps := func(d time.Duration) float64 { return float64(r.total) / (1 << 20) / d.Seconds() }
	b.ReportMetric(mbps(mMed), "mirror-MiB/s")
	b.ReportMetric(mbps(cMed), "crane-MiB/s")
	b.ReportMetric(mbps(rMed), "regctl-MiB/s")
	b.ReportMetric(cMed.Seconds()/mMed.Seconds(), "speedup-vs-crane")
	b.ReportMetric(cnMed.Seconds()/nMed.Seconds(), "noop-speedup-vs-crane")
	b.ReportMetric(rMed.Seconds()/mMed.Seconds(), "speedup-vs-regctl")
	mirror, crane, regctl := "mirror copy", "crane.Copy", "regctl image copy"
	if r.imported {
		mirror, crane, regctl = "mirror import (open+verify+push+read-back verify)", "crane push (remote.Write/WriteIndex)", "regctl image copy ocidir://"
	}
	b.Logf("%s: %d MiB, round trip %v, %d repetitions rotating, concurrency %d, median [min-max]: %s %s (verify+push+read-back verify), %s jobs %d %s, %s %s (neither verifies); no-op re-run: mirror %s (verifying both ends), crane %s",
		c.name, r.total>>20, *rtt, c.reps, *concurrency, mirror, mText, crane, *concurrency, cText, regctl, rText, nText, cnText)
	b.Logf("%s: mirror/crane %.2fx verifying, %.2fx no-op", c.name, cMed.Seconds()/mMed.Seconds(), cnMed.Seconds()/nMed.Seconds())
	f := figures{Mirror: mMed, MirrorNoop: nMed, Crane: cMed}
	if len(r.careful) > 0 {
		var kText, knText string
		f.Careful, kText = spread(r.careful)
		f.CarefulNoop, knText = spread(r.carefulNoop)
		b.ReportMetric(f.Careful.Seconds()/mMed.Seconds(), "speedup-vs-careful")
		b.ReportMetric(f.CarefulNoop.Seconds()/nMed.Seconds(), "noop-speedup-vs-careful")
		b.Logf("%s: careful user (cosign v3 verify + verify-attestation x3, %d at a time, then crane copy --jobs %d): copy %s, no-op %s; careful/mirror %.2fx copy, %.2fx no-op",
			c.name, *concurrency, *concurrency, kText, knText, f.Careful.Seconds()/mMed.Seconds(), f.CarefulNoop.Seconds()/nMed.Seconds())
	}
	if len(r.sha256sum) > 0 {
		var sText string
		f.SHA256Sum, sText = spread(r.sha256sum)
		b.ReportMetric(nMed.Seconds()/f.SHA256Sum.Seconds(), "noop-over-sha256sum")
		b.Logf("%s: sha256sum -c of the archive %s; import no-op/sha256sum %.2fx", c.name, sText, nMed.Seconds()/f.SHA256Sum.Seconds())
	}
	for _, m := range f.misses(r.imported) {
		b.Errorf("%s, round trip %v: target missed: %s", c.name, *rtt, m)
	}
}
