package trust_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/release/trust"
	"github.com/reloader-dev/reloader/test/virtualsigstore"
)

// timestampPolicy trusts the release workflow under g's trusted root with
// only the time sources parts keeps; the log is not waived, and the test
// CA logs to no CT log.
func timestampPolicy(t *testing.T, g *virtualsigstore.GitHubCA, parts virtualsigstore.Parts, ignoreTlog bool) trust.Policy {
	t.Helper()
	tr, err := g.TrustedRootOf(parts)
	if err != nil {
		t.Fatal(err)
	}
	return trust.Policy{Identity: releaseWorkflow, Issuer: actionsIssuer, TrustedRoot: tr, IgnoreSCT: true,
		InsecureIgnoreTlog: ignoreTlog, TransparencyLogThreshold: 1}
}

// A lock signed keyless with a timestamp from the test Sigstore's TSA and no
// transparency log entry (no Rekor v1 inclusion promise) verifies, on the
// timestamp, when the trusted root lists that TSA and no log; a root that
// lists a log still requires the entry, and without a verifiable time
// source the lock is refused, naming what is missing, whatever is waived.
func TestAKeylessLockIsTimedByItsSignedTimestampAsTheTrustedRootSays(t *testing.T) {
	g := githubCA(t)
	_, lockJSON, bundle := keylessLock(t, g, virtualsigstore.SourceOf(repository, strings.Repeat("a", 40), "v1.2.3"))

	_, res, err := verifier(t, timestampPolicy(t, g, virtualsigstore.Parts{NoLogs: true}, false)).Lock(lockJSON, bundle)
	if err != nil || res.TimeSource != trust.TimeSourceTimestamp {
		t.Fatalf("a root with the TSA and no log: time source %q, %v; want %q", res.TimeSource, err, trust.TimeSourceTimestamp)
	}
	_, res, err = verifier(t, timestampPolicy(t, g, virtualsigstore.Parts{}, true)).Lock(lockJSON, bundle)
	if err != nil || res.TimeSource != trust.TimeSourceTimestamp {
		t.Fatalf("the log waived: time source %q, %v; want %q", res.TimeSource, err, trust.TimeSourceTimestamp)
	}
	for name, c := range map[string]struct {
		parts      virtualsigstore.Parts
		ignoreTlog bool
		want       []string
	}{
		"a root that lists a log":           {virtualsigstore.Parts{}, false, []string{"no transparency log entry, which the policy requires", "the trusted root lists a log"}},
		"a root without the TSA or a log":   {virtualsigstore.Parts{NoTSA: true, NoLogs: true}, false, []string{"no verified time source", "lists no timestamp authority"}},
		"a root without the TSA, with logs": {virtualsigstore.Parts{NoTSA: true}, false, []string{"no transparency log entry", "no verified time source", "lists no timestamp authority"}},
		"no TSA, and the log waived":        {virtualsigstore.Parts{NoTSA: true, NoLogs: true}, true, []string{"no verified time source", "lists no timestamp authority"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := verifier(t, timestampPolicy(t, g, c.parts, c.ignoreTlog)).Lock(lockJSON, bundle)
			if !errors.Is(err, trust.ErrUntrusted) {
				t.Fatalf("Lock = %v, want ErrUntrusted", err)
			}
			t.Log(err)
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Lock = %v, want it to say %q", err, w)
				}
			}
		})
	}
}

// A key-signed lock has no certificate to time: its result names no time
// source.
func TestAKeySignedLockNamesNoTimeSource(t *testing.T) {
	k := newKeySigner(t)
	l := lockFor(k.signer.Identity())
	lockJSON, bundle := signedLock(t, k.signer, l)
	_, res, err := verifier(t, k.policy).Lock(lockJSON, bundle)
	if err != nil || res.TimeSource != "" {
		t.Fatalf("key-signed lock: time source %q, %v", res.TimeSource, err)
	}
}
