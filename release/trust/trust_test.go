package trust_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/reloader-dev/reloader/publish/sign"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
)

// keySigner is a cosign key pair on disk and the signer loaded from it.
type keySigner struct {
	signer *sign.Signer
	policy trust.Policy
}

func newKeySigner(t *testing.T) keySigner {
	t.Helper()
	priv, pub, err := sign.GenerateKey(t.TempDir(), []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := sign.FromKey(sign.KeyOptions{PrivateKeyPath: priv, Password: []byte("pw")})
	if err != nil {
		t.Fatal(err)
	}
	p, err := trust.LoadPolicy(trust.PolicyFiles{KeyFile: pub})
	if err != nil {
		t.Fatal(err)
	}
	return keySigner{signer: s, policy: p}
}

func verifier(t *testing.T, p trust.Policy) *trust.Verifier {
	t.Helper()
	v, err := trust.NewVerifier(p)
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	return v
}

func digest(c string) string { return "sha256:" + strings.Repeat(c, 64) }

func lockFor(signer release.Signer) *release.Lock {
	return &release.Lock{Schema: release.LockSchema, Version: "v1.2.3", Source: "https://github.com/reloader-dev/reloader",
		Commit: strings.Repeat("a", 40), Created: time.Unix(1700000000, 0).UTC(), Signer: signer,
		Artifacts: []release.Artifact{{Kind: release.KindChart, Name: "reloader", Repository: "r.example/charts/reloader",
			Digest: digest("1"), Size: 10, MediaType: "application/vnd.oci.image.manifest.v1+json"}}}
}

func signedLock(t *testing.T, s *sign.Signer, l *release.Lock) (lockJSON, bundle []byte) {
	t.Helper()
	lockJSON, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	bundle, err = s.Blob(context.Background(), lockJSON)
	if err != nil {
		t.Fatal(err)
	}
	return lockJSON, bundle
}

func TestNewVerifierRefusesAPolicyThatWouldTrustTooMuch(t *testing.T) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]trust.Policy{
		"nobody named":            {},
		"key and identity":        {PublicKey: k.Public(), Identity: "me"},
		"identity and regexp":     {Identity: "me", IdentityRegexp: "m.*", Issuer: "https://issuer"},
		"identity without issuer": {Identity: "me"},
		"identity without root":   {Identity: "me", Issuer: "https://issuer"},
		"bad regexp":              {IdentityRegexp: "(", Issuer: "https://issuer"},
	}
	for name, p := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := trust.NewVerifier(p); !errors.Is(err, trust.ErrPolicy) || errors.Is(err, trust.ErrUntrusted) {
				t.Fatalf("NewVerifier(%s) = %v, want an ErrPolicy", name, err)
			}
		})
	}
}

func TestLoadPolicyNamesTheFileItCannotRead(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "cosign.pub")
	_, err := trust.LoadPolicy(trust.PolicyFiles{KeyFile: missing})
	if !errors.Is(err, trust.ErrPolicy) || !strings.Contains(err.Error(), missing) {
		t.Fatalf("LoadPolicy with a missing key: %v", err)
	}
	garbage := filepath.Join(t.TempDir(), "root.json")
	if err := os.WriteFile(garbage, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = trust.LoadPolicy(trust.PolicyFiles{Identity: "me", Issuer: "https://issuer", TrustedRootFile: garbage})
	if !errors.Is(err, trust.ErrPolicy) || !strings.Contains(err.Error(), garbage) {
		t.Fatalf("LoadPolicy with a broken trusted root: %v", err)
	}
}

func TestLockIsTrustedOnlyAsSignedByTheExpectedSigner(t *testing.T) {
	ours, theirs := newKeySigner(t), newKeySigner(t)
	lockJSON, bundle := signedLock(t, ours.signer, lockFor(ours.signer.Identity()))

	l, res, err := verifier(t, ours.policy).Lock(lockJSON, bundle)
	if err != nil {
		t.Fatalf("a lock signed by the trusted key: %v", err)
	}
	if l.Version != "v1.2.3" || res.Signer.Mode != "key" || !strings.HasPrefix(res.Digest, "sha256:") {
		t.Fatalf("lock result %+v", res)
	}

	edited := bytes.Replace(lockJSON, []byte("v1.2.3"), []byte("v1.2.4"), 1)
	// A lock signed by our key that names someone else as the signer
	// would send users to expect the wrong key from then on.
	redirectJSON, redirectBundle := signedLock(t, ours.signer, lockFor(theirs.signer.Identity()))
	refused := map[string]struct {
		v            *trust.Verifier
		lock, bundle []byte
	}{
		"another key":                  {verifier(t, theirs.policy), lockJSON, bundle},
		"an edited lock":               {verifier(t, ours.policy), edited, bundle},
		"no bundle":                    {verifier(t, ours.policy), lockJSON, nil},
		"a garbage bundle":             {verifier(t, ours.policy), lockJSON, []byte("{}")},
		"a lock naming another signer": {verifier(t, ours.policy), redirectJSON, redirectBundle},
	}
	for name, c := range refused {
		t.Run(name, func(t *testing.T) {
			if _, _, err := c.v.Lock(c.lock, c.bundle); !errors.Is(err, trust.ErrUntrusted) {
				t.Fatalf("Lock = %v, want ErrUntrusted", err)
			}
		})
	}
}

