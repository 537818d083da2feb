package review

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/reloader-dev/reloader/internal/strict"

	"github.com/github/go-spdx/v2/spdxexp"
)

// LicencePolicyAPIVersion identifies the licence policy file format.
const LicencePolicyAPIVersion = "reloader.dev/licence-policy/v1"

const maxLicencePolicyBytes = 1 << 20

// defaultLicencePolicy is the policy the review applies when none is given.
// It ships inside the binary so that a reviewer can run the review from any
// directory, with no source tree at hand.
//
//go:embed licence-policy.yaml
var defaultLicencePolicy []byte

// LicencePolicy says which licences a reviewer accepts without a second look
// (Allow) and which they never accept (Deny). A licence on neither list, an
// expression that is not valid SPDX, and a component with no licence at all
// (NOASSERTION) are findings too: silence is not consent.
type LicencePolicy struct {
	APIVersion string   `json:"apiVersion"`
	Allow      []string `json:"allow"`
	Deny       []string `json:"deny,omitempty"`
	// OSPackages, when set, replaces Allow and Deny for the packages of the
	// base image's operating system (RPM, Debian and Alpine packages): those
	// are separate programs shipped beside ours, not linked into our
	// binaries, so a copyleft licence there does not reach our code the way
	// it would from a Go module. Nil judges them by Allow and Deny.
	OSPackages *LicenceLists `json:"osPackages,omitempty"`
}

// LicenceLists are the allow and deny lists for one kind of component.
type LicenceLists struct {
	Allow []string `json:"allow"`
	Deny  []string `json:"deny,omitempty"`
}

// DefaultLicencePolicyYAML returns the licence policy built into the
// binary, as written (with its comments), for a reviewer to read or copy.
func DefaultLicencePolicyYAML() []byte {
	return bytes.Clone(defaultLicencePolicy)
}

// DefaultLicencePolicy parses the licence policy built into the binary.
func DefaultLicencePolicy() (*LicencePolicy, error) {
	p, err := ParseLicencePolicy(defaultLicencePolicy)
	if err != nil {
		return nil, fmt.Errorf("the built-in licence policy: %w", err)
	}
	return p, nil
}

// Verdict is what the licence policy makes of one component's licence.
type Verdict string

const (
	// VerdictAllowed: the allow list satisfies the expression.
	VerdictAllowed Verdict = "allowed"
	// VerdictDenied: the expression can only be met with a denied licence.
	VerdictDenied Verdict = "denied"
	// VerdictNotAllowed: valid SPDX, but not satisfied by the allow list.
	VerdictNotAllowed Verdict = "not-allowed"
	// VerdictInvalid: not a valid SPDX expression (an unknown licence).
	VerdictInvalid Verdict = "unknown"
	// VerdictNone: the SBOM asserts no licence (NOASSERTION or empty).
	VerdictNone Verdict = "noassertion"
)

// Finding reports whether the verdict needs a reviewer's attention.
func (v Verdict) Finding() bool { return v != VerdictAllowed }

// ReadLicencePolicy reads and parses the licence policy at path.
func ReadLicencePolicy(path string) (*LicencePolicy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the licence policy: %w", err)
	}
	p, err := ParseLicencePolicy(data)
	if err != nil {
		return nil, fmt.Errorf("licence policy %s: %w", path, err)
	}
	return p, nil
}

// ParseLicencePolicy decodes a licence policy (YAML or JSON) strictly and
// normalises its identifiers; an identifier that is not an SPDX licence, or
// one that is both allowed and denied, is an error.
func ParseLicencePolicy(data []byte) (*LicencePolicy, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("licence policy is empty")
	}
	var p LicencePolicy
	if err := strict.YAML(data, "licence policy", maxLicencePolicyBytes, &p); err != nil {
		return nil, err
	}
	var errs []error
	if p.APIVersion != LicencePolicyAPIVersion {
		errs = append(errs, fmt.Errorf("apiVersion is %q, want %q", p.APIVersion, LicencePolicyAPIVersion))
	}
	if len(p.Allow) == 0 {
		errs = append(errs, errors.New("allow lists no licence"))
	}
	errs = append(errs, normaliseLists("", &p.Allow, &p.Deny)...)
	if o := p.OSPackages; o != nil {
		if len(o.Allow) == 0 {
			errs = append(errs, errors.New("osPackages.allow lists no licence"))
		}
		errs = append(errs, normaliseLists("osPackages.", &o.Allow, &o.Deny)...)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("invalid licence policy: %w", errors.Join(errs...))
	}
	return &p, nil
}

