package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/publish/sign"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
	testregistry "github.com/reloader-dev/reloader/test/registry"
	"github.com/reloader-dev/reloader/test/tools"
)

// formatRelease is a key-signed test release published in one signature format.
type formatRelease struct {
	rel      *releasetest.Release
	pub, key string
}

func publishFormatRelease(t *testing.T, ctx context.Context, host string, seed uint64, format sign.Format) formatRelease {
	t.Helper()
	dir := t.TempDir()
	s, err := releasetest.NewKeySigner(dir)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := releasetest.Publish(ctx, releasetest.Options{Registry: host, Signer: s, Seed: seed, SignatureFormat: format})
	if err != nil {
		t.Fatal(err)
	}
	return formatRelease{rel: rel, pub: filepath.Join(dir, "cosign.pub"), key: filepath.Join(dir, "cosign.key")}
}

// formatsFound runs reloader-mirror verify -o json with args and returns
// the signature formats it says it found, by subject digest.
func formatsFound(t *testing.T, args ...string) map[string][]string {
	t.Helper()
	code, out, errs := runCLI(t, append([]string{"verify", "--allow-unscanned", "-o", "json"}, args...)...)
	if code != cli.ExitOK {
		t.Fatalf("verify %s: exit %d: %s", strings.Join(args, " "), code, errs)
	}
	var res trust.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("verify -o json: %v\n%s", err, out)
	}
	found := map[string][]string{}
	for _, s := range res.Subjects {
		found[s.Digest] = s.Formats
	}
	if len(found) == 0 {
		t.Fatalf("verify -o json names no subject:\n%s", out)
	}
	return found
}

// signatureTags lists the cosign .sig/.att and referrers fallback
// (sha256-<hex>) tags of every repository the lock names, mapped by m (nil:
// where the lock names them).
func signatureTags(t *testing.T, ctx context.Context, l *release.Lock, m *mirror.Mapping) (cosignTags, fallback []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, a := range l.Artifacts {
		repo := a.Repository
		if m != nil {
			repo = m.Repository(repo)
		}
		if seen[repo] {
			continue
		}
		seen[repo] = true
		r, err := name.NewRepository(repo)
		if err != nil {
			t.Fatal(err)
		}
		tags, err := remote.List(r, remote.WithContext(ctx))
		if err != nil {
			t.Fatalf("listing the tags of %s: %v", repo, err)
		}
		for _, tag := range tags {
			switch {
			case strings.HasSuffix(tag, ".sig") || strings.HasSuffix(tag, ".att"):
				cosignTags = append(cosignTags, repo+":"+tag)
			case strings.HasPrefix(tag, "sha256-"):
				fallback = append(fallback, repo+":"+tag)
			}
		}
	}
	return cosignTags, fallback
}

// cosignV3 runs the pinned cosign v3 CLI, offline.
func cosignV3(t *testing.T, ctx context.Context) func(args ...string) error {
	t.Helper()
	return offlineCosign(t, ctx, tools.Clients3)
}

// offlineCosign runs the cosign CLI of a tool set (tools.Clients: v2,
// tools.Clients3: v3) as a user behind the air gap would: a fresh HOME,
// TUF cache and Docker config, no key password, and anything but loopback
// sent to a proxy that refuses it. A failure is a *cosignError holding
// what cosign printed.
func offlineCosign(t *testing.T, ctx context.Context, set tools.Set) func(args ...string) error {
	t.Helper()
	bin, err := tools.Binary(ctx, set, "cosign")
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := append(os.Environ(), "HOME="+home, "COSIGN_PASSWORD=", "TUF_ROOT="+filepath.Join(home, "tuf"), "DOCKER_CONFIG="+home,
		"HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9", "NO_PROXY=127.0.0.1,localhost")
	return func(args ...string) error {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			return &cosignError{args: args, err: err, out: string(out)}
		}
		return nil
	}
}

type cosignError struct {
	args []string
	err  error
	out  string
}

func (e *cosignError) Error() string {
	return "cosign " + strings.Join(e.args, " ") + ": " + e.err.Error() + "\n" + e.out
}

// cosignShortType is cosign's --type for the SBOM and provenance
// predicates a release attests ("" for the others).
func cosignShortType(predicateType string) string {
	switch predicateType {
	case sign.PredicateSPDX:
		return "spdxjson"
	case sign.PredicateCycloneDX:
		return "cyclonedx"
	case sign.PredicateSLSAProvenance1:
		return "slsaprovenance1"
	}
	return ""
}

