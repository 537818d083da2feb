package scancheck

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reloader-dev/reloader/release"
)

// ExpiredStatement is a VEX statement the release attests (an exception
// the gate applied: not_affected, or an accepted risk) that is past its
// date: the release's OpenVEX and CSAF VEX documents say it held until
// Expires and no longer. A scanner still reading that attestation would
// keep suppressing the finding; the check reports it instead.
type ExpiredStatement struct {
	Vulnerability string `json:"vulnerability"`
	Package       string `json:"package"`
	// Kind is the exception's kind, accepted_risk or not_affected.
	Kind string `json:"kind"`
	// Expires is the date (00:00 UTC) from which it no longer holds.
	Expires string `json:"expires"`
	// Images are the image indexes the statement is attested on, as
	// name@digest.
	Images []string `json:"images"`
}

// expiredStatements judges each exception of the lock's scan record at now:
// one rule for the scan check and the VEX statements made from the same
// exceptions. An unreadable expiry is a refusal without a statement.
func expiredStatements(l *release.Lock, now time.Time, accept []string) (expired []ExpiredStatement, refusals, warnings []string) {
	images := attestedImages(l)
	for _, e := range l.Scan.Exceptions {
		exp, err := time.Parse(time.DateOnly, e.Expires)
		switch {
		case err != nil:
			refusals = append(refusals, fmt.Sprintf("exception %s in %s has an unreadable expiry %q", e.ID, e.Package, e.Expires))
		case !now.Before(exp):
			kind := e.Kind
			if kind == "" {
				kind = "accepted_risk"
			}
			expired = append(expired, ExpiredStatement{Vulnerability: e.ID, Package: e.Package, Kind: kind, Expires: e.Expires, Images: images})
			msg := fmt.Sprintf("exception %s in %s expired %s (00:00 UTC): the release shipped it as accepted until then, and it is accepted no longer; its VEX statement (%s) on %s is past its date",
				e.ID, e.Package, e.Expires, kind, strings.Join(images, ", "))
			if slices.Contains(accept, e.ID) {
				warnings = append(warnings, msg+" (accepted by --accept-expired-exception "+e.ID+")")
				continue
			}
			refusals = append(refusals, msg+"; --accept-expired-exception "+e.ID+" accepts it")
		}
	}
	return expired, refusals, warnings
}

// attestedImages are the image indexes of the lock as name@digest: the
// release attests its VEX document on each, and on their platform images.
func attestedImages(l *release.Lock) []string {
	out := []string{}
	for _, a := range l.Artifacts {
		if a.Kind == release.KindImageIndex {
			out = append(out, a.Name+"@"+a.Digest)
		}
	}
	return out
}
