// Package release holds what a release is made of and how it is described to
// the people and tools downstream of it. Its centre is the release lock
// (reloader-release.json): every artifact of one release by digest, the SBOMs
// and attestations that describe them and the signer users must expect. The
// release pipeline (cmd/release) writes and signs it; reloader-mirror
// (cmd/mirror) verifies it and moves exactly what it lists.
package release

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/reloader-dev/reloader/internal/strict"
	"github.com/reloader-dev/reloader/release/support"
)

// LockSchema identifies the format of the locks the pipeline writes. v2
// added the advisories and the support table; a v1 consumer refuses a v2
// lock by its schema, not by an unknown field it cannot explain.
const LockSchema = "https://reloader.dev/schemas/release-lock/v2"

// LockSchemaV1 is the format of locks written before v2. They are still
// read, and carry no advisories or support table.
const LockSchemaV1 = "https://reloader.dev/schemas/release-lock/v1"

// LockFileName is the conventional name of the lock file.
const LockFileName = "reloader-release.json"

// maxLockBytes bounds what Parse accepts: a real lock is a few hundred KiB.
const maxLockBytes = 8 << 20

// Kind says what an artifact is.
type Kind string

const (
	// KindImageIndex is the multi-platform index of one image variant.
	KindImageIndex Kind = "image-index"
	// KindImage is one platform's image manifest.
	KindImage Kind = "image"
	// KindChart is a Helm chart stored as an OCI artifact.
	KindChart Kind = "chart"
	// KindSBOM is an SBOM attestation (in-toto, cosign predicate type).
	KindSBOM Kind = "sbom"
	// KindAttestation is any other in-toto attestation (e.g. provenance).
	KindAttestation Kind = "attestation"
	// KindSignature is a cosign signature manifest (.sig tag) or a Sigstore
	// bundle attached as an OCI referrer.
	KindSignature Kind = "signature"
)

func (k Kind) valid() bool {
	switch k {
	case KindImageIndex, KindImage, KindChart, KindSBOM, KindAttestation, KindSignature:
		return true
	}
	return false
}

// Image variants: what Artifact.Variant may say. The -fips variants are
// the standard and UBI images with the controller built against Go's
// FIPS 140-3 module (GOFIPS140) and run with GODEBUG=fips140=only.
const (
	VariantStandard = "standard"
	VariantUBI      = "ubi"
	VariantFIPS     = "fips"
	VariantUBIFIPS  = "ubi-fips"
)

func validVariant(v string) bool {
	switch v {
	case VariantStandard, VariantUBI, VariantFIPS, VariantUBIFIPS:
		return true
	}
	return false
}

// Lock describes one release completely. Its JSON form is what is signed.
type Lock struct {
	Schema string `json:"schema"`
	// Version is the release's semantic version, e.g. "v1.2.3".
	Version string `json:"version"`
	// Source is the repository URL the release was built from.
	Source string `json:"source"`
	// Commit is the full git commit the release was built from.
	Commit string `json:"commit"`
	// Created is the release time, from SOURCE_DATE_EPOCH so rebuilds agree.
	Created time.Time `json:"created"`
	// Signer is who users must expect to have signed every artifact.
	Signer Signer `json:"signer"`
	// Artifacts lists every artifact of the release, sorted by Key.
	Artifacts []Artifact `json:"artifacts"`
	// Scan is the vulnerability scan the images passed before anything
	// was pushed. A lock without one is unscanned, as is one that says
	// Skipped; consumers refuse such a release unless told otherwise.
	Scan *Scan `json:"scan,omitempty"`
	// Advisories are the project's security advisories (OSV documents,
	// release/advisories) as they stood when the release was cut, and
	// Support is the support table (release/support.yaml). Signed with the
	// rest, they let a newer release's lock tell a disconnected site that
	// an older release is affected or out of support.
	Advisories []json.RawMessage `json:"advisories,omitempty"`
	Support    *support.Table    `json:"support,omitempty"`
}

