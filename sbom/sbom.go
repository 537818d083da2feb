// Package sbom generates the SPDX 2.3, SPDX 3.0.1 and CycloneDX JSON SBOMs of each
// release image with the syft library, reproducibly: the fields syft fills
// with the wall clock or random UUIDs are replaced by values derived from the
// release time and the image digest, so two builds of one commit produce
// byte-identical SBOMs.
//
// This package links syft (and its SQLite driver); only the release tool may
// import it, never the controller.
package sbom

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/anchore/syft/syft"
	"github.com/anchore/syft/syft/cataloging"
	"github.com/anchore/syft/syft/cataloging/pkgcataloging"
	"github.com/anchore/syft/syft/file"
	"github.com/anchore/syft/syft/format/cyclonedxjson"
	"github.com/anchore/syft/syft/format/spdxjson"
	"github.com/anchore/syft/syft/license"
	"github.com/anchore/syft/syft/pkg"
	"github.com/anchore/syft/syft/pkg/cataloger/golang"
	"github.com/anchore/syft/syft/sbom"
	"github.com/anchore/syft/syft/source"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/reloader-dev/reloader/sbom/spdx3"

	// syft's RPM database cataloger (UBI images) reads SQLite.
	_ "modernc.org/sqlite"
)

// Media types of the SBOM documents, also their OCI artifact types.
const (
	MediaTypeSPDX      = "application/spdx+json"
	MediaTypeCycloneDX = "application/vnd.cyclonedx+json"
	// MediaTypeSPDX3 is SPDX 3.0.1 JSON-LD (IANA application/spdx3+json).
	MediaTypeSPDX3 = spdx3.MediaType
)

// Document is one generated SBOM.
type Document struct {
	// MediaType is MediaTypeSPDX, MediaTypeCycloneDX or MediaTypeSPDX3.
	MediaType string
	Data      []byte
}

// Options configures Generate.
type Options struct {
	// Name and Version name the described image in the documents.
	Name, Version string
	// Created is the release time written as the documents' creation time.
	Created time.Time
	// Namespace is the base URL of SPDX document namespaces.
	Namespace string
	// WorkDir is scratch space for the OCI layout syft reads.
	WorkDir string
	// GoModCache is the Go module cache the binaries were built from
	// (`go env GOMODCACHE`). syft reads each module's licence from it, on
	// disk, never from the network; empty leaves Go modules without
	// licences (NOASSERTION), which a procurement review flags.
	GoModCache string
	// ModuleLicenceFile is the licence file of the main module (the
	// repository's LICENSE). syft finds no licence for a module built from
	// a work tree (its version is "(devel)", so it is in no module cache);
	// the licence read from this file is written as the one its authors
	// declare. Empty leaves the main module without a licence.
	ModuleLicenceFile string
	// MainModule is the Go module path of our own binaries and Producer
	// the organisation that produces them: its supplier is declared, not
	// derived from the path like other modules'. Either empty treats the
	// main module like any other.
	MainModule, Producer string
	// ProducerURL or ProducerEmail is the producer's security contact as
	// the release configuration declares it (release/security.yaml), and
	// SecurityTxt the URL of its security.txt: the SBOM's creator and the
	// main module's creator name them (BSI TR-03183-2 v2.1.0). Empty
	// leaves the creator without a contact, which the review reports.
	ProducerURL, ProducerEmail, SecurityTxt string
	// Repository is the registry repository the image is published to
	// ("ghcr.io/reloader-dev/reloader"): each component's deployable URI
	// is the registry's URL of the layer that delivers it. Empty writes
	// no deployable URIs.
	Repository string
	// SourceURI is where the main module's source is, at the commit
	// released.
	SourceURI string
}

