// Package provenance writes and reads the SLSA v1 build provenance of
// Reloader's images: which builder built an image, from which source
// repository and commit, with which Go toolchain, build parameters and
// resolved dependencies (Go modules with their go.sum hashes, the UBI base
// by digest). The predicate uses the in-toto attestation Go types, so what
// is written is what the SLSA v1 schema and `cosign verify-attestation
// --type slsaprovenance1` expect.
package provenance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/reloader-dev/reloader/internal/strict"
	"sort"
	"strconv"
	"strings"
	"time"

	slsa "github.com/in-toto/attestation/go/predicates/provenance/v1"
	ita "github.com/in-toto/attestation/go/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
)

const (
	// PredicateType is the SLSA v1 provenance predicate type.
	PredicateType = "https://slsa.dev/provenance/v1"
	// StatementType is the in-toto statement type the pipeline signs.
	StatementType = "https://in-toto.io/Statement/v1"
	// BuildType says how to read the build definition: a reproducible Go
	// build of the controller packed into an OCI image by reloader-release.
	BuildType = "https://reloader.dev/release/buildtypes/go-oci-image/v1"
	// LocalBuilder is the builder id of releases not built by the release
	// workflow (key-signed, on someone's machine).
	LocalBuilder = "reloader-release local"

	// maxStatementBytes bounds what Parse reads; a real one is ~30 KiB.
	maxStatementBytes = 4 << 20
)

// Module is one Go module linked into the binary.
type Module struct {
	Path, Version string
	// Sum is the go.sum hash ("h1:<base64>").
	Sum string
}

// Image is one base or platform image by digest.
type Image struct {
	// Ref is the repository (no tag or digest).
	Ref    string
	Digest string
}

// Build describes one build: a platform image or an index of them.
type Build struct {
	BuilderID string
	// Source is the repository URL, Commit the full commit id.
	Source, Commit string
	Version        string
	// MainPackage is the controller's main package, e.g. "./cmd/reloader".
	MainPackage string
	Variant     string
	// Platforms are "os/arch[/variant]": one for an image, all for an index.
	Platforms []string
	// GoVersion is the toolchain ("go1.26.8"); LDFlags the -ldflags value.
	GoVersion, LDFlags string
	// Env is the build environment that matters (CGO_ENABLED, GOOS, ...).
	Env map[string]string
	// Flags are the go build flags besides -ldflags (build.FlagsOf); nil
	// records those of releases before they were taken from the binary.
	Flags []string
	// SourceDateEpoch is every timestamp in the image.
	SourceDateEpoch time.Time
	Modules         []Module
	// Base is the UBI base index and, for a platform image, the platform's
	// base image; nil for the scratch variant.
	Base, BasePlatform *Image
	// Images are the platform images an index lists.
	Images []Image
}

func gitURI(source, commit string) string { return "git+" + source + "@" + commit }

// Predicate returns the SLSA v1 provenance predicate (JSON) of b.
func Predicate(b Build) ([]byte, error) {
	if b.BuilderID == "" || b.Source == "" || b.Commit == "" || b.GoVersion == "" {
		return nil, errors.New("provenance: builder id, source, commit and Go version are required")
	}
	env := map[string]any{}
	for k, v := range b.Env {
		env[k] = v
	}
	flags := []any{"-trimpath", "-buildvcs=false"}
	if b.Flags != nil {
		flags = flags[:0]
		for _, f := range b.Flags {
			flags = append(flags, f)
		}
	}
	platforms := make([]any, 0, len(b.Platforms))
	for _, p := range b.Platforms {
		platforms = append(platforms, p)
	}
	ext, err := structpb.NewStruct(map[string]any{
		"source":      map[string]any{"uri": b.Source, "commit": b.Commit},
		"version":     b.Version,
		"mainPackage": b.MainPackage,
		"variant":     b.Variant,
		"platforms":   platforms,
	})
	if err != nil {
		return nil, fmt.Errorf("provenance: external parameters: %w", err)
	}
	internal, err := structpb.NewStruct(map[string]any{
		"goVersion":       b.GoVersion,
		"ldflags":         b.LDFlags,
		"env":             env,
		"flags":           flags,
		"sourceDateEpoch": strconv.FormatInt(b.SourceDateEpoch.Unix(), 10),
	})
	if err != nil {
		return nil, fmt.Errorf("provenance: internal parameters: %w", err)
	}
	deps := []*ita.ResourceDescriptor{
		{Name: "source", Uri: gitURI(b.Source, b.Commit), Digest: map[string]string{"gitCommit": b.Commit}},
		{Name: "go-toolchain", Uri: "https://go.dev/dl/" + b.GoVersion},
	}
	for _, img := range []*Image{b.Base, b.BasePlatform} {
		if img != nil {
			deps = append(deps, ociDescriptor("base-image", *img))
		}
	}
	for _, img := range b.Images {
		deps = append(deps, ociDescriptor("platform-image", img))
	}
	mods := append([]Module(nil), b.Modules...)
	sort.Slice(mods, func(i, j int) bool { return mods[i].Path < mods[j].Path })
	for _, m := range mods {
		rd := &ita.ResourceDescriptor{Name: m.Path, Uri: "pkg:golang/" + m.Path + "@" + m.Version}
		if m.Sum != "" {
			rd.Digest = map[string]string{"goModuleH1": strings.TrimPrefix(m.Sum, "h1:")}
		}
		deps = append(deps, rd)
	}
	p := &slsa.Provenance{
		BuildDefinition: &slsa.BuildDefinition{BuildType: BuildType, ExternalParameters: ext, InternalParameters: internal, ResolvedDependencies: deps},
		RunDetails:      &slsa.RunDetails{Builder: &slsa.Builder{Id: b.BuilderID, Version: map[string]string{"go": b.GoVersion}}},
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("provenance: %w", err)
	}
	raw, err := protojson.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("provenance: encoding: %w", err)
	}
	// protojson's spacing is deliberately unstable; the release's files
	// should not be.
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return nil, fmt.Errorf("provenance: encoding: %w", err)
	}
	return canonical(buf.Bytes())
}

