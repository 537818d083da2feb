package main

import (
	"context"
	"crypto"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/in-toto/in-toto-golang/in_toto"
	slsa1 "github.com/in-toto/in-toto-golang/in_toto/slsa_provenance/v1"
	"github.com/sigstore/cosign/v2/pkg/cosign"
	ociremote "github.com/sigstore/cosign/v2/pkg/oci/remote"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/local"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/publish/sign"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/provenance"
	"github.com/reloader-dev/reloader/release/trust"
)

// provenanceRelease is a release of the real controller by the real
// pipeline (linux/amd64 only, unscanned, no charts: what is under test is
// the provenance), with its key and the registry it lives in.
type provenanceRelease struct {
	res    *local.Result
	out    string
	signer *sign.Signer
	lock   *release.Lock
	pub    string
}

func releaseWithProvenance(t *testing.T, ctx context.Context, host string) provenanceRelease {
	t.Helper()
	out := t.TempDir()
	res, err := local.Run(ctx, local.Options{ModuleDir: "../..", MainPackage: "./cmd/reloader", OutDir: out, Registry: host,
		Version: "v1.2.3", Commit: strings.Repeat("cd", 20), Created: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		NoScan: true, Platforms: []v1.Platform{{OS: "linux", Architecture: "amd64"}}, SupportFile: releasetest.SupportTableFile(t, "v1.2.3")})
	if err != nil {
		t.Fatalf("local release: %v", err)
	}
	s, err := sign.FromKey(sign.KeyOptions{PrivateKeyPath: filepath.Join(out, "keys", "cosign.key")})
	if err != nil {
		t.Fatal(err)
	}
	return provenanceRelease{res: res, out: out, signer: s, lock: res.Lock, pub: res.PublicKey}
}

// forge writes a copy of the lock changed by edit and signed with the
// release key, as a compromised pipeline (or a key thief) would, and
// returns its path: the signatures the lock lists must still hold.
func (p provenanceRelease) forge(t *testing.T, ctx context.Context, edit func(l *release.Lock)) string {
	t.Helper()
	return resignedLock(t, ctx, p.signer.Blob, p.lock, edit)
}

// attestationsOf is the lock's cosign attestation entry (.att) for subject:
// a key-signed release carries its provenance there, beside its SBOMs, and
// writes no Sigstore bundle (see clientsVerify).
func attestationsOf(t *testing.T, l *release.Lock, subject string) release.Artifact {
	t.Helper()
	for _, a := range l.Artifacts {
		if a.Kind == release.KindAttestation && a.Subject == subject {
			if trust.Format(a) != trust.FormatCosignAttestation {
				t.Fatalf("%s %s: a key-signed release lists a %s attestation", a.Kind, a.Digest, trust.Format(a))
			}
			return a
		}
	}
	t.Fatalf("the lock lists no attestations for %s", subject)
	return release.Artifact{}
}

// attach signs predicate as provenance about the image about (in img's
// repository) with signer and returns the lock entry listing it for img.
func attach(t *testing.T, ctx context.Context, signer *sign.Signer, img, about release.Artifact, predicate []byte) release.Artifact {
	t.Helper()
	ref, err := name.NewDigest(img.Repository + "@" + img.Digest)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := v1.NewHash(about.Digest)
	desc, ann, err := signer.BundleReferrer(ctx, sign.Registry{Remote: []remote.Option{remote.WithContext(ctx)}}, ref,
		v1.Descriptor{MediaType: "application/vnd.oci.image.manifest.v1+json", Digest: h, Size: about.Size}, provenance.PredicateType, predicate)
	if err != nil {
		t.Fatal(err)
	}
	return release.Artifact{Kind: release.KindAttestation, Name: img.Name, Variant: img.Variant, Platform: img.Platform,
		Repository: img.Repository, Digest: desc.Digest.String(), Size: desc.Size, MediaType: string(desc.MediaType),
		ArtifactType: release.BundleMediaType, PredicateType: provenance.PredicateType, Subject: img.Digest, Annotations: ann}
}

