package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/sign"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
	"github.com/reloader-dev/reloader/test/tools"
)

// A release whose every signature, and an SBOM attestation on each index,
// the real cosign v3 CLI made (key-signed, Sigstore bundles as OCI
// referrers, no transparency log: offline), listed in a lock signed with
// the same key, passes reloader-mirror verify, copy and import into a
// registry with the referrers API and into one without, and cosign v3
// verifies the copies. Only the pipeline's own attestations (SBOMs,
// provenance) stay beside cosign's.
func TestAReleaseSignedByTheCosignV3CLIInReferrersModeMirrors(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("publishes a release and runs the cosign CLI")
	}
	ctx, cancel := tools.BuildContext(t)
	defer cancel()
	src := startRegistry(t)
	kr := publishFormatRelease(t, ctx, src.Host, 43, sign.FormatBundle)
	cosign := cosignV3(t, ctx)
	offline := []string{"--key", kr.key, "--tlog-upload=false", "--use-signing-config=false", "--yes"}
	predicate := filepath.Join(t.TempDir(), "sbom.spdx.json")
	if err := os.WriteFile(predicate, []byte(`{"spdxVersion":"SPDX-2.3","SPDXID":"SPDXRef-DOCUMENT","name":"signed by cosign v3"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var subjects []release.Artifact
	for _, a := range kr.rel.Lock.Artifacts {
		if a.Kind != release.KindImage && a.Kind != release.KindImageIndex && a.Kind != release.KindChart {
			continue
		}
		subjects = append(subjects, a)
		ref := a.Repository + "@" + a.Digest
		if err := cosign(append(append([]string{"sign"}, offline...), ref)...); err != nil {
			t.Fatal(err)
		}
		if a.Kind == release.KindImageIndex {
			args := append(append([]string{"attest", "--type", "spdxjson", "--predicate", predicate}, offline...), ref)
			if err := cosign(args...); err != nil {
				t.Fatal(err)
			}
		}
	}
	signer, err := sign.FromKey(sign.KeyOptions{PrivateKeyPath: kr.key})
	if err != nil {
		t.Fatal(err)
	}
	lockPath := resignedLock(t, ctx, signer.Blob, kr.rel.Lock, func(l *release.Lock) {
		listCosignReferrers(t, ctx, l, subjects)
	})
	l, err := release.Parse(mustRead(t, lockPath))
	if err != nil {
		t.Fatal(err)
	}
	onlyBundles(t, formatsFound(t, "--lock", lockPath, "--key", kr.pub))
	mirrorsIntoBothKindsOfTarget(t, ctx, l, kr.pub, "--lock", lockPath)

	// A bundle cosign made with another key, listed in a lock the release
	// key signed, is refused: every listed signature must hold.
	otherKey, _, err := sign.GenerateKey(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	index := subjects[slices.IndexFunc(subjects, func(a release.Artifact) bool { return a.Kind == release.KindImageIndex })]
	if err := cosign(append(append([]string{"sign"}, offline[2:]...), "--key", otherKey, index.Repository+"@"+index.Digest)...); err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, a := range l.Artifacts {
		listed[a.Digest] = true
	}
	forged := resignedLock(t, ctx, signer.Blob, l, func(fl *release.Lock) {
		fl.Artifacts = append(fl.Artifacts, unlistedBundles(t, ctx, listed, index)...)
	})
	if code, _, errs := runCLI(t, "verify", "--lock", forged, "--key", kr.pub, "--allow-unscanned"); code != cli.ExitRefused || !strings.Contains(errs, index.Digest) {
		t.Fatalf("verify of a lock listing another key's cosign bundle: exit %d, want %d naming %s: %s", code, cli.ExitRefused, index.Digest, errs)
	}
}

// listCosignReferrers replaces the lock's signatures with the bundles
// cosign attached to each subject, and adds cosign's attestations.
func listCosignReferrers(t *testing.T, ctx context.Context, l *release.Lock, subjects []release.Artifact) {
	t.Helper()
	listed := map[string]bool{}
	kept := l.Artifacts[:0]
	for _, a := range l.Artifacts {
		listed[a.Digest] = true
		if a.Kind != release.KindSignature {
			kept = append(kept, a)
		}
	}
	l.Artifacts = kept
	added := map[release.Kind]int{}
	for _, s := range subjects {
		for _, a := range unlistedBundles(t, ctx, listed, s) {
			l.Artifacts = append(l.Artifacts, a)
			added[a.Kind]++
		}
	}
	if added[release.KindSignature] != len(subjects) || added[release.KindAttestation] == 0 {
		t.Fatalf("cosign attached %v bundles to %d subjects, want a signature on each and attestations", added, len(subjects))
	}
}

// unlistedBundles are the lock entries of the Sigstore bundle referrers of
// s not listed yet: cosign sign's as signatures, the others attestations.
func unlistedBundles(t *testing.T, ctx context.Context, listed map[string]bool, s release.Artifact) []release.Artifact {
	t.Helper()
	ref, err := name.NewDigest(s.Repository + "@" + s.Digest)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Referrers(ref, remote.WithContext(ctx))
	if err != nil {
		t.Fatalf("listing the referrers of %s: %v", ref, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var out []release.Artifact
	for _, d := range im.Manifests {
		// A registry may list a referrer by its config's media type (the
		// in-process one does): its own artifactType says what it is.
		if _, bundle := d.Annotations["dev.sigstore.bundle.predicateType"]; !bundle || listed[d.Digest.String()] {
			continue
		}
		d.ArtifactType = artifactTypeOf(t, ctx, ref.Context().Digest(d.Digest.String()))
		a := release.Artifact{Kind: release.KindSignature, Name: s.Name, Variant: s.Variant, Platform: s.Platform, Repository: s.Repository,
			Digest: d.Digest.String(), Size: d.Size, MediaType: string(d.MediaType), ArtifactType: d.ArtifactType, Subject: s.Digest, Annotations: d.Annotations}
		if pt := d.Annotations["dev.sigstore.bundle.predicateType"]; pt != release.PredicateCosignSign {
			a.Kind, a.PredicateType = release.KindAttestation, pt
		}
		if trust.Format(a) != trust.FormatBundle {
			t.Fatalf("cosign's referrer %s of %s is not a bundle to the lock", d.Digest, ref)
		}
		out = append(out, a)
	}
	return out
}

func artifactTypeOf(t *testing.T, ctx context.Context, ref name.Digest) string {
	t.Helper()
	desc, err := remote.Get(ref, remote.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		ArtifactType string `json:"artifactType"`
	}
	if err := json.Unmarshal(desc.Manifest, &m); err != nil {
		t.Fatalf("decoding %s: %v", ref, err)
	}
	return m.ArtifactType
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
