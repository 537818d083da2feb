package review

import (
	"fmt"
	"sort"
	"strings"

	"github.com/reloader-dev/reloader/release"
)

// SSDFFramework names the practices the map refers to.
const SSDFFramework = "NIST SP 800-218 Secure Software Development Framework (SSDF) v1.1"

// SSDFNotice is said wherever the map is shown: reviewers are asked for the
// CISA attestation form, and this map must not be mistaken for it.
const SSDFNotice = "Supporting material, not a legal attestation: it maps evidence carried by this release to SSDF practices. " +
	"The CISA Secure Software Development Attestation form is signed by the software producer; this page signs nothing on its behalf."

// SSDFMap is the release's evidence mapped to SSDF practices.
type SSDFMap struct {
	Framework string         `json:"framework"`
	Notice    string         `json:"notice"`
	Practices []SSDFPractice `json:"practices"`
}

// SSDFPractice is one practice with the evidence of this release for it.
type SSDFPractice struct {
	// ID is the practice's identifier in SP 800-218, e.g. "PS.2".
	ID       string     `json:"id"`
	Title    string     `json:"title"`
	Evidence []Evidence `json:"evidence"`
}

// Kinds of evidence.
const (
	EvidenceLock        = "lock entry"
	EvidenceAttestation = "attestation"
	EvidenceGate        = "gate result"
	EvidenceReview      = "review"
	EvidenceTest        = "test"
)

// Evidence is one thing a reviewer can check: an entry of the signed lock
// or an attestation by digest, the gate's signed result, a finding of this
// review, or the test (package and name) that fails when the property
// breaks.
type Evidence struct {
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
	Digest string `json:"digest,omitempty"`
}

// ssdfPractices is the map, one row per practice in SP 800-218's order:
// each row's evidence function returns what this release carries for the
// practice, and a practice with none is left out rather than claimed. Tests
// are cited only beside evidence of the release itself: a test alone says
// what the code does, not what this release is.
var ssdfPractices = []struct {
	id, title string
	evidence  func(facts) []Evidence
}{
	{"PO.3", "Implement supporting toolchains", func(f facts) []Evidence {
		ev := f.provenance(func(a release.Artifact, s provSummary) string {
			return fmt.Sprintf("SLSA provenance of %s: built by %s with %s", label(a), s.Builder, s.GoVersion)
		})
		return withTests(ev, "cmd/mirror TestProvenanceOfARealReleaseIsSignedCheckedAndRequired", "cmd/release TestRebuildReproducesTheControllerAndNamesWhatDiffers")
	}},
	{"PS.1", "Protect all forms of code from unauthorized access and tampering", func(f facts) []Evidence {
		if f.lock.Commit == "" {
			return nil
		}
		ev := []Evidence{{Kind: EvidenceLock, Detail: fmt.Sprintf("built from commit %s of %s, as the signed lock states and every provenance must", f.lock.Commit, f.lock.Source)}}
		return withTests(ev, "release/trust TestACertificateIssuedForAnotherCommitOrTagIsRefused", "cmd/release TestRebuildRefusesAnUnsignedLockAndForgedProvenanceBeforeBuilding")
	}},
	{"PS.2", "Provide a mechanism for verifying software release integrity", func(f facts) []Evidence {
		var ev []Evidence
		for _, a := range f.kind(release.KindImageIndex, release.KindChart) {
			ev = append(ev, Evidence{Kind: EvidenceLock, Detail: label(a) + ", signed by the release signer", Digest: a.Digest})
		}
		if len(ev) == 0 {
			return nil
		}
		if f.signed {
			ev = append(ev, Evidence{Kind: EvidenceAttestation, Detail: "this review, signed as " + PredicateType + " on each image index"})
		}
		return withTests(ev, "release/trust TestReleaseVerifiesEverySignatureTheLockLists", "cmd/mirror TestForgedKeylessArchiveIsRefusedBeforeAnyPush",
			"cmd/mirror TestTheSignedReviewOfARealReleaseVerifiesAndATamperedOneDoesNot")
	}},
	{"PS.3", "Archive and protect each software release", func(f facts) []Evidence {
		var ev []Evidence
		for _, a := range f.kind(release.KindImage) {
			ev = append(ev, Evidence{Kind: EvidenceLock, Detail: label(a) + ", by digest in the signed lock", Digest: a.Digest})
		}
		for _, a := range f.kind(release.KindSBOM) {
			ev = append(ev, Evidence{Kind: EvidenceLock, Detail: fmt.Sprintf("SBOM (%s) of %s", a.ArtifactType, label(a)), Digest: a.Digest})
		}
		if len(ev) == 0 {
			return nil
		}
		return withTests(ev, "test/airgap TestAirGapDrill")
	}},
	{"PW.4", "Reuse existing, well-secured software", func(f facts) []Evidence {
		if len(f.review.Components) == 0 {
			return nil
		}
		ev := []Evidence{{Kind: EvidenceReview, Detail: fmt.Sprintf("%d components, each with its version, identifier, supplier and licence from the signed SBOMs; %d licence findings",
			len(f.review.Components), len(f.review.LicenceFindings))}}
		if f.lock.Scanned() {
			ev = append(ev, Evidence{Kind: EvidenceGate, Detail: "every component scanned for known vulnerabilities before release (RV.1)"})
		}
		return withTests(ev, "review TestReviewListsEveryComponentWithLicenceSupplierAndWhereItWasFound")
	}},
	{"PW.6", "Configure the compilation and build processes to improve executable security", func(f facts) []Evidence {
		ev := f.provenance(func(a release.Artifact, s provSummary) string {
			return fmt.Sprintf("build of %s recorded in its provenance (%s, environment and flags read from the binary)", label(a), s.GoVersion)
		})
		return withTests(ev, "cmd/release TestRebuildReproducesTheControllerAndNamesWhatDiffers")
	}},
	{"PW.9", "Configure software to have secure settings by default", func(f facts) []Evidence {
		var ev []Evidence
		for _, a := range f.kind(release.KindChart) {
			ev = append(ev, Evidence{Kind: EvidenceLock, Detail: "Helm chart " + a.Name + " whose defaults run the controller under the restricted Pod Security Standard", Digest: a.Digest})
		}
		return withTests(ev, "charts TestDefaultPodPassesRestrictedPodSecurity")
	}},
	{"RV.1", "Identify and confirm vulnerabilities on an ongoing basis", func(f facts) []Evidence {
		if !f.lock.Scanned() {
			return nil
		}
		sc := f.lock.Scan
		ev := []Evidence{{Kind: EvidenceGate, Detail: fmt.Sprintf("%s %s scanned every image before anything was pushed: %s", sc.Scanner, sc.ScannerVersion, countsText(f.review.Vulnerabilities.Scan)), Digest: sc.DBDigest}}
		if n := len(f.lock.Advisories); n > 0 {
			ev = append(ev, Evidence{Kind: EvidenceLock, Detail: fmt.Sprintf("%d security advisories of the project, signed with the lock", n)})
		}
		return withTests(ev, "release/gate TestGateFailsOnHighFindingWithFix", "publish/pipeline TestAFailedGateLeavesNothingInTheRegistry", "cmd/mirror TestTheScanOfARealReleaseIsCheckedWhereItEnters")
	}},
	{"RV.2", "Assess, prioritize, and remediate vulnerabilities", func(f facts) []Evidence {
		if !f.lock.Scanned() {
			return nil
		}
		ev := []Evidence{{Kind: EvidenceGate, Detail: fmt.Sprintf("the release gate passed; %d exceptions, each with a justification and an expiry, signed in the lock", len(f.lock.Scan.Exceptions))}}
		return withTests(ev, "release/gate TestGateFailsWhenTheSameExceptionHasExpired", "cmd/mirror TestAnAdvisoryCarriedByANewerReleaseRefusesTheOlderOneAtImport")
	}},
}

