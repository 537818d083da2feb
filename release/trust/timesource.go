package trust

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	sgverify "github.com/sigstore/sigstore-go/pkg/verify"
)

// A keyless certificate lives minutes; a signature made with it holds only
// if something trusted saw the signature while the certificate was valid.
// That observer is the time source: a transparency log's integrated time
// (Rekor v1's signed entry timestamp) or an RFC 3161 timestamp signed by a
// timestamp authority the trusted root lists (what Rekor v2 entries come
// with, and what a Sigstore without a log gives).
const (
	TimeSourceTimestamp = "rfc3161-timestamp"
	TimeSourceTlog      = "tlog-integrated-time"
)

// timestampOnly reports whether the trusted root makes a signed timestamp
// the time source on its own: it lists a timestamp authority and no
// transparency log, so a log entry could not be verified against it
// anyway. A root that lists a log keeps the log required, as does a policy
// that asks for more than one entry; the user's root says which Sigstore
// they trust, and it is never read from the material being verified
// unless its digest was given (see checkRootDigest).
func (p Policy) timestampOnly() bool {
	tr := p.TrustedRoot
	return tr != nil && p.TransparencyLogThreshold <= 1 && len(tr.RekorLogs()) == 0 && len(tr.TimestampingAuthorities()) > 0
}

// timeOptions are sigstore-go's options for a keyless bundle's time
// source and log. Each branch needs a verified observer timestamp, so a
// bundle with none is refused whatever the policy waives.
//
// The cosign tag format (.sig/.att) keeps needing a log entry under a
// timestamp-only root: offline, cosign judges a certificate without one by
// the current time, which would accept a stolen certificate's signature
// until it expires. Keyless releases here are bundles; a cosign signature
// is refused there as it was before.
func (p Policy) timeOptions() []sgverify.VerifierOption {
	switch {
	case p.InsecureIgnoreTlog:
		return []sgverify.VerifierOption{sgverify.WithObserverTimestamps(1)}
	case p.timestampOnly():
		return []sgverify.VerifierOption{sgverify.WithSignedTimestamps(1)}
	}
	return []sgverify.VerifierOption{sgverify.WithTransparencyLog(max(p.TransparencyLogThreshold, 1)), sgverify.WithObserverTimestamps(1)}
}

// timeSourceOf names the time sources a verified bundle's certificate was
// judged by, sorted and joined by "+"; empty for a key.
func timeSourceOf(vr *sgverify.VerificationResult) string {
	if vr == nil {
		return ""
	}
	var names []string
	for _, ts := range vr.VerifiedTimestamps {
		name := ""
		switch ts.Type {
		case "TimestampAuthority":
			name = TimeSourceTimestamp
		case "Tlog":
			name = TimeSourceTlog
		default:
			continue
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return strings.Join(names, "+")
}

// missingTimeSource explains a keyless bundle's failure when the bundle and
// the trusted root together lack a time source the policy needs, so the
// refusal names it rather than only sigstore-go's threshold; "" when
// nothing is missing (the failure is elsewhere) or the policy is a key's.
func (p Policy) missingTimeSource(b *bundle.Bundle) string {
	if p.Keyless() && p.TrustedRoot != nil && b != nil && b.Bundle != nil {
		return p.timeSourceGaps(len(b.GetVerificationMaterial().GetTimestampVerificationData().GetRfc3161Timestamps()), b.GetVerificationMaterial().GetTlogEntries() != nil)
	}
	return ""
}

func (p Policy) timeSourceGaps(stamps int, logged bool) string {
	tr := p.TrustedRoot
	tsas, logs := len(tr.TimestampingAuthorities()), len(tr.RekorLogs())
	logRequired := !p.InsecureIgnoreTlog && !p.timestampOnly()
	// sigstore-go counts a log entry's time only when it verifies the
	// entry, which it does only when the log is required.
	tsaOK, tlogOK := stamps > 0 && tsas > 0, logged && logs > 0 && logRequired
	logMissing := logRequired && !logged
	if !logMissing && (tsaOK || tlogOK) {
		return ""
	}
	var msgs []string
	if logMissing {
		why := "the trusted root lists a log (only a root without one takes a timestamp alone)"
		if logs == 0 {
			why = "the trusted root lists no timestamp authority to take a timestamp from instead"
		}
		msgs = append(msgs, "the signature has no transparency log entry, which the policy requires because "+why)
	}
	if !tsaOK && !tlogOK {
		var gaps []string
		switch {
		case stamps == 0:
			gaps = append(gaps, "the signature carries no RFC 3161 timestamp")
		default:
			gaps = append(gaps, "its RFC 3161 timestamp cannot be verified: the trusted root lists no timestamp authority")
		}
		switch {
		case logged && logs == 0:
			gaps = append(gaps, "its transparency log entry is from no log the trusted root lists")
		case logged:
			gaps = append(gaps, "its transparency log entry is not verified (--insecure-ignore-tlog)")
		case !logMissing:
			gaps = append(gaps, "it has no transparency log entry")
		}
		msgs = append(msgs, fmt.Sprintf("no verified time source for the short-lived certificate (%s)", strings.Join(gaps, "; ")))
	}
	return strings.Join(msgs, "; ")
}