// normaliseLists normalises the identifiers of an allow and a deny list in
// place; prefix names the lists in errors ("osPackages.").
func normaliseLists(prefix string, allow, deny *[]string) []error {
	var errs []error
	norm := func(list string, ids []string) []string {
		out := make([]string, 0, len(ids))
		for _, id := range ids {
			ok, n := spdxexp.ActiveLicense(strings.TrimSpace(id))
			if !ok {
				errs = append(errs, fmt.Errorf("%s%s: %q is not an SPDX licence identifier", prefix, list, id))
				continue
			}
			out = append(out, n)
		}
		return out
	}
	*allow, *deny = norm("allow", *allow), norm("deny", *deny)
	allowed := map[string]bool{}
	for _, id := range *allow {
		allowed[id] = true
	}
	for _, id := range *deny {
		if allowed[id] {
			errs = append(errs, fmt.Errorf("%s%s is both allowed and denied", prefix, id))
		}
	}
	return errs
}

// NormaliseLicence returns the canonical form of an SPDX expression
// ("apache-2.0" -> "Apache-2.0") and false when it is not valid SPDX. An
// empty or NOASSERTION licence normalises to "".
func NormaliseLicence(expr string) (string, bool) {
	expr = licenceOrEmpty(expr)
	if expr == "" {
		return "", true
	}
	norm, invalid := spdxexp.ValidateAndNormalizeLicensesWithOptions([]string{expr}, spdxexp.ValidateLicensesOptions{})
	if len(invalid) > 0 || len(norm) != 1 {
		return expr, false
	}
	return norm[0], true
}

// Judge normalises a licence and decides it against the policy's allow and
// deny lists (those for components linked into our binaries).
func (p *LicencePolicy) Judge(raw string) (string, Verdict) {
	return judge(raw, p.Allow, p.Deny)
}

// JudgeComponent decides a component's declared licence: a package of the
// base image's operating system by OSPackages when the policy has them,
// everything else by Allow and Deny.
func (p *LicencePolicy) JudgeComponent(c Component) (string, Verdict) {
	if o := p.OSPackages; o != nil && IsOSPackage(c.PURL) {
		return judge(c.LicenceDeclared, o.Allow, o.Deny)
	}
	return p.Judge(c.LicenceDeclared)
}

// IsOSPackage reports whether a PURL names a package of an operating system
// distribution (RPM, Debian, Alpine), as opposed to a module linked into a
// binary.
func IsOSPackage(purl string) bool {
	for _, t := range []string{"pkg:rpm/", "pkg:deb/", "pkg:apk/"} {
		if strings.HasPrefix(purl, t) {
			return true
		}
	}
	return false
}

func judge(raw string, allow, deny []string) (string, Verdict) {
	norm, ok := NormaliseLicence(raw)
	switch {
	case !ok:
		return norm, VerdictInvalid
	case norm == "":
		return noAssertion, VerdictNone
	}
	if sat, err := spdxexp.Satisfies(norm, allow); err == nil && sat {
		return norm, VerdictAllowed
	}
	ids, err := spdxexp.ExtractLicenses(norm)
	if err != nil {
		return norm, VerdictInvalid
	}
	// "MIT OR GPL-3.0-only" is not denied: the MIT choice is open. Denied
	// means no choice avoids a denied licence, i.e. every licence outside
	// the deny list together does not satisfy the expression.
	denied := map[string]bool{}
	for _, d := range deny {
		denied[d] = true
	}
	var rest []string
	hit := false
	for _, id := range ids {
		if denied[id] {
			hit = true
			continue
		}
		rest = append(rest, id)
	}
	if hit {
		if sat, err := spdxexp.Satisfies(norm, rest); len(rest) == 0 || err != nil || !sat {
			return norm, VerdictDenied
		}
	}
	return norm, VerdictNotAllowed
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