func TestProvenanceOfARealReleaseIsSignedCheckedAndRequired(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and signs a release of the controller")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	src := startRegistry(t)
	rel := releaseWithProvenance(t, ctx, src.Host)
	img := rel.lock.Find(release.KindImage, "reloader")[0]

	t.Run("every image and index has provenance naming the builder, commit, toolchain and build", func(t *testing.T) {
		for _, k := range []release.Kind{release.KindImage, release.KindImageIndex} {
			for _, a := range rel.lock.Find(k, "") {
				attestationsOf(t, rel.lock, a.Digest)
			}
		}
		pred, err := os.ReadFile(filepath.Join(rel.out, "provenance", "reloader-ubi-linux-amd64.slsa.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`"id":"reloader-release local"`, `"gitCommit":"` + strings.Repeat("cd", 20), `"goVersion":"go1.`,
			`"sourceDateEpoch":"1796040000"`, `-X github.com/reloader-dev/reloader/controller/buildinfo.Version=v1.2.3`,
			`"name":"k8s.io/client-go"`, `"goModuleH1":`, `"name":"base-image"`, `"GOARCH":"amd64"`} {
			if !strings.Contains(string(pred), want) {
				t.Errorf("the UBI image's provenance lacks %s", want)
			}
		}
		page, err := os.ReadFile(filepath.Join(rel.out, "page", "versions.md"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"built by reloader-release local from commit " + rel.lock.Commit + " with go1.",
			"cosign verify-attestation --type slsaprovenance1 --key cosign.pub --insecure-ignore-tlog=true " + img.Repository + "@" + img.Digest} {
			if !strings.Contains(string(page), want) {
				t.Errorf("the versions page lacks %q", want)
			}
		}
	})

	t.Run("cosign decodes exactly one SLSA v1 provenance, naming the builder and the dependencies", func(t *testing.T) {
		// What the cosign CLI runs for verify-attestation --key --type
		// slsaprovenance1: verify the .att attestations, then keep those of
		// the predicate type, decoded as cosign's policy package decodes
		// them (in-toto-golang's SLSA v1 statement).
		pemKey, _ := os.ReadFile(rel.pub)
		pk, err := trust.ParsePublicKey(pemKey)
		if err != nil {
			t.Fatal(err)
		}
		sv, err := signature.LoadVerifier(pk, crypto.SHA256)
		if err != nil {
			t.Fatal(err)
		}
		ref, _ := name.NewDigest(img.Repository + "@" + img.Digest)
		atts, _, err := cosign.VerifyImageAttestations(ctx, ref, &cosign.CheckOpts{SigVerifier: sv, IgnoreTlog: true, Offline: true,
			ClaimVerifier: cosign.IntotoSubjectClaimVerifier, RegistryClientOpts: []ociremote.Option{ociremote.WithRemoteOptions(remote.WithContext(ctx))}})
		if err != nil {
			t.Fatal(err)
		}
		matched := 0
		for _, a := range atts {
			pl, err := a.Payload()
			if err != nil {
				t.Fatal(err)
			}
			var env struct{ Payload []byte }
			if err := json.Unmarshal(pl, &env); err != nil {
				t.Fatal(err)
			}
			//lint:ignore SA1019 the type cosign's verify-attestation decodes slsaprovenance1 into: the check must be the CLI's
			var st in_toto.ProvenanceStatementSLSA1
			if err := json.Unmarshal(env.Payload, &st); err != nil {
				t.Fatal(err)
			}
			if st.PredicateType == slsa1.PredicateSLSAProvenance {
				if st.Predicate.RunDetails.Builder.ID != provenance.LocalBuilder || len(st.Predicate.BuildDefinition.ResolvedDependencies) < 10 {
					t.Errorf("cosign reads the provenance as %+v", st.Predicate.RunDetails)
				}
				matched++
			}
		}
		if matched != 1 {
			t.Fatalf("%d slsaprovenance1 attestations on %s, want 1", matched, img.Digest)
		}
	})

	t.Run("the cosign CLI runs the versions page's commands, at the source and on a mirrored copy, offline", func(t *testing.T) {
		page, err := os.ReadFile(filepath.Join(rel.out, "page", "versions.md"))
		if err != nil {
			t.Fatal(err)
		}
		clientsVerify(t, ctx, rel.lock, page, map[string]string{"cosign.pub": rel.pub}, nil, "--lock", rel.res.LockPath, "--key", rel.pub)
	})

	t.Run("reloader-mirror verify checks it and reports it", func(t *testing.T) {
		code, out, errs := runCLI(t, "verify", "--lock", rel.res.LockPath, "--key", rel.pub, "--allow-unscanned", "-o", "json")
		if code != cli.ExitOK {
			t.Fatalf("verify: exit %d: %s", code, errs)
		}
		var res trust.Result
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, s := range res.Subjects {
			if s.Kind == release.KindImage || s.Kind == release.KindImageIndex {
				if s.Provenance == nil || s.Provenance.Commit != rel.lock.Commit || s.Provenance.Builder != provenance.LocalBuilder {
					t.Errorf("%s %s: provenance %+v", s.Kind, s.Name, s.Provenance)
				}
				n++
			}
		}
		if n != 8 {
			t.Errorf("%d images and indexes verified, want 8 (four variants)", n)
		}
	})

	t.Run("a -fips image's provenance records the Go Cryptographic Module it was built against", func(t *testing.T) {
		for file, fips := range map[string]bool{"reloader-fips-linux-amd64": true, "reloader-ubi-fips-linux-amd64": true, "reloader-linux-amd64": false} {
			b, err := os.ReadFile(filepath.Join(rel.out, "provenance", file+".slsa.json"))
			if err != nil {
				t.Fatal(err)
			}
			var pred struct {
				BuildDefinition struct {
					InternalParameters struct{ Env map[string]string }
				}
			}
			if err := json.Unmarshal(b, &pred); err != nil {
				t.Fatal(err)
			}
			if got := pred.BuildDefinition.InternalParameters.Env["GOFIPS140"]; strings.HasPrefix(got, "v1.0.0-") != fips {
				t.Errorf("%s: GOFIPS140 %q in the build environment, want v1.0.0-… only for a -fips image", file, got)
			}
		}
	})

	pred, err := os.ReadFile(filepath.Join(rel.out, "provenance", "reloader-linux-amd64.slsa.json"))
	if err != nil {
		t.Fatal(err)
	}
	// A forged provenance is listed beside the real one: every statement
	// about a subject must hold, not just one of them.
	add := func(with release.Artifact) func(*release.Lock) {
		return func(l *release.Lock) { l.Artifacts = append(l.Artifacts, with) }
	}
	ubi := rel.lock.Find(release.KindImage, "reloader-ubi")[0]
	refusals := map[string]struct {
		edit func(*release.Lock)
		says string
	}{
		"provenance of another commit": {
			add(attach(t, ctx, rel.signer, img, img, []byte(strings.ReplaceAll(string(pred), rel.lock.Commit, strings.Repeat("ef", 20))))),
			"built from https://github.com/reloader-dev/reloader at " + strings.Repeat("ef", 20)},
		// Signed with the release key but written by another builder: the
		// key was used outside the release job that alone writes provenance.
		"provenance by another builder": {
			add(attach(t, ctx, rel.signer, img, img, []byte(strings.ReplaceAll(string(pred), `"id":"reloader-release local"`, `"id":"`+forkBuilder+`"`)))),
			`written by builder "` + forkBuilder + `", but the policy expects "reloader-release local"`},
		"provenance whose subject is another image": {add(attach(t, ctx, rel.signer, img, ubi, pred)), "untrusted"},
		"provenance signed by another key":          {add(attach(t, ctx, otherSigner(t), img, img, pred)), "sigstore bundle"},
		"no provenance at all": {
			func(l *release.Lock) {
				var keep []release.Artifact
				for _, a := range l.Artifacts {
					if (a.Kind == release.KindAttestation) && a.Subject == img.Digest {
						continue
					}
					keep = append(keep, a)
				}
				l.Artifacts = keep
			}, "none signed by the release signer"},
	}
	for name, c := range refusals {
		t.Run("refused with exit 3 and nothing pushed: "+name, func(t *testing.T) {
			lock := rel.forge(t, ctx, c.edit)
			code, _, errs := runCLI(t, "verify", "--lock", lock, "--key", rel.pub, "--allow-unscanned")
			t.Logf("verify: %s", errs)
			if code != cli.ExitRefused || !strings.Contains(errs, c.says) {
				t.Fatalf("verify: exit %d, want %d and %q: %s", code, cli.ExitRefused, c.says, errs)
			}
			dst := startRegistry(t)
			code, _, errs = runCLI(t, "copy", "--lock", lock, "--key", rel.pub, "--allow-unscanned", "--target", dst.Host+"/platform")
			if code != cli.ExitRefused {
				t.Fatalf("copy: exit %d, want %d: %s", code, cli.ExitRefused, errs)
			}
			if repos, err := remote.Catalog(ctx, mustRegistry(t, dst.Host)); err != nil || len(repos) != 0 {
				t.Fatalf("the target holds %v (%v) after a refused copy", repos, err)
			}
		})
	}

	t.Run("--expect-builder names the one builder accepted", func(t *testing.T) {
		code, _, errs := runCLI(t, "verify", "--lock", rel.res.LockPath, "--key", rel.pub, "--allow-unscanned", "--expect-builder", forkBuilder)
		if want := `written by builder "reloader-release local", but the policy expects "` + forkBuilder + `"`; code != cli.ExitRefused || !strings.Contains(errs, want) {
			t.Fatalf("verify --expect-builder %s of a local release: exit %d, want %d and %q: %s", forkBuilder, code, cli.ExitRefused, want, errs)
		}
		if code, _, errs := runCLI(t, "verify", "--lock", rel.res.LockPath, "--key", rel.pub, "--allow-unscanned", "--expect-builder", provenance.LocalBuilder); code != cli.ExitOK {
			t.Fatalf("verify --expect-builder %q: exit %d: %s", provenance.LocalBuilder, code, errs)
		}
	})

	t.Run("a release without provenance is accepted only when asked for", func(t *testing.T) {
		lock := rel.forge(t, ctx, refusals["no provenance at all"].edit)
		if code, _, errs := runCLI(t, "verify", "--lock", lock, "--key", rel.pub, "--allow-unscanned", "--allow-no-provenance"); code != cli.ExitOK {
			t.Fatalf("verify --allow-no-provenance: exit %d: %s", code, errs)
		}
		lock = rel.forge(t, ctx, refusals["provenance of another commit"].edit)
		if code, _, _ := runCLI(t, "verify", "--lock", lock, "--key", rel.pub, "--allow-unscanned", "--allow-no-provenance"); code != cli.ExitRefused {
			t.Fatalf("wrong provenance with --allow-no-provenance: exit %d, want %d", code, cli.ExitRefused)
		}
	})
}

// forkBuilder is a builder id no release of ours names.
const forkBuilder = "https://github.com/someone/fork/.github/workflows/build.yml@refs/heads/main"

func otherSigner(t *testing.T) *sign.Signer {
	t.Helper()
	priv, _, err := sign.GenerateKey(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sign.FromKey(sign.KeyOptions{PrivateKeyPath: priv})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustRegistry(t *testing.T, host string) name.Registry {
	t.Helper()
	r, err := name.NewRegistry(host)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
