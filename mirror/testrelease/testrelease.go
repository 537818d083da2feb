// Package testrelease publishes a small, complete, signed Reloader release to
// a registry for tests: two image variants as multi-platform indexes, a Helm
// chart as an OCI artifact, SBOM referrers, cosign .sig signatures and .att
// SBOM attestations, Sigstore bundles attached as OCI referrers, and a release
// lock listing all of it, signed as a Sigstore bundle (a message signature
// over the lock's exact bytes; the same format for key-based and keyless
// signing, verified by sigstore-go).
//
// Image content is derived from Options.Seed, so two releases with the same
// options have the same image digests; signatures differ (ECDSA is
// randomised).
//
// Deprecated: tests mirror releases made by the release pipeline itself
// (release/releasetest). The one remaining user, mirror/admission's cluster
// test, needs an SPDX attestation on every image index, which the pipeline
// does not make yet (it attests platform images); it moves when it does.
package testrelease

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/reloader-dev/reloader/release"
)

// Media types the release uses.
const (
	SPDXType       = "application/spdx+json"
	HelmConfigType = "application/vnd.cncf.helm.config.v1+json"
	HelmChartType  = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
)

// Signer signs with a key, or keyless with certificates from a
// VirtualSigstore for Identity and Issuer.
type Signer struct {
	Key      *ecdsa.PrivateKey
	Sigstore *ca.VirtualSigstore
	Identity string
	Issuer   string
	// Tlog records every keyless signature in the VirtualSigstore's
	// transparency log, as public Sigstore does; without it bundles carry
	// no log entry.
	Tlog bool
}

// NewKeySigner makes a signer with a fresh P-256 key.
func NewKeySigner() (Signer, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Signer{}, fmt.Errorf("generating a signing key: %w", err)
	}
	return Signer{Key: k}, nil
}

// PublicKeyPEM is the signer's public key (key-based only).
func (s Signer) PublicKeyPEM() []byte {
	b, _ := cryptoutils.MarshalPublicKeyToPEM(s.Key.Public())
	return b
}

// TrustedRootJSON is the trusted_root.json of the signer's VirtualSigstore.
func (s Signer) TrustedRootJSON() ([]byte, error) {
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, s.Sigstore.FulcioCertificateAuthorities(),
		s.Sigstore.CTLogs(), s.Sigstore.TimestampingAuthorities(), s.Sigstore.RekorLogs())
	if err != nil {
		return nil, fmt.Errorf("building the trusted root: %w", err)
	}
	return tr.MarshalJSON()
}

// Options configures Publish.
type Options struct {
	// Registry is "127.0.0.1:port".
	Registry string
	// Prefix is the namespace below the registry (default "reloader-dev").
	Prefix string
	// Version is the release version (default "v1.2.3").
	Version string
	// Seed derives image content.
	Seed uint64
	// LayerBytes is the size of each random layer (default 4096).
	LayerBytes int
	// LayersPerImage is how many layers of its own each platform image has
	// besides the base layer all share (default 1).
	LayersPerImage int
	// Signer signs the lock and everything else.
	Signer Signer
	// SignaturesBy, when set, signs the image and chart signatures (not the
	// lock) with another signer: a release whose artifacts an impostor signed.
	SignaturesBy *Signer
	// Created is the release time (default 2026-01-02T03:04:05Z).
	Created time.Time
}

// Release is what Publish produced.
type Release struct {
	Lock       *release.Lock
	LockJSON   []byte
	LockBundle []byte
	// LockRef is where the lock artifact was pushed ("host/repo:version").
	LockRef string
	// Indexes maps image name to its index digest, Charts chart name to
	// the chart's; Chart is the standard variant's chart.
	Indexes map[string]string
	Charts  map[string]string
	Chart   string
}

type publisher struct {
	ctx  context.Context
	opts Options
	rnd  *mrand.Rand
	lock *release.Lock
}