// Scan records the vulnerability scan of a release's images.
type Scan struct {
	// Skipped: the release was built with --no-scan. No other field is set.
	Skipped bool `json:"skipped,omitempty"`
	// Scanner and ScannerVersion name the tool, e.g. "trivy" "0.74.0".
	Scanner        string `json:"scanner,omitempty"`
	ScannerVersion string `json:"scannerVersion,omitempty"`
	// DBDigest is the sha256 of the vulnerability database file the scan
	// used; DBBuilt is when that database was built.
	DBDigest string    `json:"dbDigest,omitempty"`
	DBBuilt  time.Time `json:"dbBuilt,omitzero"`
	// Counts is the number of findings by severity over all images.
	Counts map[string]int `json:"counts,omitempty"`
	// Exceptions are the policy exceptions that accepted a finding.
	Exceptions []ScanException `json:"exceptions,omitempty"`
	// Findings are the vulnerabilities the scan found (each id and package
	// once), so a later scan on the disconnected side can tell which of
	// its findings are new since the release. Locks written before this
	// field existed have none.
	Findings []ScanFinding `json:"findings,omitempty"`
}

// ScanFinding is one vulnerability the release's scan found.
type ScanFinding struct {
	ID       string `json:"id"`
	Package  string `json:"package"`
	Severity string `json:"severity"`
}

// ScanException is a dated exception of the release policy that accepted
// a finding of this release.
type ScanException struct {
	ID            string `json:"id"`
	Package       string `json:"package"`
	Expires       string `json:"expires"`
	Justification string `json:"justification"`
	// Kind is the exception's kind in the release policy (accepted_risk
	// or not_affected); a lock written before kinds existed has none,
	// which means accepted_risk. VEXJustification is the OpenVEX
	// justification of a not_affected exception.
	Kind             string `json:"kind,omitempty"`
	VEXJustification string `json:"vexJustification,omitempty"`
}

// Scanned reports whether the lock records a vulnerability scan.
func (l *Lock) Scanned() bool { return l.Scan != nil && !l.Scan.Skipped }

// Signer is the identity a verifier must require: a public key, or a keyless
// certificate identity (exact or regular expression) with its OIDC issuer.
type Signer struct {
	// PublicKey is a PEM public key for key-based signing.
	PublicKey string `json:"publicKey,omitempty"`
	// Identity is the exact certificate subject (SAN) for keyless signing.
	Identity string `json:"identity,omitempty"`
	// IdentityRegexp matches the certificate subject instead of Identity.
	IdentityRegexp string `json:"identityRegexp,omitempty"`
	// Issuer is the OIDC issuer of a keyless certificate.
	Issuer string `json:"issuer,omitempty"`
}

// Keyless reports whether the signer is a certificate identity, not a key.
func (s Signer) Keyless() bool { return s.PublicKey == "" }

// Artifact is one content-addressed object of the release.
type Artifact struct {
	Kind Kind `json:"kind"`
	// Name is the artifact's product name: "reloader", "reloader-ubi", a
	// chart name.
	Name string `json:"name"`
	// Variant is one of the Variant constants for images and what refers
	// to them.
	Variant string `json:"variant,omitempty"`
	// Platform is "os/arch[/variant]" for KindImage and its SBOMs.
	Platform string `json:"platform,omitempty"`
	// Repository is where the release pipeline pushed it, without tag or
	// digest (e.g. "ghcr.io/reloader-dev/reloader").
	Repository string `json:"repository"`
	// Tag is the tag it was published under, if any.
	Tag string `json:"tag,omitempty"`
	// Digest is "sha256:<64 hex>" of the manifest.
	Digest string `json:"digest"`
	// Size is the manifest's size in bytes.
	Size int64 `json:"size"`
	// MediaType is the manifest's media type.
	MediaType string `json:"mediaType"`
	// ArtifactType is the OCI artifactType, for referrers.
	ArtifactType string `json:"artifactType,omitempty"`
	// Subject is the digest of the artifact this one describes or signs.
	Subject string `json:"subject,omitempty"`
	// PredicateType is the in-toto predicate type of an attestation.
	PredicateType string `json:"predicateType,omitempty"`
	// Annotations are the manifest's OCI annotations worth surfacing.
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Key orders artifacts deterministically.
func (a Artifact) Key() string {
	return strings.Join([]string{string(a.Kind), a.Name, a.Variant, a.Platform, a.Repository, a.Digest}, "|")
}

var (
	digestRE = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)
	commitRE = regexp.MustCompile(`^[a-f0-9]{40}([a-f0-9]{24})?$`)
	// versionRE is vMAJOR.MINOR.PATCH[-PRE], semver's numbers without
	// leading zeros: the leading "v" is required, because every consumer
	// compares, lists and matches advisories by golang.org/x/mod/semver,
	// which reads no version without it, and build metadata is refused,
	// because semver ignores it: two releases differing only in it would
	// be one version to every check.
	versionRE = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)
)