// cosignVerifiesEverySubject runs cosign v3 `verify` on every image, index
// and chart of the release where m puts it, and `verify-attestation` for
// every SBOM and provenance attested about one, with the key and the
// extra flags; it returns how many commands ran.
func cosignVerifiesEverySubject(t *testing.T, ctx context.Context, l *release.Lock, m *mirror.Mapping, pub string, extra ...string) int {
	t.Helper()
	cosign := cosignV3(t, ctx)
	where := func(repo, digest string) string { return m.Repository(repo) + "@" + digest }
	flags := append([]string{"--key", pub, "--insecure-ignore-tlog=true"}, extra...)
	byDigest := map[string]release.Artifact{}
	n := 0
	for _, a := range l.Artifacts {
		byDigest[a.Digest] = a
		if a.Kind != release.KindImage && a.Kind != release.KindImageIndex && a.Kind != release.KindChart {
			continue
		}
		n++
		if err := cosign(append(append([]string{"verify"}, flags...), where(a.Repository, a.Digest))...); err != nil {
			t.Error(err)
		}
	}
	done := map[string]bool{}
	for _, a := range l.Artifacts {
		typ := cosignShortType(a.PredicateType)
		subject, ok := byDigest[a.Subject]
		if a.Kind != release.KindAttestation || typ == "" || !ok || done[a.Subject+typ] {
			continue
		}
		done[a.Subject+typ] = true
		n++
		args := append(append([]string{"verify-attestation", "--type", typ}, flags...), where(subject.Repository, subject.Digest))
		if err := cosign(args...); err != nil {
			t.Error(err)
		}
	}
	return n
}

// A key-signed release made with --signature-format bundle has its
// signatures and attestations only as Sigstore bundle referrers: no .sig or
// .att tag anywhere. reloader-mirror verifies it and says so, copies it and
// imports it into a registry with the referrers API and into one without
// (CNCF distribution: tag-fallback indexes), inventing no cosign tag, and
// cosign v3 verifies every mirrored image, index and chart and the SBOM and
// provenance attestations with the release key.
func TestAReferrersOnlyKeyReleaseVerifiesCopiesAndImportsIntoBothKindsOfTarget(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("publishes a release and runs the cosign CLI")
	}
	ctx, cancel := tools.BuildContext(t)
	defer cancel()
	src := startRegistry(t)
	kr := publishFormatRelease(t, ctx, src.Host, 41, sign.FormatBundle)
	l := kr.rel.Lock
	for _, a := range l.Artifacts {
		if f := trust.Format(a); f != "" && f != trust.FormatBundle {
			t.Fatalf("a --signature-format bundle release lists a %s: %s %s", f, a.Kind, a.Tag)
		}
	}
	if tags, _ := signatureTags(t, ctx, l, nil); len(tags) > 0 {
		t.Fatalf("a referrers-only release published cosign tags: %v", tags)
	}
	// What a reader of the .sig tag alone (CRI-O) sees: nothing. And the
	// bundles hold for the release key only.
	cosign := cosignV3(t, ctx)
	index := l.Artifacts[slices.IndexFunc(l.Artifacts, func(a release.Artifact) bool { return a.Kind == release.KindImageIndex })]
	ref := index.Repository + "@" + index.Digest
	if err := cosign("verify", "--key", kr.pub, "--insecure-ignore-tlog=true", "--new-bundle-format=false", ref); err == nil {
		t.Errorf("cosign reading only .sig tags verified %s of a referrers-only release", ref)
	}
	_, otherPub, err := sign.GenerateKey(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cosign("verify", "--key", otherPub, "--insecure-ignore-tlog=true", ref); err == nil {
		t.Errorf("cosign verified %s with another key", ref)
	}
	onlyBundles(t, formatsFound(t, "--lock-ref", kr.rel.LockRef, "--key", kr.pub))
	mirrorsIntoBothKindsOfTarget(t, ctx, l, kr.pub, "--lock-ref", kr.rel.LockRef)
}

// onlyBundles checks that verify found only Sigstore bundles on every subject.
func onlyBundles(t *testing.T, found map[string][]string) {
	t.Helper()
	for d, f := range found {
		if !slices.Equal(f, []string{trust.FormatBundle}) {
			t.Errorf("verify says subject %s has %v, want only %s", d, f, trust.FormatBundle)
		}
	}
}