// Publish builds the release and pushes it to opts.Registry.
func Publish(ctx context.Context, opts Options) (*Release, error) {
	if opts.Prefix == "" {
		opts.Prefix = "reloader-dev"
	}
	if opts.Version == "" {
		opts.Version = "v1.2.3"
	}
	if opts.LayerBytes == 0 {
		opts.LayerBytes = 4096
	}
	if opts.LayersPerImage == 0 {
		opts.LayersPerImage = 1
	}
	if opts.Created.IsZero() {
		opts.Created = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	}
	p := &publisher{ctx: ctx, opts: opts, rnd: mrand.New(mrand.NewPCG(opts.Seed, 42))}
	p.lock = &release.Lock{
		Schema: release.LockSchema, Version: opts.Version,
		Source: "https://github.com/reloader-dev/reloader", Commit: strings.Repeat("ab", 20),
		Created: opts.Created,
	}
	if opts.Signer.Key != nil {
		p.lock.Signer.PublicKey = string(opts.Signer.PublicKeyPEM())
	} else {
		p.lock.Signer.Identity, p.lock.Signer.Issuer = opts.Signer.Identity, opts.Signer.Issuer
	}
	out := &Release{Indexes: map[string]string{}}
	base := p.randomBytes(opts.LayerBytes)
	variants := []struct {
		name, variant string
		platforms     []v1.Platform
	}{
		{"reloader", "standard", []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}, {OS: "linux", Architecture: "ppc64le"}}},
		{"reloader-ubi", "ubi", []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}},
	}
	for _, v := range variants {
		d, err := p.imageVariant(v.name, v.variant, v.platforms, base)
		if err != nil {
			return nil, fmt.Errorf("publishing %s: %w", v.name, err)
		}
		out.Indexes[v.name] = d
	}
	// One chart per variant, named as its image, as the release pipeline
	// publishes them.
	out.Charts = map[string]string{}
	for _, v := range variants {
		d, err := p.chart(v.name, out.Indexes[v.name])
		if err != nil {
			return nil, fmt.Errorf("publishing the %s chart: %w", v.name, err)
		}
		out.Charts[v.name] = d
	}
	out.Chart = out.Charts["reloader"]
	lockJSON, err := p.lock.Marshal()
	if err != nil {
		return nil, err
	}
	if _, err := release.Parse(lockJSON); err != nil {
		return nil, fmt.Errorf("the test release's own lock: %w", err)
	}
	b, err := signBundle(opts.Signer, &sign.PlainData{Data: lockJSON})
	if err != nil {
		return nil, fmt.Errorf("signing the lock: %w", err)
	}
	out.Lock, out.LockJSON, out.LockBundle = p.lock, lockJSON, b
	out.LockRef = p.repo(release.LockRepository) + ":" + opts.Version
	if err := p.pushLock(out); err != nil {
		return nil, err
	}
	return out, nil
}

func (p *publisher) repo(n string) string { return p.opts.Registry + "/" + p.opts.Prefix + "/" + n }

func (p *publisher) randomBytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(p.rnd.Uint32())
	}
	return b
}

func (p *publisher) add(a release.Artifact) { p.lock.Artifacts = append(p.lock.Artifacts, a) }