// registryContent serves Release from a registry, checking digests as the
// real Content implementations do.
type registryContent struct{ opts []remote.Option }

func (c registryContent) Manifest(_ context.Context, a release.Artifact) ([]byte, error) {
	ref, err := name.NewDigest(a.Repository + "@" + a.Digest)
	if err != nil {
		return nil, err
	}
	d, err := remote.Get(ref, c.opts...)
	if err != nil {
		return nil, err
	}
	return d.Manifest, nil
}

func (c registryContent) SmallBlob(_ context.Context, a release.Artifact, dg string, max int64) ([]byte, error) {
	ref, err := name.NewDigest(a.Repository + "@" + dg)
	if err != nil {
		return nil, err
	}
	l, err := remote.Layer(ref, c.opts...)
	if err != nil {
		return nil, err
	}
	rc, err := l.Compressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, max))
	if err != nil {
		return nil, err
	}
	if h, _, _ := v1.SHA256(bytes.NewReader(b)); h.String() != dg {
		return nil, fmt.Errorf("blob %s hashes to %s", dg, h)
	}
	return b, nil
}

// signedIndex pushes a random index to a fresh in-process registry, signs
// it with s (a cosign .sig tag), and returns the lock listing both.
func signedIndex(t *testing.T, s *sign.Signer) (*release.Lock, registryContent) {
	t.Helper()
	return publishedIndex(t, s, ".sig")
}

