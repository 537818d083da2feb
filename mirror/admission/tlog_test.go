package admission_test

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reloader-dev/reloader/mirror/admission"
)

// The transparency-log requirement of every generated policy is the one
// reloader-mirror verify applied: the log entry is required when the
// trusted root lists a log, unless the user waived it
// (--insecure-ignore-tlog); a root that lists a timestamp authority and no
// log makes the authority's signed timestamp the time source with no
// waiver, each engine told so in its own terms; a root with neither is
// refused, waiver or not, as verify refuses its releases.
func TestTheLogRequirementFollowsTheUsersVerificationAndTheTrustedRoot(t *testing.T) {
	t.Parallel()
	keyless := func(root []byte, ignoreTlog bool) admission.Options {
		return admission.Options{Repositories: []string{repo}, Digests: []string{testDigest},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"reloader.dev/enforce": "true"}},
			Trust: admission.Trust{Identity: "https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1.2.3",
				Issuer: "https://token.actions.githubusercontent.com", TrustedRootJSON: root, IgnoreTlog: ignoreTlog}}
	}
	withLog := trustedRootJSON(t)
	var m map[string]any
	if err := json.Unmarshal(withLog, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "tlogs")
	withoutLog, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	formats := []admission.Format{admission.PolicyController, admission.Kyverno, admission.KyvernoClusterPolicy}

	t.Run("a root with a log, the log required: both engines check it", func(t *testing.T) {
		out, err := admission.Generate(keyless(withLog, false), formats)
		if err != nil {
			t.Fatal(err)
		}
		// Kyverno's SigstoreBundle verifier requires a log entry unless
		// rekor.ignoreTlog is set, checked against its TUF trusted root.
		if k := string(out[admission.KyvernoClusterPolicy]); strings.Contains(k, "ignoreTlog") || !strings.Contains(k, "type: SigstoreBundle") {
			t.Errorf("Kyverno ClusterPolicy does not require the log:\n%s", k)
		}
		if k := string(out[admission.Kyverno]); strings.Contains(k, "insecureIgnoreTlog") {
			t.Errorf("Kyverno ImageValidatingPolicy does not require the log:\n%s", k)
		}
		// policy-controller skips the log check for an authority that names
		// a timestamp authority (checkOptsFromAuthority), so none may.
		if pc := string(out[admission.PolicyController]); !strings.Contains(pc, "ctlog:\n") || strings.Contains(pc, "rfc3161timestamp:") {
			t.Errorf("policy-controller policy does not require the log, or names a TSA that turns it off:\n%s", pc)
		}
	})
	t.Run("the user waived the log: both engines waive it, even though the root has one", func(t *testing.T) {
		out, err := admission.Generate(keyless(withLog, true), formats)
		if err != nil {
			t.Fatal(err)
		}
		if k := string(out[admission.KyvernoClusterPolicy]); !strings.Contains(k, "ignoreTlog: true") {
			t.Errorf("Kyverno ClusterPolicy still requires the log the user waived:\n%s", k)
		}
		if k := string(out[admission.Kyverno]); !strings.Contains(k, "insecureIgnoreTlog: true") {
			t.Errorf("Kyverno ImageValidatingPolicy still requires the log the user waived:\n%s", k)
		}
		if pc := string(out[admission.PolicyController]); strings.Contains(pc, "ctlog:") || !strings.Contains(pc, "rfc3161timestamp:") {
			t.Errorf("policy-controller policy still requires the log the user waived, or has no TSA for the signing time:\n%s", pc)
		}
	})
	t.Run("a timestamp-only root: the TSA is the time source, no waiver needed", func(t *testing.T) {
		// Each engine then requires the TSA's signed timestamp and no log
		// entry (checkOptsFromAuthority; Kyverno's SigstoreBundle
		// verifier): TestPolicyControllerEvaluatesTheGeneratedPolicies and
		// TestKyvernoEnforcesTheTimestampOnlyKeylessPolicy show it on a
		// release with no log entry.
		engines := []admission.Format{admission.PolicyController, admission.KyvernoClusterPolicy}
		out, err := admission.Generate(keyless(withoutLog, false), engines)
		if err != nil {
			t.Fatal(err)
		}
		if pc := string(out[admission.PolicyController]); strings.Contains(pc, "ctlog:") || !strings.Contains(pc, "rfc3161timestamp:") || !strings.Contains(pc, "timestampAuthorities:") {
			t.Errorf("policy-controller policy does not take the TSA as the time source, or requires a log:\n%s", pc)
		}
		if k := string(out[admission.KyvernoClusterPolicy]); !strings.Contains(k, "ignoreTlog: true") {
			t.Errorf("Kyverno ClusterPolicy requires a log the root does not list:\n%s", k)
		}
		waived, err := admission.Generate(keyless(withoutLog, true), engines)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range engines {
			if string(waived[f]) != string(out[f]) {
				t.Errorf("%s: the waiver changes the policy of a timestamp-only root", f)
			}
		}
	})
	t.Run("a root without a log: the ImageValidatingPolicy alone is refused, naming Kyverno's need", func(t *testing.T) {
		for _, waived := range []bool{false, true} {
			_, err := admission.Generate(keyless(withoutLog, waived), []admission.Format{admission.Kyverno})
			if err == nil || !strings.Contains(err.Error(), "Kyverno v1.19.1") || !strings.Contains(err.Error(), "no Rekor public keys found in trusted root") {
				t.Errorf("log waived: %v: got %v, want a refusal naming Kyverno and what it lacks", waived, err)
			}
		}
	})
	delete(m, "timestampAuthorities")
	neither, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, waived := range []bool{false, true} {
		_, err := admission.Generate(keyless(neither, waived), []admission.Format{admission.PolicyController, admission.KyvernoClusterPolicy})
		if err == nil || !strings.Contains(err.Error(), "neither a transparency log nor a timestamp authority") {
			t.Errorf("a root with no log and no TSA (log waived: %v): got %v, want a refusal naming both", waived, err)
		}
	}
}