func (p *publisher) imageVariant(nm, variant string, platforms []v1.Platform, base []byte) (string, error) {
	repo := p.repo(nm)
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	var imgs []v1.Image
	for _, pl := range platforms {
		img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
		img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
		layers := []v1.Layer{static.NewLayer(base, types.OCILayer)}
		for i := 0; i < p.opts.LayersPerImage; i++ {
			layers = append(layers, static.NewLayer(p.randomBytes(p.opts.LayerBytes), types.OCILayer))
		}
		img, err := mutate.AppendLayers(img, layers...)
		if err != nil {
			return "", err
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return "", err
		}
		cf = cf.DeepCopy()
		cf.OS, cf.Architecture = pl.OS, pl.Architecture
		cf.Config.Entrypoint = []string{"/manager"}
		img, err = mutate.ConfigFile(img, cf)
		if err != nil {
			return "", err
		}
		pl := pl
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &pl}})
		imgs = append(imgs, img)
	}
	ref, err := name.ParseReference(repo + ":" + p.opts.Version)
	if err != nil {
		return "", err
	}
	if err := remote.WriteIndex(ref, idx, remote.WithContext(p.ctx)); err != nil {
		return "", fmt.Errorf("pushing %s: %w", ref, err)
	}
	idxDesc, err := describe(idx)
	if err != nil {
		return "", err
	}
	p.add(release.Artifact{Kind: release.KindImageIndex, Name: nm, Variant: variant, Repository: repo, Tag: p.opts.Version,
		Digest: idxDesc.Digest.String(), Size: idxDesc.Size, MediaType: string(idxDesc.MediaType)})
	for i, img := range imgs {
		d, err := describe(img)
		if err != nil {
			return "", err
		}
		plat := platforms[i].OS + "/" + platforms[i].Architecture
		p.add(release.Artifact{Kind: release.KindImage, Name: nm, Variant: variant, Platform: plat, Repository: repo,
			Digest: d.Digest.String(), Size: d.Size, MediaType: string(d.MediaType)})
		sbom := fmt.Sprintf(`{"spdxVersion":"SPDX-2.3","name":%q,"packages":[{"name":"reloader","versionInfo":%q}]}`, nm+"-"+plat, p.opts.Version)
		sd, err := p.putArtifact(repo, "", []byte("{}"), release.EmptyConfigMediaType,
			[]layer{{[]byte(sbom), SPDXType, nil}}, &d, SPDXType, map[string]string{"org.opencontainers.image.created": p.opts.Created.Format(time.RFC3339), "dev.reloader.sbom.format": "spdx-2.3"})
		if err != nil {
			return "", fmt.Errorf("pushing the SBOM of %s %s: %w", nm, plat, err)
		}
		p.add(release.Artifact{Kind: release.KindSBOM, Name: nm, Variant: variant, Platform: plat, Repository: repo,
			Digest: sd.Digest.String(), Size: sd.Size, MediaType: string(sd.MediaType), ArtifactType: SPDXType, Subject: d.Digest.String()})
	}
	if err := p.signatures(nm, variant, repo, idxDesc, true); err != nil {
		return "", err
	}
	return idxDesc.Digest.String(), nil
}

func describe(t interface {
	RawManifest() ([]byte, error)
	MediaType() (types.MediaType, error)
}) (v1.Descriptor, error) {
	raw, err := t.RawManifest()
	if err != nil {
		return v1.Descriptor{}, err
	}
	mt, err := t.MediaType()
	if err != nil {
		return v1.Descriptor{}, err
	}
	h, _, _ := v1.SHA256(bytes.NewReader(raw))
	return v1.Descriptor{MediaType: mt, Digest: h, Size: int64(len(raw))}, nil
}