// provSummary is what the map cites of a provenance.
type provSummary struct{ Builder, GoVersion string }

// facts is what the map is made from: only what the signed lock, the SBOMs
// and the verified provenance say, so the pipeline and a reviewer's
// recomputation arrive at the same map.
type facts struct {
	lock   *release.Lock
	review *Review
	prov   map[string]provSummary
	signed bool
}

// kind is the lock's artifacts of the kinds given, in the lock's key order.
func (f facts) kind(kinds ...release.Kind) []release.Artifact {
	var out []release.Artifact
	for _, a := range f.lock.Artifacts {
		for _, k := range kinds {
			if a.Kind == k {
				out = append(out, a)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out
}

// provenance is one attestation evidence per image index with provenance.
func (f facts) provenance(detail func(release.Artifact, provSummary) string) []Evidence {
	var ev []Evidence
	for _, a := range f.kind(release.KindImageIndex) {
		if s, ok := f.prov[a.Digest]; ok {
			ev = append(ev, Evidence{Kind: EvidenceAttestation, Detail: detail(a, s), Digest: a.Digest})
		}
	}
	return ev
}

func label(a release.Artifact) string {
	switch a.Kind {
	case release.KindImageIndex:
		return "image index " + a.Name
	case release.KindImage:
		return "image " + a.Name + " " + a.Platform
	case release.KindChart:
		return "chart " + a.Name
	}
	return a.Name + " " + a.Platform
}

// withTests adds the tests to evidence of the release, and nothing to none.
func withTests(ev []Evidence, tests ...string) []Evidence {
	if len(ev) == 0 {
		return nil
	}
	for _, t := range tests {
		ev = append(ev, Evidence{Kind: EvidenceTest, Detail: t})
	}
	return ev
}

func countsText(s *ScanRecord) string {
	if s == nil || len(s.Counts) == 0 {
		return "no findings"
	}
	parts := make([]string, len(s.Counts))
	for i, c := range s.Counts {
		parts[i] = fmt.Sprintf("%d %s", c.Count, c.Severity)
	}
	return strings.Join(parts, ", ")
}

func ssdfMap(in Input, r *Review) SSDFMap {
	f := facts{lock: in.Lock, review: r, prov: map[string]provSummary{}, signed: in.Signed}
	for d, s := range in.Provenance {
		f.prov[d] = provSummary{Builder: s.Builder, GoVersion: s.GoVersion}
	}
	m := SSDFMap{Framework: SSDFFramework, Notice: SSDFNotice, Practices: []SSDFPractice{}}
	for _, p := range ssdfPractices {
		if ev := p.evidence(f); len(ev) > 0 {
			m.Practices = append(m.Practices, SSDFPractice{ID: p.id, Title: p.title, Evidence: ev})
		}
	}
	return m
}