// Generate catalogues img and returns its SPDX and CycloneDX documents.
// The image is handed to syft as an OCI layout on disk rather than a
// registry reference, so SBOMs are made before anything is published.
func Generate(ctx context.Context, img v1.Image, opts Options) ([]Document, error) {
	dgst, err := img.Digest()
	if err != nil {
		return nil, fmt.Errorf("generating SBOMs for %s: %w", opts.Name, err)
	}
	if ctx, err = WithLicenseScanner(ctx); err != nil {
		return nil, fmt.Errorf("generating SBOMs for %s %s: %w", opts.Name, dgst, err)
	}
	dir, err := os.MkdirTemp(opts.WorkDir, "sbom-oci-")
	if err != nil {
		return nil, fmt.Errorf("generating SBOMs for %s %s: %w", opts.Name, dgst, err)
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return nil, fmt.Errorf("generating SBOMs for %s %s: writing the OCI layout: %w", opts.Name, dgst, err)
	}
	if err := p.AppendImage(img); err != nil {
		return nil, fmt.Errorf("generating SBOMs for %s %s: writing the OCI layout: %w", opts.Name, dgst, err)
	}
	cfg := syft.DefaultGetSourceConfig().WithSources("oci-dir").
		WithAlias(source.Alias{Name: opts.Name, Version: opts.Version})
	src, err := syft.GetSource(ctx, dir, cfg)
	if err != nil {
		return nil, fmt.Errorf("generating SBOMs for %s %s: reading the image: %w", opts.Name, dgst, err)
	}
	defer src.Close()
	s, err := syft.CreateSBOM(ctx, src, createConfig(opts))
	if err != nil {
		return nil, fmt.Errorf("generating SBOMs for %s %s: cataloguing: %w", opts.Name, dgst, err)
	}
	dropNoticeLicences(s)
	if err := declareModuleLicence(ctx, s, opts.ModuleLicenceFile); err != nil {
		return nil, fmt.Errorf("generating SBOMs for %s %s: %w", opts.Name, dgst, err)
	}
	digests, err := rpmDigests(s, src, dir)
	if err != nil {
		return nil, fmt.Errorf("generating SBOMs for %s %s: %w", opts.Name, dgst, err)
	}
	dep, err := readDeployables(img, s)
	if err != nil {
		return nil, fmt.Errorf("generating SBOMs for %s %s: %w", opts.Name, dgst, err)
	}
	spdx, err := encodeSPDX(*s, opts, dgst, digests, dep)
	if err != nil {
		return nil, fmt.Errorf("generating the SPDX SBOM for %s %s: %w", opts.Name, dgst, err)
	}
	cdx, err := encodeCycloneDX(*s, opts, dgst, digests, dep)
	if err != nil {
		return nil, fmt.Errorf("generating the CycloneDX SBOM for %s %s: %w", opts.Name, dgst, err)
	}
	// SPDX 3.0.1 is the finished SPDX 2.3 document converted, with what
	// BSI TR-03183-2 v2.1.0 asks beyond SPDX 2.3 read from the finished
	// CycloneDX one, so the three cannot say different things.
	facts, err := spdx3Facts(cdx)
	if err != nil {
		return nil, fmt.Errorf("generating the SPDX 3.0.1 SBOM for %s %s: %w", opts.Name, dgst, err)
	}
	spdx3Doc, err := spdx3.FromSPDX23(spdx, facts)
	if err != nil {
		return nil, fmt.Errorf("generating the SPDX 3.0.1 SBOM for %s %s: %w", opts.Name, dgst, err)
	}
	// A release publishes no SBOM its reader's library would refuse.
	if err := spdx3.Validate(spdx3Doc); err != nil {
		return nil, fmt.Errorf("the SPDX 3.0.1 SBOM of %s %s: %w", opts.Name, dgst, err)
	}
	return []Document{{MediaType: MediaTypeSPDX, Data: spdx}, {MediaType: MediaTypeCycloneDX, Data: cdx}, {MediaType: MediaTypeSPDX3, Data: spdx3Doc}}, nil
}

// licenseScannerKey marks a context that carries syft's licence scanner.
type licenseScannerKey struct{}

// WithLicenseScanner returns ctx carrying syft's licence scanner (its
// default configuration, which createConfig keeps), for every Generate
// under ctx to share: building one compiles licensecheck's whole licence
// corpus, most of an SBOM's time for a small image, and syft would build
// one per call. A release's pipeline builds it once for all its images.
func WithLicenseScanner(ctx context.Context) (context.Context, error) {
	if ctx.Value(licenseScannerKey{}) != nil {
		return ctx, nil
	}
	ctx, err := syft.SetContextLicenseScanner(ctx, cataloging.DefaultLicenseConfig())
	if err != nil {
		return nil, fmt.Errorf("building the licence scanner: %w", err)
	}
	return context.WithValue(ctx, licenseScannerKey{}, true), nil
}

// createConfig is syft's default configuration with Go licences read from
// the local module cache. Remote licence search stays off: a release must
// not depend on what a proxy serves at the time, and air-gapped release
// machines have no proxy.
func createConfig(opts Options) *syft.CreateSBOMConfig {
	cfg := syft.DefaultCreateSBOMConfig().WithTool("reloader-release", opts.Version)
	if opts.GoModCache == "" {
		return cfg
	}
	golangCfg := golang.DefaultCatalogerConfig().
		WithSearchLocalModCacheLicenses(true).
		WithLocalModCacheDir(opts.GoModCache).
		WithSearchRemoteLicenses(false)
	return cfg.WithPackagesConfig(pkgcataloging.DefaultConfig().WithGolangConfig(golangCfg))
}

// dropNoticeLicences removes the "licences" syft makes of files that are
// not licences. Reading licences from the module cache, syft walks each
// whole module and takes every file whose name looks like a licence: the
// Apache-2.0 NOTICE files of prometheus and randfill, and Go sources such as
// kube-openapi's license_test.go. Text it cannot identify becomes
// "sha256:<hash>" (LicenseRef-<hash> in SPDX), which a licence policy
// rightly flags as unknown, so every Prometheus module would need a manual
// review for an attribution notice. An unidentified licence read from any
// other file (a custom licence) stays, to be reviewed.
func dropNoticeLicences(s *sbom.SBOM) {
	c := s.Artifacts.Packages
	if c == nil {
		return
	}
	for _, p := range c.Sorted() {
		all := p.Licenses.ToSlice()
		kept := make([]pkg.License, 0, len(all))
		for _, l := range all {
			if !notALicence(l) {
				kept = append(kept, l)
			}
		}
		if len(kept) == len(all) {
			continue
		}
		// The package keeps its ID (derived from what syft catalogued), so
		// the relationships that name it stay valid.
		p.Licenses = pkg.NewLicenseSet(kept...)
		c.Delete(p.ID())
		c.Add(p)
	}
}