// CheckVersion says whether v can name a release: vMAJOR.MINOR.PATCH with
// an optional -PRE, as every command that reads a lock requires.
func CheckVersion(v string) error {
	if !versionRE.MatchString(v) {
		return fmt.Errorf("version %q is not vMAJOR.MINOR.PATCH[-PRE] (for example v1.2.3 or v1.3.0-rc.1)", v)
	}
	return nil
}

// Parse decodes and validates a lock. It is strict: unknown fields, trailing
// data, a wrong schema or any invalid artifact is an error naming what is
// wrong, because a lock is a security boundary.
func Parse(data []byte) (*Lock, error) {
	var l Lock
	if err := strict.JSON(data, "release lock", maxLockBytes, &l); err != nil {
		return nil, err
	}
	if err := l.Validate(); err != nil {
		return nil, err
	}
	return &l, nil
}

// Validate checks the lock's invariants. It stays one list of checks, in
// the order a reader meets the fields, so that every problem of a lock is
// reported at once rather than one per attempt.
func (l *Lock) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch l.Schema {
	case LockSchema:
		if _, err := l.ParsedAdvisories(); err != nil {
			bad("%v", err)
		}
		if l.Support != nil {
			if err := l.Support.Check(); err != nil {
				bad("support: %v", err)
			}
		}
	case LockSchemaV1:
		if len(l.Advisories) > 0 || l.Support != nil {
			bad("schema %s carries no advisories or support table; they came with %s", LockSchemaV1, LockSchema)
		}
	default:
		bad("schema is %q, want %q (or the older %q)", l.Schema, LockSchema, LockSchemaV1)
	}
	if err := CheckVersion(l.Version); err != nil {
		bad("%v", err)
	}
	if !commitRE.MatchString(l.Commit) {
		bad("commit %q is not a full git commit id", l.Commit)
	}
	if l.Signer.PublicKey == "" && l.Signer.Identity == "" && l.Signer.IdentityRegexp == "" {
		bad("signer names neither a public key nor a certificate identity")
	}
	if l.Signer.Keyless() && l.Signer.Issuer == "" {
		bad("keyless signer has no OIDC issuer")
	}
	if l.Signer.IdentityRegexp != "" {
		if _, err := regexp.Compile(l.Signer.IdentityRegexp); err != nil {
			bad("signer identityRegexp: %v", err)
		}
	}
	if len(l.Artifacts) == 0 {
		bad("lists no artifacts")
	}
	if l.Scan != nil {
		validateScan(l.Scan, bad)
	}
	digests := make(map[string]bool, len(l.Artifacts))
	seen := make(map[string]bool, len(l.Artifacts))
	for i, a := range l.Artifacts {
		where := fmt.Sprintf("artifact %d (%s %s %s)", i, a.Kind, a.Name, a.Platform)
		if !a.Kind.valid() {
			bad("%s: unknown kind %q", where, a.Kind)
		}
		if a.Name == "" {
			bad("%s: no name", where)
		}
		if !digestRE.MatchString(a.Digest) {
			bad("%s: digest %q is not sha256:<64 lowercase hex>", where, a.Digest)
		}
		if a.Repository == "" || strings.ContainsAny(a.Repository, "@ \t\n") {
			bad("%s: repository %q is not a repository name", where, a.Repository)
		}
		if a.Size <= 0 {
			bad("%s: size %d", where, a.Size)
		}
		if a.MediaType == "" {
			bad("%s: no media type", where)
		}
		if a.Variant != "" && !validVariant(a.Variant) {
			bad("%s: unknown variant %q (want %s, %s, %s or %s)", where, a.Variant, VariantStandard, VariantUBI, VariantFIPS, VariantUBIFIPS)
		}
		if a.Kind == KindImage && a.Platform == "" {
			bad("%s: image without platform", where)
		}
		if a.Subject != "" && !digestRE.MatchString(a.Subject) {
			bad("%s: subject %q is not a digest", where, a.Subject)
		}
		if k := a.Key(); seen[k] {
			bad("%s: listed twice", where)
		} else {
			seen[k] = true
		}
		digests[a.Digest] = true
	}
	for i, a := range l.Artifacts {
		if a.Subject != "" && !digests[a.Subject] {
			bad("artifact %d (%s %s): subject %s is not an artifact of this release", i, a.Kind, a.Name, a.Subject)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid release lock: %w", errors.Join(errs...))
	}
	return nil
}

