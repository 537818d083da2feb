package admission_test

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reloader-dev/reloader/mirror/admission"
)

// The transparency-log requirement of every generated policy is the user's
// (--insecure-ignore-tlog), never inferred from what the trusted root holds:
// a root without a log used to turn the log check off silently in Kyverno.
func TestTheLogRequirementFollowsTheUsersVerificationNotTheRoot(t *testing.T) {
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
	t.Run("a root without a log and no waiver is refused, naming the flag", func(t *testing.T) {
		_, err := admission.Generate(keyless(withoutLog, false), formats)
		if err == nil || !strings.Contains(err.Error(), "--insecure-ignore-tlog") || !strings.Contains(err.Error(), "no transparency log") {
			t.Fatalf("got %v, want a refusal naming the missing log and --insecure-ignore-tlog", err)
		}
	})
	t.Run("a root without a log, waived", func(t *testing.T) {
		if _, err := admission.Generate(keyless(withoutLog, true), formats); err != nil {
			t.Fatal(err)
		}
	})
}
