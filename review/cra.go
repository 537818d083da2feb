package review

import (
	"fmt"
	"time"

	"github.com/reloader-dev/reloader/release"
)

// CRAFramework names the requirements the CRA map refers to.
const CRAFramework = "Regulation (EU) 2024/2847 (Cyber Resilience Act), Annex I Part II: vulnerability handling requirements"

// CRANotice is said wherever the CRA map is shown, as SSDFNotice is.
const CRANotice = "Supporting material, not a conformity assessment or an EU declaration of conformity: it maps evidence carried by this release to the items of Annex I Part II. " +
	"Whether the manufacturer meets them is for the manufacturer's own conformity assessment; an item without evidence in this release is not listed."

// CRAMap is the release's evidence mapped to the CRA's Annex I Part II.
type CRAMap struct {
	Framework string    `json:"framework"`
	Notice    string    `json:"notice"`
	Items     []CRAItem `json:"items"`
}

// CRAItem is one numbered item of Annex I Part II with this release's
// evidence for it.
type CRAItem struct {
	// ID is "(1)" to "(8)", the item's number in Annex I Part II.
	ID       string     `json:"id"`
	Title    string     `json:"title"`
	Evidence []Evidence `json:"evidence"`
}

// craItems is the map, one row per item in the Annex's order, made like
// ssdfPractices from the signed lock and the SBOMs only.
var craItems = []struct {
	id, title string
	evidence  func(facts) []Evidence
}{
	{"(1)", "Identify and document vulnerabilities and components, including by an SBOM in a commonly used, machine-readable format", func(f facts) []Evidence {
		var ev []Evidence
		for _, a := range f.kind(release.KindSBOM) {
			ev = append(ev, Evidence{Kind: EvidenceLock, Detail: fmt.Sprintf("SBOM (%s) of %s, signed and attested", a.ArtifactType, label(a)), Digest: a.Digest})
		}
		if len(ev) > 0 {
			verdict := "passes"
			if !f.review.ProfilePassed() {
				verdict = "fails"
			}
			ev = append(ev, Evidence{Kind: EvidenceReview, Detail: fmt.Sprintf("the SBOMs checked against %s: %s", f.review.profile(), verdict)})
		}
		return withTests(ev, "cmd/mirror TestCLIReview")
	}},
	{"(2)", "Address and remediate vulnerabilities without delay, including by providing security updates", func(f facts) []Evidence {
		var ev []Evidence
		if t := f.lock.Support; t != nil {
			for _, s := range t.Series {
				ev = append(ev, Evidence{Kind: EvidenceLock, Detail: fmt.Sprintf("series %s receives security updates until %s (support table, signed in the lock)", s.Series, s.EndOfSupport.Format(time.DateOnly))})
			}
		}
		if f.lock.Scanned() {
			ev = append(ev, Evidence{Kind: EvidenceGate, Detail: fmt.Sprintf("no HIGH or CRITICAL finding released unremediated without a dated exception; %d exceptions", len(f.lock.Scan.Exceptions))})
		}
		return withTests(ev, "release/gate TestGateFailsWhenTheSameExceptionHasExpired")
	}},
	{"(3)", "Apply effective and regular tests and reviews of the security of the product", func(f facts) []Evidence {
		if !f.lock.Scanned() {
			return nil
		}
		sc := f.lock.Scan
		ev := []Evidence{{Kind: EvidenceGate, Detail: fmt.Sprintf("%s %s scanned every image before anything was pushed: %s", sc.Scanner, sc.ScannerVersion, countsText(f.review.Vulnerabilities.Scan)), Digest: sc.DBDigest}}
		return withTests(ev, "cmd/mirror TestTheScanOfARealReleaseIsCheckedWhereItEnters")
	}},
	{"(4)", "Share and publicly disclose information about fixed vulnerabilities", func(f facts) []Evidence {
		if n := len(f.lock.Advisories); n > 0 {
			return withTests([]Evidence{{Kind: EvidenceLock, Detail: fmt.Sprintf("%d security advisories (OSV), signed with the lock and published with the versions page", n)}},
				"cmd/mirror TestAnAdvisoryCarriedByANewerReleaseRefusesTheOlderOneAtImport")
		}
		return nil
	}},
	{"(5)", "Put in place and enforce a policy on coordinated vulnerability disclosure", func(f facts) []Evidence {
		if f.review.SecurityTxt == "" {
			return nil
		}
		return withTests([]Evidence{{Kind: EvidenceReview, Detail: "the SBOMs name the producer's security.txt (RFC 9116), which states the disclosure policy: " + f.review.SecurityTxt}},
			"publish/pipeline TestAReleasePublishesTheEndOfSupportAndASecurityTxt")
	}},
	{"(6)", "Facilitate the sharing of information about potential vulnerabilities, including a contact address for reporting them", func(f facts) []Evidence {
		if f.review.SecurityContact == "" {
			return nil
		}
		return withTests([]Evidence{{Kind: EvidenceReview, Detail: "the SBOMs name the producer's security contact: " + f.review.SecurityContact}},
			"release/security TestTheDeclaredContactIsTheOneSecurityMDStatesAndMakesAnRFC9116File")
	}},
	{"(7)", "Provide mechanisms to securely distribute updates", func(f facts) []Evidence {
		var ev []Evidence
		for _, a := range f.kind(release.KindImageIndex, release.KindChart) {
			ev = append(ev, Evidence{Kind: EvidenceLock, Detail: label(a) + ", by digest, signed by the release signer", Digest: a.Digest})
		}
		return withTests(ev, "release/trust TestReleaseVerifiesEverySignatureTheLockLists", "cmd/mirror TestForgedKeylessArchiveIsRefusedBeforeAnyPush")
	}},
	{"(8)", "Disseminate security updates without delay, free of charge, with advisory messages", func(f facts) []Evidence {
		if f.lock.Support == nil || len(f.lock.Advisories) == 0 && len(f.lock.Support.Series) == 0 {
			return nil
		}
		ev := []Evidence{{Kind: EvidenceLock, Detail: fmt.Sprintf("the signed lock carries the support table (%d series) and %d advisories, so a newer release tells a disconnected site which older ones are affected", len(f.lock.Support.Series), len(f.lock.Advisories))}}
		return withTests(ev, "cmd/mirror TestAnAdvisoryCarriedByANewerReleaseRefusesTheOlderOneAtImport")
	}},
}

func craMap(in Input, r *Review) CRAMap {
	f := facts{lock: in.Lock, review: r, signed: in.Signed}
	m := CRAMap{Framework: CRAFramework, Notice: CRANotice, Items: []CRAItem{}}
	for _, it := range craItems {
		if ev := it.evidence(f); len(ev) > 0 {
			m.Items = append(m.Items, CRAItem{ID: it.id, Title: it.title, Evidence: ev})
		}
	}
	return m
}