// mirrorsIntoBothKindsOfTarget exports a referrers-only release (lockArgs
// name its lock), copies it and imports it into a registry with the
// referrers API and into one without (CNCF distribution: tag-fallback
// indexes); at each, verify finds only bundles, no cosign tag appears, and
// cosign v3 verifies every image, index and chart and their attestations.
func mirrorsIntoBothKindsOfTarget(t *testing.T, ctx context.Context, l *release.Lock, pub string, lockArgs ...string) {
	t.Helper()
	trustArgs := []string{"--key", pub, "--allow-unscanned"}
	archive := filepath.Join(t.TempDir(), "release.tar")
	if code, _, errs := runCLI(t, append(append([]string{"export", "--to", archive}, lockArgs...), trustArgs...)...); code != cli.ExitOK {
		t.Fatalf("export: exit %d: %s", code, errs)
	}
	for _, target := range []struct {
		name     string
		reg      *testregistry.Registry
		fallback bool
	}{
		{"into a registry with the referrers API", startRegistry(t), false},
		{"into a registry without it, as tag-fallback indexes", startDistribution(t), true},
	} {
		t.Run(target.name, func(t *testing.T) {
			for _, how := range []struct {
				path string
				args []string
			}{
				{"copied", append([]string{"copy"}, lockArgs...)},
				{"imported", []string{"import", "-f", archive}},
			} {
				dst := target.reg.Host + "/" + how.path
				args := append(append(how.args, "--target", dst), trustArgs...)
				if code, _, errs := runCLI(t, args...); code != cli.ExitOK {
					t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, errs)
				}
				onlyBundles(t, formatsFound(t, append([]string{"--key", pub, "--target", dst}, lockArgs...)...))
				m, err := mirror.NewMapping(dst, l, nil)
				if err != nil {
					t.Fatal(err)
				}
				cosignTags, fallback := signatureTags(t, ctx, l, m)
				if len(cosignTags) > 0 {
					t.Errorf("%s: cosign tags appeared at the target: %v", how.path, cosignTags)
				}
				if target.fallback != (len(fallback) > 0) {
					t.Errorf("%s: fallback tags at the target %v, want them: %v", how.path, fallback, target.fallback)
				}
				n := cosignVerifiesEverySubject(t, ctx, l, m, pub)
				t.Logf("%s to %s: cosign v3 ran %d verify and verify-attestation commands", how.path, dst, n)
			}
		})
	}
}

// A key-signed release in both forms (reloader-release's default) keeps
// both at a tag-fallback target: the bundles as referrers, which cosign v3
// reads, and the .sig/.att tags, which CRI-O reads (cosign v3 with
// --new-bundle-format=false reads only those); verify names both forms for
// every subject, at the source and at the target.
func TestAReleaseInBothFormsKeepsBothAtTheTarget(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("publishes a release and runs the cosign CLI")
	}
	ctx, cancel := tools.BuildContext(t)
	defer cancel()
	src := startRegistry(t)
	kr := publishFormatRelease(t, ctx, src.Host, 42, sign.FormatBoth)
	l := kr.rel.Lock
	atSource := formatsFound(t, "--lock-ref", kr.rel.LockRef, "--key", kr.pub)
	for d, f := range atSource {
		if !slices.Contains(f, trust.FormatBundle) || !slices.Contains(f, trust.FormatCosignSignature) {
			t.Errorf("verify says subject %s has %v, want a bundle and a cosign signature", d, f)
		}
	}
	dst := startDistribution(t).Host + "/both"
	args := []string{"copy", "--lock-ref", kr.rel.LockRef, "--target", dst, "--key", kr.pub, "--allow-unscanned"}
	if code, _, errs := runCLI(t, args...); code != cli.ExitOK {
		t.Fatalf("copy: exit %d: %s", code, errs)
	}
	atTarget := formatsFound(t, "--lock-ref", kr.rel.LockRef, "--key", kr.pub, "--target", dst)
	for d, f := range atSource {
		if !slices.Equal(atTarget[d], f) {
			t.Errorf("subject %s: %v at the source, %v at the target", d, f, atTarget[d])
		}
	}
	m, err := mirror.NewMapping(dst, l, nil)
	if err != nil {
		t.Fatal(err)
	}
	srcTags, _ := signatureTags(t, ctx, l, nil)
	cosignTags, fallback := signatureTags(t, ctx, l, m)
	if len(cosignTags) != len(srcTags) || len(fallback) == 0 {
		t.Errorf("target has %d cosign tags (the source %d) and %d fallback indexes, want all and some", len(cosignTags), len(srcTags), len(fallback))
	}
	n := cosignVerifiesEverySubject(t, ctx, l, m, kr.pub)
	n += cosignVerifiesEverySubject(t, ctx, l, m, kr.pub, "--new-bundle-format=false")
	t.Logf("cosign v3 ran %d commands on the copy, reading the bundles and then only the tags", n)
}