// publishedIndex pushes a random index to a registry of its own, signs it
// (".sig") and/or attests an SBOM about it (".att") with s, and returns a
// lock listing the index and what was made.
func publishedIndex(t *testing.T, s *sign.Signer, kinds ...string) (*release.Lock, registryContent) {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	repo := strings.TrimPrefix(srv.URL, "http://") + "/reloader"
	idx, err := random.Index(256, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.NewDigest(repo + "@" + d.String())
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(ref, idx); err != nil {
		t.Fatal(err)
	}
	raw, err := idx.RawManifest()
	if err != nil {
		t.Fatal(err)
	}
	l := lockFor(s.Identity())
	l.Artifacts = []release.Artifact{
		{Kind: release.KindImageIndex, Name: "reloader", Repository: repo, Digest: d.String(), Size: int64(len(raw)), MediaType: "application/vnd.oci.image.index.v1+json"},
	}
	for _, kind := range kinds {
		switch kind {
		case ".sig":
			err = s.Manifest(context.Background(), sign.Registry{}, ref, nil)
		case ".att":
			err = s.Attest(context.Background(), sign.Registry{}, ref, "https://spdx.dev/Document", []byte(`{"spdxVersion":"SPDX-2.3"}`))
		}
		if err != nil {
			t.Fatal(err)
		}
		tag := "sha256-" + d.Hex + kind
		tagRef, err := name.NewTag(repo + ":" + tag)
		if err != nil {
			t.Fatal(err)
		}
		desc, err := remote.Get(tagRef)
		if err != nil {
			t.Fatal(err)
		}
		l.Artifacts = append(l.Artifacts, release.Artifact{Kind: release.KindSignature, Name: "reloader", Repository: repo, Tag: tag,
			Digest: desc.Digest.String(), Size: desc.Size, MediaType: string(desc.MediaType), Subject: d.String()})
	}
	return l, registryContent{}
}

// An attestation signs a statement about a subject, not the subject: an
// index whose only verified signatures are attestations is not signed, as
// cosign verify would say. With its own signature beside them it is.
func TestAnAttestationIsNoSignatureOfItsSubject(t *testing.T) {
	ours := newKeySigner(t)
	ctx := context.Background()
	l, c := publishedIndex(t, ours.signer, ".att")
	if trust.Format(l.Artifacts[1]) != trust.FormatCosignAttestation {
		t.Fatalf("Format of a .att artifact = %q", trust.Format(l.Artifacts[1]))
	}
	res, err := verifier(t, ours.policy).Release(ctx, l, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); !errors.Is(err, trust.ErrUntrusted) || !strings.Contains(err.Error(), "only attestations verified") {
		t.Fatalf("an index with only an attestation: Err() = %v, %+v", err, res.Subjects)
	}

	l, c = publishedIndex(t, ours.signer, ".sig", ".att")
	res, err = verifier(t, ours.policy).Release(ctx, l, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatalf("an index with its signature and an attestation: %v", err)
	}
}

func TestReleaseVerifiesEverySignatureTheLockLists(t *testing.T) {
	ours, theirs := newKeySigner(t), newKeySigner(t)
	l, c := signedIndex(t, ours.signer)
	ctx := context.Background()

	res, err := verifier(t, ours.policy).Release(ctx, l, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil || len(res.Subjects) != 1 || !res.Subjects[0].Verified {
		t.Fatalf("a release signed by the trusted key: %v %+v", err, res.Subjects)
	}
	if f := trust.Format(l.Artifacts[1]); f != trust.FormatCosignSignature {
		t.Fatalf("Format of a .sig artifact = %q", f)
	}

	res, err = verifier(t, theirs.policy).Release(ctx, l, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); !errors.Is(err, trust.ErrUntrusted) || res.Subjects[0].Signatures[0].Error == "" {
		t.Fatalf("signed by another key: Err() = %v, %+v", err, res.Subjects)
	}

	unsigned := *l
	unsigned.Artifacts = l.Artifacts[:1]
	res, err = verifier(t, ours.policy).Release(ctx, &unsigned, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); !errors.Is(err, trust.ErrUntrusted) || !strings.Contains(err.Error(), "no signature verified") {
		t.Fatalf("an index the lock lists no signature for: Err() = %v", err)
	}
}

func TestAnUnscannedReleaseIsRefusedWhenTheScanIsRequired(t *testing.T) {
	ours := newKeySigner(t)
	strict := ours.policy
	strict.RequireScan = true
	for name, scan := range map[string]*release.Scan{"no scan record": nil, "--no-scan": {Skipped: true}} {
		l := lockFor(ours.signer.Identity())
		l.Scan = scan
		lockJSON, bundle := signedLock(t, ours.signer, l)
		if _, _, err := verifier(t, strict).Lock(lockJSON, bundle); !errors.Is(err, trust.ErrUnscanned) || !errors.Is(err, trust.ErrUntrusted) {
			t.Errorf("%s: Lock = %v, want ErrUnscanned", name, err)
		}
		if _, _, err := verifier(t, ours.policy).Lock(lockJSON, bundle); err != nil {
			t.Errorf("%s, unscanned releases allowed: %v", name, err)
		}
	}
	l := lockFor(ours.signer.Identity())
	l.Scan = &release.Scan{Scanner: "trivy", ScannerVersion: "0.74.0", DBDigest: digest("d"), Counts: map[string]int{"HIGH": 0}}
	lockJSON, bundle := signedLock(t, ours.signer, l)
	if _, _, err := verifier(t, strict).Lock(lockJSON, bundle); err != nil {
		t.Fatalf("a scanned release: %v", err)
	}
}

// alteredContent serves c's content with the signature manifest or its
// layer changed after the fact, checking no digest itself, as a target
// registry that lies would.
type alteredContent struct {
	registryContent
	manifest, layer, missing bool
}

func (c alteredContent) Manifest(ctx context.Context, a release.Artifact) ([]byte, error) {
	b, err := c.registryContent.Manifest(ctx, a)
	if c.manifest && a.Kind == release.KindSignature {
		b = append(b, ' ')
	}
	return b, err
}

func (c alteredContent) SmallBlob(ctx context.Context, a release.Artifact, dg string, max int64) ([]byte, error) {
	if c.missing {
		return nil, errors.New("blob unknown")
	}
	b, err := c.registryContent.SmallBlob(ctx, a, dg, max)
	if c.layer && err == nil {
		b = append(bytes.Clone(b), ' ')
	}
	return b, err
}

// A verifier meets the same signatures twice when a copy is read back at
// its target. The second time it reads and digest-checks every manifest
// and layer again, wherever they come from: a target serving other bytes,
// or missing a layer, is refused although the same signature verified at
// the source a moment before.
func TestASecondVerificationReadsAndChecksEveryByteAgain(t *testing.T) {
	ours := newKeySigner(t)
	l, c := signedIndex(t, ours.signer)
	ctx := context.Background()
	v := verifier(t, ours.policy)
	if res, err := v.Release(ctx, l, c); err != nil || res.Err() != nil {
		t.Fatalf("at the source: %v %v", err, res.Err())
	}
	if res, err := v.Release(ctx, l, c); err != nil || res.Err() != nil {
		t.Fatalf("the same bytes again: %v %v", err, res.Err())
	}
	for name, bad := range map[string]alteredContent{
		"another signature manifest": {registryContent: c, manifest: true},
		"another signature layer":    {registryContent: c, layer: true},
		"a missing signature layer":  {registryContent: c, missing: true},
	} {
		res, err := v.Release(ctx, l, bad)
		if err != nil {
			t.Fatal(err)
		}
		if err := res.Err(); !errors.Is(err, trust.ErrUntrusted) {
			t.Errorf("%s at the target after the source verified: Err() = %v, want it refused", name, err)
		}
	}
}
