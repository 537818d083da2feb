package main

import (
	"crypto"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/cosign/v2/pkg/cosign"
	"github.com/sigstore/cosign/v2/pkg/oci/empty"
	cosignmutate "github.com/sigstore/cosign/v2/pkg/oci/mutate"
	ociremote "github.com/sigstore/cosign/v2/pkg/oci/remote"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/publish/sign"
	"github.com/reloader-dev/reloader/release"

	"github.com/reloader-dev/reloader/test/tools"
)

// A re-import keeps what an organisation added at the target and says what
// it changed. An organisation countersigns the mirrored images with its own
// key (cosign's library, as `cosign sign` does: it appends to the .sig tag,
// or, for the second image, leaves only its own signature there), and a
// plain tag is re-pointed. After the release is copied again, both
// signatures verify with cosign on both images, the re-pointed tag is back
// and reported old -> new in the output and the receipt, and a third copy
// changes no tag.
func TestCountersignaturesSurviveAReimportAndRepointedTagsAreReported(t *testing.T) {
	t.Parallel()
	ctx, cancel := tools.BuildContext(t)
	defer cancel()
	kr := publishKeyRelease(t, ctx, 6)
	rel, s, key, lock, dir := kr.rel, kr.signer, kr.key, kr.lock, t.TempDir()
	target := startRegistry(t).Host + "/platform/reloader"
	m, err := mirror.NewMapping(target, rel.Lock, nil)
	if err != nil {
		t.Fatal(err)
	}
	copyArgs := []string{"copy", "--lock", lock, "--key", key, "--allow-unscanned", "--allow-no-provenance", "--target", target}
	if code, _, errs := runCLI(t, copyArgs...); code != cli.ExitOK {
		t.Fatalf("first copy: exit %d: %s", code, errs)
	}

	at := func(imageName string) (release.Artifact, name.Digest) {
		for _, a := range rel.Lock.Artifacts {
			if a.Kind == release.KindImageIndex && a.Name == imageName {
				ref, err := name.NewDigest(m.Repository(a.Repository) + "@" + a.Digest)
				if err != nil {
					t.Fatal(err)
				}
				return a, ref
			}
		}
		t.Fatalf("the release has no image %s", imageName)
		return release.Artifact{}, name.Digest{}
	}
	ropts := []remote.Option{remote.WithContext(ctx)}
	sigTag := func(ref name.Digest) name.Tag {
		return ref.Context().Tag(strings.Replace(ref.DigestStr(), ":", "-", 1) + ".sig")
	}
	digestOf := func(ref name.Reference) string {
		d, err := remote.Head(ref, ropts...)
		if err != nil {
			t.Fatal(err)
		}
		return d.Digest.String()
	}
	org := otherSigner(t)
	reg := sign.Registry{Remote: ropts}

	// Appended: the .sig tag holds the release's signature, then the
	// organisation's.
	std, stdRef := at("reloader")
	if err := org.Manifest(ctx, reg, stdRef, nil); err != nil {
		t.Fatal(err)
	}
	appended := digestOf(sigTag(stdRef))

	// Replaced: only the organisation's signature is left at the tag.
	_, ubiRef := at("reloader-ubi")
	if err := org.Manifest(ctx, reg, ubiRef, nil); err != nil {
		t.Fatal(err)
	}
	se, err := ociremote.SignedEntity(ubiRef, ociremote.WithRemoteOptions(ropts...))
	if err != nil {
		t.Fatal(err)
	}
	sigs, err := se.Signatures()
	if err != nil {
		t.Fatal(err)
	}
	all, err := sigs.Get()
	if err != nil || len(all) != 2 {
		t.Fatalf("the countersigned image has %d signatures (%v), want 2", len(all), err)
	}
	onlyOrg, err := cosignmutate.AppendSignatures(empty.Signatures(), false, all[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(sigTag(ubiRef), onlyOrg, ropts...); err != nil {
		t.Fatal(err)
	}
	replaced := digestOf(sigTag(ubiRef))
	orgLayer, err := all[1].Digest()
	if err != nil {
		t.Fatal(err)
	}

	// Re-pointed: the release tag of the standard image names one of its
	// platform manifests instead of the index.
	idx, err := remote.Index(stdRef, ropts...)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	platform := im.Manifests[0].Digest.String()
	img, err := remote.Image(stdRef.Context().Digest(platform), ropts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Tag(stdRef.Context().Tag(std.Tag), img, ropts...); err != nil {
		t.Fatal(err)
	}

	receipt := filepath.Join(dir, "receipt.json")
	code, out, errs := runCLI(t, append(copyArgs, "--receipt", receipt)...)
	if code != cli.ExitOK {
		t.Fatalf("re-import: exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(receipt)
	if err != nil {
		t.Fatal(err)
	}
	var rc mirror.Receipt
	if err := json.Unmarshal(b, &rc); err != nil {
		t.Fatal(err)
	}
	change := func(repo, tag string) mirror.TagChange {
		for _, c := range rc.Tags {
			if c.Repository == repo && c.Tag == tag {
				return c
			}
		}
		t.Fatalf("the receipt records no tag %s:%s: %s", repo, tag, b)
		return mirror.TagChange{}
	}

	moved := change(stdRef.Context().String(), std.Tag)
	if moved.Action != mirror.TagMoved || moved.Old != platform || moved.New != std.Digest {
		t.Errorf("re-pointed tag recorded as %+v, want moved %s -> %s", moved, platform, std.Digest)
	}
	if want := "moved: " + platform + " -> " + std.Digest; !strings.Contains(out, want) {
		t.Errorf("the output does not report %q:\n%s", want, out)
	}
	if got := digestOf(stdRef.Context().Tag(std.Tag)); got != std.Digest {
		t.Errorf("tag %s points at %s after the re-import, want %s", std.Tag, got, std.Digest)
	}

	kept := change(stdRef.Context().String(), sigTag(stdRef).TagStr())
	if kept.Action != mirror.TagUnchanged || kept.Old != appended || len(kept.Kept) != 1 {
		t.Errorf("the appended countersignature recorded as %+v, want unchanged at %s with 1 kept", kept, appended)
	}
	merged := change(ubiRef.Context().String(), sigTag(ubiRef).TagStr())
	if merged.Action != mirror.TagMerged || merged.Old != replaced || len(merged.Kept) != 1 || merged.Kept[0] != orgLayer.String() {
		t.Errorf("the lone countersignature recorded as %+v, want merged from %s keeping %s", merged, replaced, orgLayer)
	}
	if !strings.Contains(out, "merged, keeping 1 signature(s)") {
		t.Errorf("the output does not report the merge:\n%s", out)
	}

	// Both keys verify both images, as `cosign verify` does, and the
	// merged signature manifest is a valid image (config follows layers).
	for who, pk := range map[string]func() (crypto.PublicKey, error){"release": s.PublicKey, "organisation": org.PublicKey} {
		k, err := pk()
		if err != nil {
			t.Fatal(err)
		}
		sv, err := signature.LoadVerifier(k, crypto.SHA256)
		if err != nil {
			t.Fatal(err)
		}
		for _, ref := range []name.Digest{stdRef, ubiRef} {
			if _, _, err := cosign.VerifyImageSignatures(ctx, ref, &cosign.CheckOpts{SigVerifier: sv, IgnoreTlog: true, Offline: true,
				ClaimVerifier: cosign.SimpleClaimVerifier, RegistryClientOpts: []ociremote.Option{ociremote.WithRemoteOptions(ropts...)}}); err != nil {
				t.Errorf("%s's signature of %s does not verify after the re-import: %v", who, ref, err)
			}
		}
	}
	// The merged manifest's config lists one diff ID per layer, in order,
	// as cosign writes its own (the appended one shows it).
	for _, tag := range []name.Tag{sigTag(ubiRef), sigTag(stdRef)} {
		img, err := remote.Image(tag, ropts...)
		if err != nil {
			t.Fatal(err)
		}
		mf, err := img.Manifest()
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if len(cf.RootFS.DiffIDs) != len(mf.Layers) || len(mf.Layers) != 2 {
			t.Errorf("%s: %d layers, config has %d diff IDs; want 2 and 2", tag, len(mf.Layers), len(cf.RootFS.DiffIDs))
			continue
		}
		for i, l := range mf.Layers {
			if cf.RootFS.DiffIDs[i] != l.Digest {
				t.Errorf("%s: diff ID %d is %s, layer is %s", tag, i, cf.RootFS.DiffIDs[i], l.Digest)
			}
		}
	}

	code, out, errs = runCLI(t, append(copyArgs, "-o", "json")...)
	if code != cli.ExitOK {
		t.Fatalf("third copy: exit %d: %s", code, errs)
	}
	var again mirror.Receipt
	if err := json.Unmarshal([]byte(out), &again); err != nil {
		t.Fatal(err)
	}
	for _, c := range again.Tags {
		if c.Action != mirror.TagUnchanged {
			t.Errorf("a third copy changed tag %s:%s: %+v", c.Repository, c.Tag, c)
		}
	}
	if again.Stats.TagsWritten != 0 || len(again.Tags) == 0 {
		t.Errorf("a third copy wrote %d tags and recorded %d", again.Stats.TagsWritten, len(again.Tags))
	}
}
