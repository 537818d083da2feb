package csaf_test

import (
	"fmt"
	"regexp"
	"time"

	gocsaf "github.com/gocsaf/csaf/v3/csaf"
)

// mandatoryOffline runs the CSAF 2.0 mandatory tests (§6.1) that concern
// what our documents contain, as the specification words them, and returns
// the failures. gocsaf offers the mandatory tests only by calling the
// external csaf-validator-service (csaf.RemoteValidatorOptions, preset
// "mandatory"), which is not available offline; these are not all of them.
func mandatoryOffline(adv *gocsaf.Advisory) []string {
	var fails []string
	fail := func(test, format string, args ...any) { fails = append(fails, test+": "+fmt.Sprintf(format, args...)) }
	defined := map[gocsaf.ProductID]int{}
	define := func(fp *gocsaf.FullProductName) {
		if fp != nil && fp.ProductID != nil {
			defined[*fp.ProductID]++
		}
	}
	if t := adv.ProductTree; t != nil {
		var walk func(gocsaf.Branches)
		walk = func(bs gocsaf.Branches) {
			for _, b := range bs {
				define(b.Product)
				walk(b.Branches)
				if b.Product != nil && *b.Category == gocsaf.CSAFBranchCategoryProductVersion && regexp.MustCompile(`[<>]|\bvers:`).MatchString(*b.Name) {
					fail("6.1.31", "product_version %q holds a range", *b.Name) // Version Range in Product Version
				}
				if b.Product != nil && *b.Category == gocsaf.CSAFBranchCategoryProductVersionRange && !regexp.MustCompile(`^vers:[a-z\.\-\+][a-z0-9\.\-\+]*/.+`).MatchString(*b.Name) {
					fail("6.1.xx", "product_version_range %q is not vers", *b.Name)
				}
			}
		}
		walk(t.Branches)
		if t.FullProductNames != nil {
			for _, fp := range *t.FullProductNames {
				define(fp)
			}
		}
		if t.RelationShips != nil {
			for _, r := range *t.RelationShips {
				define(r.FullProductName)
				for _, ref := range []*gocsaf.ProductID{r.ProductReference, r.RelatesToProductReference} {
					if defined[*ref] == 0 && !definedLater(t, *ref) {
						fail("6.1.1", "relationship refers to undefined product %s", *ref) // Missing Definition of Product ID
					}
				}
				if *r.ProductReference == *r.RelatesToProductReference {
					fail("6.1.3", "relationship of %s to itself", *r.ProductReference) // Circular Definition
				}
			}
		}
	}
	for id, n := range defined {
		if n > 1 {
			fail("6.1.2", "product %s defined %d times", id, n) // Multiple Definition of Product ID
		}
	}
	d := adv.Document
	tr := d.Tracking
	last := tr.RevisionHistory[len(tr.RevisionHistory)-1]
	if *last.Number != *tr.Version {
		fail("6.1.16", "latest revision %s, document version %s", *last.Number, *tr.Version) // Latest Document Version
	}
	if *tr.Status == gocsaf.CSAFTrackingStatusFinal && *tr.Version == "0" {
		fail("6.1.17", "final document with version 0") // Document Status Draft
	}
	cur, _ := time.Parse(time.RFC3339, *tr.CurrentReleaseDate)
	for _, r := range tr.RevisionHistory {
		if rd, _ := time.Parse(time.RFC3339, *r.Date); rd.After(cur) {
			fail("6.1.14", "revision %s dated after the current release date", *r.Number) // Sorted Revision History / dates
		}
	}
	for i, v := range adv.Vulnerabilities {
		for _, ids := range productRefs(v) {
			for _, id := range ids {
				if defined[id] == 0 {
					fail("6.1.1", "vulnerability %d refers to undefined product %s", i, id)
				}
			}
		}
	}
	fails = append(fails, profileTests(adv)...)
	return fails
}

// definedLater: a relationship may refer to a product another
// relationship defines.
func definedLater(t *gocsaf.ProductTree, id gocsaf.ProductID) bool {
	for _, r := range *t.RelationShips {
		if r.FullProductName != nil && *r.FullProductName.ProductID == id {
			return true
		}
	}
	return false
}