// signatures attaches, for the subject, a cosign .sig signature and (for
// images) an SBOM .att attestation when signing with a key, and a Sigstore
// bundle referrer always.
func (p *publisher) signatures(nm, variant, repo string, subject v1.Descriptor, sbom bool) error {
	s := p.opts.Signer
	if p.opts.SignaturesBy != nil {
		s = *p.opts.SignaturesBy
	}
	sigTag := strings.Replace(subject.Digest.String(), ":", "-", 1)
	if s.Key != nil {
		payload := fmt.Sprintf(`{"critical":{"identity":{"docker-reference":%q},"image":{"docker-manifest-digest":%q},"type":"cosign container image signature"},"optional":null}`, repo, subject.Digest)
		sum := sha256.Sum256([]byte(payload))
		sig, err := ecdsa.SignASN1(rand.Reader, s.Key, sum[:])
		if err != nil {
			return err
		}
		d, err := p.putArtifact(repo, sigTag+".sig", cosignConfig(payload), string(types.OCIConfigJSON),
			[]layer{{[]byte(payload), "application/vnd.dev.cosign.simplesigning.v1+json", map[string]string{"dev.cosignproject.cosign/signature": base64.StdEncoding.EncodeToString(sig)}}}, nil, "", nil)
		if err != nil {
			return fmt.Errorf("pushing the .sig of %s: %w", repo, err)
		}
		p.add(release.Artifact{Kind: release.KindSignature, Name: nm, Variant: variant, Repository: repo, Tag: sigTag + ".sig",
			Digest: d.Digest.String(), Size: d.Size, MediaType: string(d.MediaType), Subject: subject.Digest.String()})
		if sbom {
			stmt := statement(repo, subject.Digest, "https://spdx.dev/Document", `{"spdxVersion":"SPDX-2.3","name":"`+nm+`"}`)
			env, err := dsseEnvelope(s.Key, stmt)
			if err != nil {
				return err
			}
			d, err := p.putArtifact(repo, sigTag+".att", cosignConfig(string(env)), string(types.OCIConfigJSON),
				[]layer{{env, "application/vnd.dsse.envelope.v1+json", map[string]string{"dev.cosignproject.cosign/signature": "", "predicateType": "https://spdx.dev/Document"}}}, nil, "", nil)
			if err != nil {
				return fmt.Errorf("pushing the .att of %s: %w", repo, err)
			}
			p.add(release.Artifact{Kind: release.KindSBOM, Name: nm, Variant: variant, Repository: repo, Tag: sigTag + ".att",
				Digest: d.Digest.String(), Size: d.Size, MediaType: string(d.MediaType), Subject: subject.Digest.String(), PredicateType: "https://spdx.dev/Document"})
		}
	}
	stmt := statement(repo, subject.Digest, "https://sigstore.dev/cosign/sign/v1", "{}")
	b, err := signBundle(s, &sign.DSSEData{Data: stmt, PayloadType: "application/vnd.in-toto+json"})
	if err != nil {
		return fmt.Errorf("signing %s as a bundle: %w", repo, err)
	}
	ann := map[string]string{"dev.sigstore.bundle.predicateType": "https://sigstore.dev/cosign/sign/v1", "dev.sigstore.bundle.content": "dsse-envelope"}
	d, err := p.putArtifact(repo, "", []byte("{}"), release.EmptyConfigMediaType, []layer{{b, release.BundleMediaType, nil}}, &subject, release.BundleMediaType, ann)
	if err != nil {
		return fmt.Errorf("pushing the bundle of %s: %w", repo, err)
	}
	p.add(release.Artifact{Kind: release.KindSignature, Name: nm, Variant: variant, Repository: repo,
		Digest: d.Digest.String(), Size: d.Size, MediaType: string(d.MediaType), ArtifactType: release.BundleMediaType, Subject: subject.Digest.String(), Annotations: ann})
	return nil
}

func cosignConfig(layer string) []byte {
	sum := sha256.Sum256([]byte(layer))
	return []byte(`{"architecture":"","os":"","config":{},"rootfs":{"type":"layers","diff_ids":["sha256:` + hex.EncodeToString(sum[:]) + `"]}}`)
}

func statement(repo string, d v1.Hash, predicateType, predicate string) []byte {
	return []byte(fmt.Sprintf(`{"_type":"https://in-toto.io/Statement/v1","subject":[{"name":%q,"digest":{"sha256":%q}}],"predicateType":%q,"predicate":%s}`, repo, d.Hex, predicateType, predicate))
}

func dsseEnvelope(k *ecdsa.PrivateKey, payload []byte) ([]byte, error) {
	const pt = "application/vnd.in-toto+json"
	pae := fmt.Sprintf("DSSEv1 %d %s %d %s", len(pt), pt, len(payload), payload)
	sum := sha256.Sum256([]byte(pae))
	sig, err := ecdsa.SignASN1(rand.Reader, k, sum[:])
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{
		"payloadType": pt,
		"payload":     base64.StdEncoding.EncodeToString(payload),
		"signatures":  []map[string]string{{"keyid": "", "sig": base64.StdEncoding.EncodeToString(sig)}},
	})
}