// validateScan checks the scan record: a skipped scan records nothing, a
// real one names its scanner and database, and every exception is complete.
func validateScan(sc *Scan, bad func(format string, args ...any)) {
	switch {
	case sc.Skipped && (sc.Scanner != "" || sc.DBDigest != "" || len(sc.Counts) > 0 || len(sc.Exceptions) > 0):
		bad("scan: a skipped scan records no results")
	case !sc.Skipped && (sc.Scanner == "" || sc.ScannerVersion == ""):
		bad("scan: names no scanner and version")
	case !sc.Skipped && !digestRE.MatchString(sc.DBDigest):
		bad("scan: database digest %q is not sha256:<64 lowercase hex>", sc.DBDigest)
	}
	for i, e := range sc.Exceptions {
		if e.ID == "" || e.Package == "" || e.Expires == "" {
			bad("scan: exception %d names no vulnerability, package or expiry", i)
		}
		if e.Kind != "" && e.Kind != "accepted_risk" && e.Kind != "not_affected" || e.Kind == "not_affected" && e.VEXJustification == "" {
			bad("scan: exception %d (%s): kind %q with justification %q is not accepted_risk or not_affected with an OpenVEX justification", i, e.ID, e.Kind, e.VEXJustification)
		}
	}
}

// Marshal encodes the lock canonically (artifacts sorted, two-space indent,
// trailing newline), so two builds of the same release sign the same bytes.
func (l *Lock) Marshal() ([]byte, error) {
	c := *l
	c.Artifacts = append([]Artifact(nil), l.Artifacts...)
	sort.Slice(c.Artifacts, func(i, j int) bool { return c.Artifacts[i].Key() < c.Artifacts[j].Key() })
	b, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding release lock: %w", err)
	}
	return append(b, '\n'), nil
}

// Find returns the artifacts matching kind and name (empty name matches all).
func (l *Lock) Find(kind Kind, name string) []Artifact {
	var out []Artifact
	for _, a := range l.Artifacts {
		if a.Kind == kind && (name == "" || a.Name == name) {
			out = append(out, a)
		}
	}
	return out
}

// ParsedAdvisories decodes the advisories the lock carries, each held to
// the OSV rules support.ParseAdvisory applies; an ID listed twice is an
// error, since a consumer could not tell which one the signer meant.
func (l *Lock) ParsedAdvisories() ([]*support.Advisory, error) {
	out := make([]*support.Advisory, 0, len(l.Advisories))
	seen := map[string]bool{}
	for i, raw := range l.Advisories {
		a, err := support.ParseAdvisory(raw)
		if err != nil {
			return nil, fmt.Errorf("advisory %d: %w", i, err)
		}
		if seen[a.ID] {
			return nil, fmt.Errorf("advisory %s is listed twice", a.ID)
		}
		seen[a.ID] = true
		out = append(out, a)
	}
	return out, nil
}
