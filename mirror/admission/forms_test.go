package admission_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/mirror/admission"
	"github.com/reloader-dev/reloader/release"
)

// lockSignedAs is a release whose one image index is signed in the given
// forms: "tag" a cosign .sig, "bundle" a Sigstore bundle referrer.
func lockSignedAs(version string, forms ...string) *release.Lock {
	idx := release.Artifact{Kind: release.KindImageIndex, Name: "reloader", Repository: "ghcr.io/reloader-dev/reloader", Digest: testDigest}
	l := &release.Lock{Version: version, Artifacts: []release.Artifact{idx}}
	for _, f := range forms {
		sig := release.Artifact{Kind: release.KindSignature, Name: "reloader", Repository: idx.Repository, Subject: idx.Digest}
		switch f {
		case "tag":
			sig.Tag = "sha256-0123.sig"
		case "bundle":
			sig.ArtifactType = release.BundleMediaType
		}
		l.Artifacts = append(l.Artifacts, sig)
	}
	return l
}

// A key-signed policy reads the signature form every approved release
// carries: Kyverno's ClusterPolicy the cosign tags (Cosign) unless some
// approved release has only bundles (SigstoreBundle), and it is refused when
// some have only tags and others only bundles; policy-controller, which
// verifies bundles only for keyless authorities, is refused for a
// bundle-only key release (naming the issue) while the other formats are
// written. The ImageValidatingPolicy finds either form on each image.
func TestKeySignedPoliciesReadTheSignatureFormTheApprovedReleasesCarry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		releases [][]string
		cpol, pc string // the ClusterPolicy's verifier type or refusal; policy-controller's refusal
	}{
		{"tags and bundles", [][]string{{"tag", "bundle"}}, "type: Cosign", ""},
		{"tags only", [][]string{{"tag"}}, "type: Cosign", ""},
		{"bundles only", [][]string{{"bundle"}}, "type: SigstoreBundle", "sigstore/policy-controller#1958"},
		{"one with both, one with bundles only", [][]string{{"tag", "bundle"}, {"bundle"}}, "type: SigstoreBundle", "only for keyless authorities"},
		{"one with tags only, one with bundles only", [][]string{{"tag"}, {"bundle"}}, "reads one of them", "only for keyless authorities"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := keyOptions(t)
			o.Digests = nil
			for i, forms := range tc.releases {
				o.Approve(lockSignedAs(fmt.Sprintf("v1.2.%d", i), forms...))
			}
			out, err := admission.Generate(o, []admission.Format{admission.KyvernoClusterPolicy})
			switch got := string(out[admission.KyvernoClusterPolicy]); {
			case strings.HasPrefix(tc.cpol, "type: ") && (err != nil || !strings.Contains(got, tc.cpol)):
				t.Errorf("ClusterPolicy: %v, want %q:\n%s", err, tc.cpol, got)
			case !strings.HasPrefix(tc.cpol, "type: ") && (err == nil || !strings.Contains(err.Error(), tc.cpol)):
				t.Errorf("ClusterPolicy: %v, want a refusal saying %q", err, tc.cpol)
			}
			_, err = admission.Generate(o, []admission.Format{admission.PolicyController})
			if (tc.pc == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.pc)) {
				t.Errorf("policy-controller: %v, want refusal %q", err, tc.pc)
			}
			if _, err := admission.Generate(o, []admission.Format{admission.Kyverno, admission.VAP}); err != nil {
				t.Errorf("ImageValidatingPolicy and VAP: %v", err)
			}
		})
	}
}