func (p *publisher) chart(chartName, imageIndex string) (string, error) {
	version := strings.TrimPrefix(p.opts.Version, "v")
	chartYAML := fmt.Sprintf("apiVersion: v2\nname: %s\nversion: %s\nappVersion: %s\n", chartName, version, p.opts.Version)
	values := "image:\n  repository: ghcr.io/reloader-dev/" + chartName + "\n  tag: \"\"\n  digest: \"\"\n"
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range []struct{ name, body string }{{chartName + "/Chart.yaml", chartYAML}, {chartName + "/values.yaml", values}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body)), ModTime: p.opts.Created, Typeflag: tar.TypeReg}); err != nil {
			return "", err
		}
		if _, err := tw.Write([]byte(f.body)); err != nil {
			return "", err
		}
	}
	if err := tw.Close(); err != nil {
		return "", err
	}
	if err := gz.Close(); err != nil {
		return "", err
	}
	repo := p.repo("charts/" + chartName)
	cfg := fmt.Sprintf(`{"name":%q,"version":%q,"appVersion":%q,"apiVersion":"v2"}`, chartName, version, p.opts.Version)
	d, err := p.putArtifact(repo, version, []byte(cfg), HelmConfigType, []layer{{buf.Bytes(), HelmChartType, nil}}, nil, "",
		map[string]string{"org.opencontainers.image.title": chartName, "org.opencontainers.image.version": version})
	if err != nil {
		return "", err
	}
	p.add(release.Artifact{Kind: release.KindChart, Name: chartName, Repository: repo, Tag: version,
		Digest: d.Digest.String(), Size: d.Size, MediaType: string(d.MediaType), Annotations: map[string]string{"image": imageIndex}})
	if err := p.signatures(chartName, "", repo, d, false); err != nil {
		return "", err
	}
	return d.Digest.String(), nil
}

func (p *publisher) pushLock(r *Release) error {
	_, err := p.putArtifact(p.repo(release.LockRepository), p.opts.Version, []byte("{}"), release.EmptyConfigMediaType,
		[]layer{{r.LockJSON, release.LockArtifactType, nil}, {r.LockBundle, release.BundleMediaType, nil}}, nil,
		release.LockArtifactType, nil)
	if err != nil {
		return fmt.Errorf("pushing the lock artifact: %w", err)
	}
	return nil
}

type layer struct {
	data        []byte
	mediaType   string
	annotations map[string]string
}

type rawManifest struct {
	raw []byte
	mt  types.MediaType
}

func (r rawManifest) RawManifest() ([]byte, error)        { return r.raw, nil }
func (r rawManifest) MediaType() (types.MediaType, error) { return r.mt, nil }

// putArtifact pushes blobs and an OCI image manifest built by hand, because
// charts, signatures and referrers carry configs and layers go-containerregistry's
// image model does not describe.
func (p *publisher) putArtifact(repo, tag string, config []byte, configType string, layers []layer, subject *v1.Descriptor, artifactType string, ann map[string]string) (v1.Descriptor, error) {
	r, err := name.NewRepository(repo)
	if err != nil {
		return v1.Descriptor{}, err
	}
	type desc struct {
		MediaType   string            `json:"mediaType"`
		Digest      string            `json:"digest"`
		Size        int64             `json:"size"`
		Annotations map[string]string `json:"annotations,omitempty"`
	}
	push := func(b []byte, mt string, a map[string]string) (desc, error) {
		l := static.NewLayer(b, types.MediaType(mt))
		if err := remote.WriteLayer(r, l, remote.WithContext(p.ctx)); err != nil {
			return desc{}, err
		}
		h, _, _ := v1.SHA256(bytes.NewReader(b))
		return desc{mt, h.String(), int64(len(b)), a}, nil
	}
	m := struct {
		SchemaVersion int               `json:"schemaVersion"`
		MediaType     string            `json:"mediaType"`
		ArtifactType  string            `json:"artifactType,omitempty"`
		Config        desc              `json:"config"`
		Layers        []desc            `json:"layers"`
		Subject       *desc             `json:"subject,omitempty"`
		Annotations   map[string]string `json:"annotations,omitempty"`
	}{SchemaVersion: 2, MediaType: string(types.OCIManifestSchema1), ArtifactType: artifactType, Annotations: ann}
	if m.Config, err = push(config, configType, nil); err != nil {
		return v1.Descriptor{}, err
	}
	for _, l := range layers {
		d, err := push(l.data, l.mediaType, l.annotations)
		if err != nil {
			return v1.Descriptor{}, err
		}
		m.Layers = append(m.Layers, d)
	}
	if subject != nil {
		m.Subject = &desc{MediaType: string(subject.MediaType), Digest: subject.Digest.String(), Size: subject.Size}
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return v1.Descriptor{}, err
	}
	h, _, _ := v1.SHA256(bytes.NewReader(raw))
	ref := r.Digest(h.String()).String()
	if tag != "" {
		ref = r.Tag(tag).String()
	}
	pref, err := name.ParseReference(ref)
	if err != nil {
		return v1.Descriptor{}, err
	}
	if err := remote.Put(pref, rawManifest{raw, types.OCIManifestSchema1}, remote.WithContext(p.ctx)); err != nil {
		return v1.Descriptor{}, err
	}
	return v1.Descriptor{MediaType: types.OCIManifestSchema1, Digest: h, Size: int64(len(raw))}, nil
}