// declareModuleLicence gives the main Go module of every binary in s the
// licence identified in licenceFile.
func declareModuleLicence(ctx context.Context, s *sbom.SBOM, licenceFile string) error {
	if licenceFile == "" || s.Artifacts.Packages == nil {
		return nil
	}
	f, err := os.Open(licenceFile)
	if err != nil {
		return fmt.Errorf("reading the main module's licence: %w", err)
	}
	defer f.Close()
	var declared []pkg.License
	for _, l := range pkg.NewLicensesFromReadCloserWithContext(ctx, file.NewLocationReadCloser(file.NewLocation(filepath.Base(licenceFile)), f)) {
		if l.SPDXExpression == "" {
			continue
		}
		declared = append(declared, pkg.NewLicenseFromTypeWithContext(ctx, l.SPDXExpression, license.Declared))
	}
	if len(declared) == 0 {
		return fmt.Errorf("identifying the main module's licence: %s holds no licence syft recognises", licenceFile)
	}
	c := s.Artifacts.Packages
	for _, p := range c.Sorted(pkg.GoModulePkg) {
		md, ok := p.Metadata.(pkg.GolangBinaryBuildinfoEntry)
		if !ok || md.MainModule != p.Name || !p.Licenses.Empty() {
			continue
		}
		p.Licenses = pkg.NewLicenseSet(declared...)
		c.Delete(p.ID())
		c.Add(p)
	}
	return nil
}

// notALicence reports an unidentified licence read only from NOTICE files
// or Go sources.
func notALicence(l pkg.License) bool {
	if l.SPDXExpression != "" || len(l.URLs) == 0 {
		return false
	}
	for _, u := range l.URLs {
		base := path.Base(u)
		if !strings.HasPrefix(strings.ToUpper(base), "NOTICE") && !strings.HasSuffix(base, ".go") {
			return false
		}
	}
	return true
}

// GoModCache returns the module cache of the go command that builds in dir.
func GoModCache(ctx context.Context, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "env", "GOMODCACHE")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("finding the Go module cache (go env GOMODCACHE): %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

func encodeSPDX(s sbom.SBOM, opts Options, dgst v1.Hash, rpmMD5 map[string]string, dep deployables) ([]byte, error) {
	cfg := spdxjson.DefaultEncoderConfig()
	cfg.Version = "2.3"
	enc, err := spdxjson.NewFormatEncoderWithConfig(cfg)
	if err != nil {
		return nil, err
	}
	return encode(enc, s, func(doc map[string]any) {
		if ci, ok := doc["creationInfo"].(map[string]any); ok {
			ci["created"] = opts.Created.UTC().Format(time.RFC3339)
		}
		doc["documentNamespace"] = fmt.Sprintf("%s/%s/%s-%s", opts.Namespace, opts.Name, opts.Version, dgst.Hex)
		supplySPDX(doc, opts)
		completeSPDX(doc, opts, rpmMD5)
		binarySHA512(doc, opts, dep)
		noteFIPSModule(doc, fipsModule(s))
	})
}

func encodeCycloneDX(s sbom.SBOM, opts Options, dgst v1.Hash, rpmMD5 map[string]string, dep deployables) ([]byte, error) {
	enc, err := cyclonedxjson.NewFormatEncoderWithConfig(cyclonedxjson.DefaultEncoderConfig())
	if err != nil {
		return nil, err
	}
	return encode(enc, s, func(doc map[string]any) {
		doc["serialNumber"] = "urn:uuid:" + uuidFor(dgst.String()+"|"+opts.Version)
		if md, ok := doc["metadata"].(map[string]any); ok {
			md["timestamp"] = opts.Created.UTC().Format(time.RFC3339)
		}
		supplyCycloneDX(doc, opts)
		completeCycloneDX(doc, opts, rpmMD5)
		describeDeployables(doc, opts, dep)
	})
}

// encode runs the syft encoder and rewrites the non-reproducible fields.
// Re-encoding through a map also sorts object keys, one less source of
// variation between runs.
func encode(enc sbom.FormatEncoder, s sbom.SBOM, fix func(map[string]any)) ([]byte, error) {
	var buf bytes.Buffer
	if err := enc.Encode(&buf, s); err != nil {
		return nil, err
	}
	var doc map[string]any
	dec := json.NewDecoder(&buf)
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("re-reading syft's output: %w", err)
	}
	fix(doc)
	out, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// uuidFor is a name-based UUID (RFC 9562 version 8 layout over SHA-256):
// stable for one image, different between images.
func uuidFor(s string) string {
	h := sha256.Sum256([]byte(s))
	h[6] = (h[6] & 0x0f) | 0x80
	h[8] = (h[8] & 0x3f) | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}