// canonical re-encodes JSON with sorted keys and no insignificant spaces.
func canonical(b []byte) ([]byte, error) {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func ociDescriptor(name string, img Image) *ita.ResourceDescriptor {
	return &ita.ResourceDescriptor{Name: name, Uri: "oci://" + img.Ref + "@" + img.Digest,
		Digest: map[string]string{"sha256": strings.TrimPrefix(img.Digest, "sha256:")}}
}

// Statement is a parsed, validated SLSA v1 provenance statement.
type Statement struct {
	// Subjects are "sha256:<hex>" digests the statement is about.
	Subjects   []string
	Provenance *slsa.Provenance
}

// Summary is what a person checks first.
type Summary struct {
	Builder   string `json:"builder"`
	Source    string `json:"source"`
	Commit    string `json:"commit"`
	GoVersion string `json:"goVersion"`
}

// Parse reads an in-toto statement carrying SLSA v1 provenance, strictly:
// a wrong statement or predicate type, an invalid predicate or a subject
// without a sha256 digest is an error saying which.
func Parse(statement []byte) (*Statement, error) {
	if len(statement) > maxStatementBytes {
		return nil, fmt.Errorf("provenance statement is %d bytes, more than the %d accepted", len(statement), maxStatementBytes)
	}
	if err := strict.NoDuplicateKeys(statement, "the provenance statement"); err != nil {
		return nil, err
	}
	var st ita.Statement
	if err := protojson.Unmarshal(statement, &st); err != nil {
		return nil, fmt.Errorf("decoding the provenance statement: %w", err)
	}
	if err := st.Validate(); err != nil {
		return nil, fmt.Errorf("provenance statement: %w", err)
	}
	if st.GetPredicateType() != PredicateType {
		return nil, fmt.Errorf("provenance statement: predicate type %q, want %q", st.GetPredicateType(), PredicateType)
	}
	out := &Statement{}
	for i, s := range st.GetSubject() {
		d := s.GetDigest()["sha256"]
		if len(d) != 64 {
			return nil, fmt.Errorf("provenance statement: subject %d has no sha256 digest", i)
		}
		out.Subjects = append(out.Subjects, "sha256:"+strings.ToLower(d))
	}
	raw, err := protojson.Marshal(st.GetPredicate())
	if err != nil {
		return nil, fmt.Errorf("provenance predicate: %w", err)
	}
	var p slsa.Provenance
	if err := protojson.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("provenance predicate: %w", err)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("provenance predicate: %w", err)
	}
	out.Provenance = &p
	return out, nil
}

// Source returns the source repository and commit the provenance names:
// the resolved dependency named "source", which must agree with the
// external parameters.
func (s *Statement) Source() (repo, commit string, err error) {
	ext := s.Provenance.GetBuildDefinition().GetExternalParameters().GetFields()["source"].GetStructValue().GetFields()
	repo, commit = ext["uri"].GetStringValue(), ext["commit"].GetStringValue()
	for _, d := range s.Provenance.GetBuildDefinition().GetResolvedDependencies() {
		if d.GetName() != "source" {
			continue
		}
		if d.GetUri() != gitURI(repo, commit) || d.GetDigest()["gitCommit"] != commit {
			return "", "", fmt.Errorf("provenance: the source dependency %s (%s) disagrees with the parameters (%s at %s)", d.GetUri(), d.GetDigest()["gitCommit"], repo, commit)
		}
		return repo, commit, nil
	}
	return "", "", errors.New("provenance: names no source dependency")
}

// Summary returns the builder, source, commit and Go toolchain.
func (s *Statement) Summary() Summary {
	repo, commit, _ := s.Source()
	return Summary{Builder: s.Provenance.GetRunDetails().GetBuilder().GetId(), Source: repo, Commit: commit,
		GoVersion: s.Provenance.GetBuildDefinition().GetInternalParameters().GetFields()["goVersion"].GetStringValue()}
}

// Flags returns the go build flags the provenance records (internal
// parameter "flags"), in order.
func (s *Statement) Flags() []string {
	var out []string
	for _, v := range s.Provenance.GetBuildDefinition().GetInternalParameters().GetFields()["flags"].GetListValue().GetValues() {
		out = append(out, v.GetStringValue())
	}
	return out
}

// Param returns an internal parameter as a string ("ldflags", ...).
func (s *Statement) Param(name string) string {
	return s.Provenance.GetBuildDefinition().GetInternalParameters().GetFields()[name].GetStringValue()
}