// keypair adapts an ECDSA key to sigstore-go's signer.
type keypair struct {
	key *ecdsa.PrivateKey
}

func (k keypair) GetHashAlgorithm() protocommon.HashAlgorithm {
	return protocommon.HashAlgorithm_SHA2_256
}
func (k keypair) GetSigningAlgorithm() protocommon.PublicKeyDetails {
	return protocommon.PublicKeyDetails_PKIX_ECDSA_P256_SHA_256
}
func (k keypair) GetHint() []byte {
	der, _ := x509.MarshalPKIXPublicKey(k.key.Public())
	s := sha256.Sum256(der)
	return []byte(base64.StdEncoding.EncodeToString(s[:]))
}
func (k keypair) GetKeyAlgorithm() string        { return "ECDSA" }
func (k keypair) GetPublicKey() crypto.PublicKey { return k.key.Public() }
func (k keypair) GetPublicKeyPem() (string, error) {
	b, err := cryptoutils.MarshalPublicKeyToPEM(k.key.Public())
	return string(b), err
}
func (k keypair) SignData(_ context.Context, data []byte) ([]byte, []byte, error) {
	sum := sha256.Sum256(data)
	sig, err := ecdsa.SignASN1(rand.Reader, k.key, sum[:])
	return sig, sum[:], err
}

type fixedCert []byte

func (c fixedCert) GetCertificate(context.Context, sign.Keypair, *sign.CertificateProviderOptions) ([]byte, error) {
	return c, nil
}

// signBundle signs content into a Sigstore bundle (v0.3 JSON). Keyless
// bundles carry a VirtualSigstore leaf certificate and an RFC 3161 timestamp
// from its TSA, which is what offline verification anchors the short-lived
// certificate's validity to.
func signBundle(s Signer, content sign.Content) ([]byte, error) {
	if s.Key == nil && s.Tlog {
		return loggedBundle(s, content)
	}
	var opts sign.BundleOptions
	kp := keypair{key: s.Key}
	if s.Key == nil {
		leaf, priv, err := s.Sigstore.GenerateLeafCert(s.Identity, s.Issuer)
		if err != nil {
			return nil, fmt.Errorf("issuing a test certificate: %w", err)
		}
		ek, ok := priv.(*ecdsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("test certificate key is a %T", priv)
		}
		kp.key = ek
		opts.CertificateProvider = fixedCert(leaf.Raw)
	}
	pb, err := sign.Bundle(content, kp, opts)
	if err != nil {
		return nil, err
	}
	if s.Key == nil {
		sig := pb.GetMessageSignature().GetSignature()
		if env := pb.GetDsseEnvelope(); env != nil {
			sig = env.GetSignatures()[0].GetSig()
		}
		tsr, err := s.Sigstore.TimestampResponse(sig)
		if err != nil {
			return nil, fmt.Errorf("timestamping: %w", err)
		}
		pb.VerificationMaterial.TimestampVerificationData = &protobundle.TimestampVerificationData{
			Rfc3161Timestamps: []*protocommon.RFC3161SignedTimestamp{{SignedTimestamp: tsr}},
		}
	}
	return protojson.Marshal(pb)
}

// SignLock signs lock bytes the way Publish does, for tests that rewrite a
// lock.
func SignLock(s Signer, lockJSON []byte) ([]byte, error) {
	return signBundle(s, &sign.PlainData{Data: lockJSON})
}