// profileTests are §6.1.27, the tests of the document's profile.
func profileTests(adv *gocsaf.Advisory) []string {
	var fails []string
	fail := func(test, format string, args ...any) { fails = append(fails, test+": "+fmt.Sprintf(format, args...)) }
	cat := string(*adv.Document.Category)
	if cat != "csaf_security_advisory" && cat != "csaf_vex" {
		return nil
	}
	notes := false
	for _, n := range adv.Document.Notes {
		switch *n.NoteCategory {
		case gocsaf.CSAFNoteCategoryDescription, gocsaf.CSAFNoteCategoryDetails, gocsaf.CSAFNoteCategoryGeneral, gocsaf.CSAFNoteCategorySummary:
			notes = true
		}
	}
	if !notes {
		fail("6.1.27.1", "no document note of category description, details, general or summary")
	}
	external := false
	for _, r := range adv.Document.References {
		external = external || r.ReferenceCategory == nil || *r.ReferenceCategory == "external"
	}
	if !external {
		fail("6.1.27.2", "no external document reference")
	}
	if len(adv.Vulnerabilities) == 0 {
		fail("6.1.27.3/6.1.27.11", "no vulnerabilities")
	}
	if adv.ProductTree == nil {
		fail("6.1.27.4", "no product tree")
	}
	for i, v := range adv.Vulnerabilities {
		if cat == "csaf_security_advisory" && len(v.Notes) == 0 {
			fail("6.1.27.5", "vulnerability %d has no notes", i)
		}
		ps := v.ProductStatus
		if ps == nil {
			fail("6.1.27.6", "vulnerability %d has no product status", i)
			continue
		}
		if cat == "csaf_vex" {
			if ps.Fixed == nil && ps.KnownAffected == nil && ps.KnownNotAffected == nil && ps.UnderInvestigation == nil {
				fail("6.1.27.7", "vulnerability %d has none of fixed, known_affected, known_not_affected, under_investigation", i)
			}
			if v.CVE == nil && len(v.IDs) == 0 {
				fail("6.1.27.8", "vulnerability %d has neither cve nor ids", i)
			}
			if ps.KnownNotAffected != nil && !covered(*ps.KnownNotAffected, flagged(v), impacts(v)) {
				fail("6.1.27.9", "vulnerability %d: a known_not_affected product has no flag or impact statement", i)
			}
			if ps.KnownAffected != nil && !covered(*ps.KnownAffected, remediated(v)) {
				fail("6.1.27.10", "vulnerability %d: a known_affected product has no remediation", i)
			}
		}
	}
	return fails
}

func productRefs(v *gocsaf.Vulnerability) [][]gocsaf.ProductID {
	var out [][]gocsaf.ProductID
	add := func(ps *gocsaf.Products) {
		if ps != nil {
			var ids []gocsaf.ProductID
			for _, p := range *ps {
				ids = append(ids, *p)
			}
			out = append(out, ids)
		}
	}
	if s := v.ProductStatus; s != nil {
		for _, ps := range []*gocsaf.Products{s.FirstAffected, s.FirstFixed, s.Fixed, s.KnownAffected, s.KnownNotAffected, s.LastAffected, s.Recommended, s.UnderInvestigation} {
			add(ps)
		}
	}
	for _, r := range v.Remediations {
		add(r.ProductIds)
	}
	for _, f := range v.Flags {
		add(f.ProductIds)
	}
	for _, th := range v.Threats {
		add(th.ProductIds)
	}
	return out
}

func set(ps *gocsaf.Products, into map[gocsaf.ProductID]bool) {
	if ps != nil {
		for _, p := range *ps {
			into[*p] = true
		}
	}
}

func flagged(v *gocsaf.Vulnerability) map[gocsaf.ProductID]bool {
	m := map[gocsaf.ProductID]bool{}
	for _, f := range v.Flags {
		set(f.ProductIds, m)
	}
	return m
}

func impacts(v *gocsaf.Vulnerability) map[gocsaf.ProductID]bool {
	m := map[gocsaf.ProductID]bool{}
	for _, th := range v.Threats {
		if *th.Category == gocsaf.CSAFThreatCategoryImpact {
			set(th.ProductIds, m)
		}
	}
	return m
}

func remediated(v *gocsaf.Vulnerability) map[gocsaf.ProductID]bool {
	m := map[gocsaf.ProductID]bool{}
	for _, r := range v.Remediations {
		set(r.ProductIds, m)
	}
	return m
}

func covered(ps gocsaf.Products, by ...map[gocsaf.ProductID]bool) bool {
	for _, p := range ps {
		ok := false
		for _, m := range by {
			ok = ok || m[*p]
		}
		if !ok {
			return false
		}
	}
	return true
}
