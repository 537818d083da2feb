package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/publish/sign"
	"github.com/reloader-dev/reloader/release"

	"github.com/reloader-dev/reloader/test/tools"
)

// A validly signed lock is not enough: policy and values verify every
// signature the lock lists, as verify does, and write nothing for a release
// whose image signature is forged or missing. The release is the pipeline's
// own; the lock is then rewritten and re-signed with the release key, as a
// compromised pipeline or a key thief would.
func TestPolicyAndValuesRefuseAReleaseWhoseImageSignatureIsForgedOrMissing(t *testing.T) {
	t.Parallel()
	ctx, cancel := tools.BuildContext(t)
	defer cancel()
	kr := publishKeyRelease(t, ctx, 23)
	rel, s, key := kr.rel, kr.signer, kr.key
	var index release.Artifact
	for _, a := range rel.Lock.Artifacts {
		if a.Kind == release.KindImageIndex && a.Name == "reloader" {
			index = a
		}
	}
	sigOf := func(l *release.Lock) int {
		for i, a := range l.Artifacts {
			if a.Kind == release.KindSignature && a.Subject == index.Digest {
				return i
			}
		}
		t.Fatalf("the lock lists no signature of %s", index.Digest)
		return -1
	}

	// An impostor adds their signature beside the release's, as `cosign
	// sign` does; the lock is made to list that manifest.
	ref, err := name.NewDigest(index.Repository + "@" + index.Digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := otherSigner(t).Manifest(ctx, sign.Registry{Remote: []remote.Option{remote.WithContext(ctx)}}, ref, nil); err != nil {
		t.Fatal(err)
	}
	forgedSig := rel.Lock.Artifacts[sigOf(rel.Lock)]
	desc, err := remote.Head(ref.Context().Tag(forgedSig.Tag), remote.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	forgedSig.Digest, forgedSig.Size = desc.Digest.String(), desc.Size

	for _, tc := range []struct {
		name string
		edit func(l *release.Lock)
	}{
		{"forged", func(l *release.Lock) { l.Artifacts[sigOf(l)] = forgedSig }},
		{"missing", func(l *release.Lock) {
			// Neither its signature nor its attestations: the lock
			// lists nothing that signs the image.
			l.Artifacts = slices.DeleteFunc(l.Artifacts, func(a release.Artifact) bool { return a.Subject == index.Digest })
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lock := resignedLock(t, ctx, s.SignLock, rel.Lock, tc.edit)
			target := startRegistry(t).Host + "/platform/reloader"
			for _, cmd := range []string{"policy", "values"} {
				code, out, errs := runCLI(t, cmd, "--lock", lock, "--key", key, "--allow-unscanned", "--target", target)
				if code != cli.ExitRefused {
					t.Errorf("%s of a release with a %s image signature: exit %d, want %d\nstdout: %s\nstderr: %s", cmd, tc.name, code, cli.ExitRefused, out, errs)
				}
				if !strings.Contains(errs, "image-index reloader "+index.Digest) {
					t.Errorf("%s does not name the image whose signature fails: %s", cmd, errs)
				}
				if strings.Contains(out, "kind:") || strings.Contains(out, "digest:") {
					t.Errorf("%s printed output for a refused release:\n%s", cmd, out)
				}
			}
		})
	}
}

// keyRelease is a key-signed release the pipeline published into a fresh
// registry, with its public key and its lock (and bundle) written to files.
type keyRelease struct {
	rel       *releasetest.Release
	signer    releasetest.Signer
	key, lock string
}

func publishKeyRelease(t *testing.T, ctx context.Context, seed uint64) keyRelease {
	t.Helper()
	src := startRegistry(t)
	s, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rel, err := releasetest.Publish(ctx, releasetest.Options{Registry: src.Host, Signer: s, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kr := keyRelease{rel: rel, signer: s, key: filepath.Join(dir, "cosign.pub"), lock: filepath.Join(dir, release.LockFileName)}
	for p, b := range map[string][]byte{kr.key: s.PublicKeyPEM(), kr.lock: rel.LockJSON, kr.lock + ".sigstore.json": rel.LockBundle} {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return kr
}

// resignedLock writes lock changed by edit and signed by sign (with the
// release key, as a compromised pipeline or a key thief would) and returns
// its path.
func resignedLock(t *testing.T, ctx context.Context, sign func(context.Context, []byte) ([]byte, error), orig *release.Lock, edit func(l *release.Lock)) string {
	t.Helper()
	l := *orig
	l.Artifacts = append([]release.Artifact(nil), orig.Artifacts...)
	edit(&l)
	data, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	bundle, err := sign(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), release.LockFileName)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".sigstore.json", bundle, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