// loggedBundle signs content with a fresh VirtualSigstore certificate and
// records the signature in its transparency log: a hashedrekord entry with a
// signed entry timestamp for a message signature (bundle v0.1), a dsse entry
// with an inclusion proof for an envelope (bundle v0.3).
func loggedBundle(s Signer, content sign.Content) ([]byte, error) {
	var te *ca.TestEntity
	var err error
	mediaType := "application/vnd.dev.sigstore.bundle+json;version=0.1"
	switch c := content.(type) {
	case *sign.PlainData:
		te, err = s.Sigstore.SignAtTime(s.Identity, s.Issuer, c.Data, time.Now())
	case *sign.DSSEData:
		te, err = s.Sigstore.AttestAtTime(s.Identity, s.Issuer, c.Data, time.Now(), true)
		mediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"
	default:
		return nil, fmt.Errorf("signing %T with a log entry: unsupported content", content)
	}
	if err != nil {
		return nil, fmt.Errorf("signing with a log entry: %w", err)
	}
	vc, _ := te.VerificationContent()
	leaf := vc.(*bundle.Certificate).Certificate()
	tsrs, _ := te.Timestamps()
	entries, _ := te.TlogEntries()
	var tles []*protorekor.TransparencyLogEntry
	for _, e := range entries {
		tle := e.TransparencyLogEntry()
		if tle.KindVersion == nil {
			var kv struct {
				Kind       string `json:"kind"`
				APIVersion string `json:"apiVersion"`
			}
			if err := json.Unmarshal(tle.CanonicalizedBody, &kv); err != nil {
				return nil, fmt.Errorf("reading the log entry's kind: %w", err)
			}
			tle.KindVersion = &protorekor.KindVersion{Kind: kv.Kind, Version: kv.APIVersion}
		}
		// A trusted_root.json written from a VirtualSigstore names its log
		// by the bytes of the hex log ID, so the entry must too.
		tle.LogId.KeyId = []byte(hex.EncodeToString(tle.LogId.KeyId))
		if tle.InclusionPromise == nil {
			// The entry's proto form drops the signed entry timestamp;
			// the log signs it again over the same payload.
			set, err := s.Sigstore.RekorSignPayload(tlog.RekorPayload{Body: base64.StdEncoding.EncodeToString(tle.CanonicalizedBody),
				IntegratedTime: tle.IntegratedTime, LogIndex: tle.LogIndex, LogID: hex.EncodeToString(tle.LogId.KeyId)})
			if err != nil {
				return nil, fmt.Errorf("signing the entry timestamp: %w", err)
			}
			tle.InclusionPromise = &protorekor.InclusionPromise{SignedEntryTimestamp: set}
		}
		tles = append(tles, tle)
	}
	vm := &protobundle.VerificationMaterial{TlogEntries: tles}
	for _, t := range tsrs {
		if vm.TimestampVerificationData == nil {
			vm.TimestampVerificationData = &protobundle.TimestampVerificationData{}
		}
		vm.TimestampVerificationData.Rfc3161Timestamps = append(vm.TimestampVerificationData.Rfc3161Timestamps, &protocommon.RFC3161SignedTimestamp{SignedTimestamp: t})
	}
	pb := &protobundle.Bundle{MediaType: mediaType, VerificationMaterial: vm}
	sc, _ := te.SignatureContent()
	if env := sc.EnvelopeContent(); env != nil {
		vm.Content = &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: leaf.Raw}}
		raw := env.RawEnvelope()
		payload, err := base64.StdEncoding.DecodeString(raw.Payload)
		if err != nil {
			return nil, err
		}
		pe := &protodsse.Envelope{Payload: payload, PayloadType: raw.PayloadType}
		for _, sg := range raw.Signatures {
			sig, err := base64.StdEncoding.DecodeString(sg.Sig)
			if err != nil {
				return nil, err
			}
			pe.Signatures = append(pe.Signatures, &protodsse.Signature{Sig: sig, Keyid: sg.KeyID})
		}
		pb.Content = &protobundle.Bundle_DsseEnvelope{DsseEnvelope: pe}
	} else {
		vm.Content = &protobundle.VerificationMaterial_X509CertificateChain{X509CertificateChain: &protocommon.X509CertificateChain{
			Certificates: []*protocommon.X509Certificate{{RawBytes: leaf.Raw}}}}
		ms := sc.MessageSignatureContent()
		pb.Content = &protobundle.Bundle_MessageSignature{MessageSignature: &protocommon.MessageSignature{
			MessageDigest: &protocommon.HashOutput{Algorithm: protocommon.HashAlgorithm_SHA2_256, Digest: ms.Digest()}, Signature: ms.Signature()}}
	}
	return protojson.Marshal(pb)
}
