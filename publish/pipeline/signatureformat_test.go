package pipeline_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/testing/ca"

	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/publish/sign"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
	"github.com/reloader-dev/reloader/test/registry"
)

// A key release signed in both forms lists, for every subject, its signature
// as a Sigstore bundle referrer and as a cosign .sig tag, and its
// attestations as bundles (one per predicate) and as the .att tag: a mirror
// copies what the lock lists, so each form must be there to survive it.
func TestAKeyReleaseInBothFormsListsEachSignatureTwice(t *testing.T) {
	t.Parallel()
	reg := registry.InProcess(t)
	s, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rel, err := releasetest.Publish(context.Background(), releasetest.Options{Registry: reg.Host, Signer: s, Seed: 61, SignatureFormat: sign.FormatBoth})
	if err != nil {
		t.Fatal(err)
	}
	type forms struct{ tagSig, bundleSig, tagAtt, bundleAtts int }
	bySubject := map[string]*forms{}
	for _, a := range rel.Lock.Artifacts {
		switch a.Kind {
		case release.KindImageIndex, release.KindImage, release.KindSBOM, release.KindChart:
			bySubject[a.Digest] = &forms{}
		}
	}
	for _, a := range rel.Lock.Artifacts {
		f := bySubject[a.Subject]
		switch format := trust.Format(a); {
		case format == "":
		case f == nil:
			t.Errorf("%s %s signs %s, which is no subject of the release", format, a.Digest, a.Subject)
		case format == trust.FormatCosignSignature:
			f.tagSig++
		case format == trust.FormatCosignAttestation:
			f.tagAtt++
		case a.Kind == release.KindSignature:
			f.bundleSig++
		default:
			f.bundleAtts++
		}
	}
	for d, f := range bySubject {
		if f.tagSig != 1 || f.bundleSig != 1 || (f.bundleAtts > 0) != (f.tagAtt == 1) || f.tagAtt > 1 {
			t.Errorf("subject %s: %+v, want one signature in each form and attestations in both or neither", d, *f)
		}
	}
}

// Tags alone for a keyless release are refused when signing starts, not
// silently replaced by bundles.
func TestAKeylessReleaseAskedForTagsAloneIsRefused(t *testing.T) {
	t.Parallel()
	reg := registry.InProcess(t)
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	s, err := releasetest.NewKeylessSigner(vs, "https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1.2.3", "https://token.actions.githubusercontent.com")
	if err != nil {
		t.Fatal(err)
	}
	_, err = releasetest.Publish(context.Background(), releasetest.Options{Registry: reg.Host, Signer: s, Seed: 62, SignatureFormat: sign.FormatLegacy})
	if err == nil || !strings.Contains(err.Error(), "keyless") {
		t.Fatalf("a keyless release in the legacy format: %v, want a refusal naming keyless signing", err)
	}
}
