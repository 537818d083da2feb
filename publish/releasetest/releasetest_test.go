package releasetest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/testing/ca"

	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
	"github.com/reloader-dev/reloader/release/verify"
	testregistry "github.com/reloader-dev/reloader/test/registry"
)

const (
	identity = "https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1.2.3"
	issuer   = "https://token.actions.githubusercontent.com"
)

func startRegistry(t *testing.T) string {
	t.Helper()
	r, err := testregistry.StartInProcess(testregistry.InProcessOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Stop() })
	return r.Host
}

// A fast release is a real one: every variant (standard, UBI and their
// -fips images), the standard and UBI charts (not the
// library chart), SBOMs and their attestations, an unscanned lock, and it
// verifies as users verify it.
func TestKeyReleaseIsThePipelines(t *testing.T) {
	ctx := context.Background()
	s, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rel, err := releasetest.Publish(ctx, releasetest.Options{Registry: startRegistry(t), Signer: s})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range rel.Steps {
		t.Logf("%-28s %v", st.Name, st.Duration)
	}
	if len(rel.Indexes) != 4 || len(rel.Charts) != 2 || rel.Chart == "" {
		t.Fatalf("indexes %v charts %v", rel.Indexes, rel.Charts)
	}
	if rel.Lock.Scanned() || rel.Lock.Scan == nil || !rel.Lock.Scan.Skipped {
		t.Fatalf("the lock does not say the release is unscanned: %+v", rel.Lock.Scan)
	}
	kinds := map[release.Kind]int{}
	for _, a := range rel.Lock.Artifacts {
		kinds[a.Kind]++
	}
	if kinds[release.KindAttestation] == 0 || kinds[release.KindSBOM] == 0 || kinds[release.KindSignature] == 0 {
		t.Fatalf("lock kinds %v", kinds)
	}
	opts := verify.Options{Expect: s.Expect()}
	l, err := verify.Lock(ctx, rel.LockJSON, rel.LockBundle, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := verify.Artifacts(ctx, l, opts); err != nil {
		t.Fatal(err)
	}
}

// Keyless signatures carry VirtualSigstore log entries only when asked:
// with them the default policy (entries required) passes, without them it
// refuses.
func TestKeylessTransparencyLogBothWays(t *testing.T) {
	ctx := context.Background()
	for _, tlog := range []bool{true, false} {
		vs, err := ca.NewVirtualSigstore()
		if err != nil {
			t.Fatal(err)
		}
		s, err := releasetest.NewKeylessSigner(vs, identity, issuer)
		if err != nil {
			t.Fatal(err)
		}
		s.Tlog = tlog
		rel, err := releasetest.Publish(ctx, releasetest.Options{Registry: startRegistry(t), Signer: s})
		if err != nil {
			t.Fatalf("tlog %v: %v", tlog, err)
		}
		tr, err := s.TrustedRoot()
		if err != nil {
			t.Fatal(err)
		}
		opts := verify.Options{Expect: s.Expect(), TrustedRoot: tr, IgnoreSCT: true}
		l, err := verify.Lock(ctx, rel.LockJSON, rel.LockBundle, opts)
		if !tlog {
			if !errors.Is(err, trust.ErrUntrusted) {
				t.Fatalf("no log entries, entries required: %v", err)
			}
			// A policy that says nothing of the log requires it too: no
			// zero value may switch a check off.
			p, perr := trust.PolicyFor(s.Expect(), tr)
			if perr != nil {
				t.Fatal(perr)
			}
			p.IgnoreSCT = true
			if _, err := verify.Lock(ctx, rel.LockJSON, rel.LockBundle, verify.Options{Expect: s.Expect(), Policy: &p}); !errors.Is(err, trust.ErrUntrusted) {
				t.Fatalf("no log entries, a policy silent on the log: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("lock with log entries: %v", err)
		}
		if _, err := verify.Artifacts(ctx, l, opts); err != nil {
			t.Fatalf("artifacts with log entries: %v", err)
		}
	}
}
