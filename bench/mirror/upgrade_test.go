package mirror_test

import (
	"testing"
	"time"

	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/mirror/registry"
	"github.com/reloader-dev/reloader/publish/pipeline"
	"github.com/reloader-dev/reloader/publish/releasetest"
)

// BenchmarkUpgradeVersusCrane is the partly present target every upgrade
// meets: the target already holds the previous release, and the next one,
// on the same base with the controller rebuilt, is copied into it. Each
// repetition gives each tool a fresh target, fills it with the previous
// release using that tool (not timed), then times its copy of the next:
// the mirror verifying at both ends, crane.Copy of every artifact of the
// next lock, at the same concurrency, order rotating. Same flags as
// BenchmarkMirrorVersusCrane:
//
//	go test ./bench/mirror/ -run XXX -bench Upgrade -benchtime 1x [-mirror.sizes real,1GiB] [-mirror.rtt 2ms]
func BenchmarkUpgradeVersusCrane(b *testing.B) {
	for _, c := range cases() {
		b.Run(c.name, func(b *testing.B) { benchUpgrade(b, c) })
	}
}

func benchUpgrade(b *testing.B, c benchCase) {
	bn := newBench(b, c)
	// The next release: another commit on the same base (for 1GiB, the
	// same padding), so what it shares with the previous one is what
	// consecutive releases share.
	next, err := releasetest.Publish(bn.ctx, releasetest.Options{Registry: bn.src, Signer: bn.signer, Seed: 8, PadSeed: 7,
		Version: "v1.2.4", MainPackage: "./cmd/reloader", Platforms: pipeline.StandardPlatforms(), PadBytes: c.pad})
	if err != nil {
		b.Fatal(err)
	}
	for range b.N {
		var mirrorTimes, craneTimes []time.Duration
		var st mirror.Stats
		contestants := []func(){
			func() {
				d, s := bn.upgradeMirror(b, next)
				mirrorTimes, st = append(mirrorTimes, d), s
			},
			func() { craneTimes = append(craneTimes, bn.upgradeCrane(b, next)) },
		}
		for rep := range c.reps {
			for i := range contestants {
				contestants[(rep+i)%len(contestants)]()
			}
		}
		mMed, mText := spread(mirrorTimes)
		cMed, cText := spread(craneTimes)
		b.ReportMetric(cMed.Seconds()/mMed.Seconds(), "upgrade-speedup-vs-crane")
		b.Logf("%s upgrade: the next release into a target holding the previous one (the mirror pushed %d blobs, %d MiB, and found %d present), round trip %v, %d repetitions rotating, concurrency %d, median [min-max]: mirror copy %s (verify+push+read-back verify), crane.Copy jobs %d %s (not verifying)",
			c.name, st.BlobsPushed, st.BytesPushed>>20, st.BlobsPresent, *rtt, c.reps, *concurrency, mText, *concurrency, cText)
		b.Logf("%s upgrade: mirror/crane %.2fx", c.name, cMed.Seconds()/mMed.Seconds())
	}
}

// upgradeMirror copies the previous release into a fresh target, then
// times the copy of next into it; it returns that time and what that copy
// did.
func (bn *bench) upgradeMirror(b *testing.B, next *releasetest.Release) (time.Duration, mirror.Stats) {
	cl, _ := registry.New(registry.Options{})
	defer cl.Close()
	dst, stop := start(b)
	defer stop()
	opts := mirror.PushOptions{Client: cl, Target: dst.Host + "/m", Concurrency: *concurrency}
	if _, err := bn.copyOf(bn.rel, cl, opts); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	rc, err := bn.copyOf(next, cl, opts)
	if err != nil {
		b.Fatal(err)
	}
	took := time.Since(t0)
	if rc.Stats.BlobsPresent == 0 {
		b.Fatalf("the next release shares no blob with the previous one: not an upgrade")
	}
	return took, rc.Stats
}

// upgradeCrane is upgradeMirror with crane.Copy of every artifact.
func (bn *bench) upgradeCrane(b *testing.B, next *releasetest.Release) time.Duration {
	cdst, stop := start(b)
	defer stop()
	everyArtifact(b, bn.rel, cdst.Host, bn.craneCopy)
	return everyArtifact(b, next, cdst.Host, bn.craneCopy)
}
