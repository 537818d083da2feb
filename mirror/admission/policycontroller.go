package admission

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/reloader-dev/reloader/release"
)

// pcIncludeLabel is the namespace label policy-controller requires before it
// looks at a namespace at all.
const pcIncludeLabel = "policy.sigstore.dev/include"

func pcHeader(o Options) string {
	ns := o.Namespace
	if ns == "" {
		ns = "<each namespace the selector picks>"
	}
	lines := []string{
		"sigstore policy-controller policies written by reloader-mirror policy" + releaseSuffix(o) + ".",
		"Images from the mirrored repositories are admitted only with the release's signature",
		"and its SPDX SBOM attestation (" + o.SBOMPredicateType + "), verified by " + trustText(o.Trust) + ".",
		fmt.Sprintf("Only the approved digests (%d, of %s) are matched. policy-controller denies an image", len(o.Digests), approvedText(o)),
		"no policy matches (another digest, an older release) only with no-match-policy: deny in the",
		"ConfigMap config-policy-controller of its namespace (it ships warn): set it, or the pin does not hold.",
		"Mode: " + pcMode(o) + ". policy-controller checks only namespaces labelled " + pcIncludeLabel + "=true:",
		"  kubectl label namespace " + ns + " " + pcIncludeLabel + "=true",
		"Apply: kubectl apply --server-side -f " + PolicyController.FileName(),
	}
	return comment(lines...)
}

// approvedText names the approved releases, or says none was named.
func approvedText(o Options) string {
	if len(o.Approved) == 0 {
		return "the approved releases"
	}
	return "Reloader " + strings.Join(o.Approved, ", ")
}

func trustText(t Trust) string {
	if !t.Keyless() {
		return "the release's public key"
	}
	id := t.Identity
	if id == "" {
		id = "~" + t.anchoredRegexp()
	}
	return "keyless identity " + id + " from " + t.Issuer + " under the trusted root"
}

func pcMode(o Options) string {
	if o.Mode == Audit {
		return "warn"
	}
	return "enforce"
}

// pcObjects writes two ClusterImagePolicies over the same images, because
// policy-controller admits an image when any one authority of a policy is
// satisfied but only when every matching policy is: one requires the
// signature, the other the SBOM attestation. A keyless trust policy adds the
// TrustRoot both refer to.
func pcObjects(o Options, tm *material) ([]any, error) {
	if !o.Trust.Keyless() && o.NoTags {
		// checkOptsFromAuthority: "when using the new bundle format, the
		// authority must be keyless"; a key authority reads .sig/.att tags
		// only, so the policy would deny the release itself.
		return nil, errors.New("policy-controller v0.13.1 verifies Sigstore bundles only for keyless authorities (sigstore/policy-controller#1958), " +
			"and an approved key-signed release carries its signatures only as bundles, without the cosign .sig/.att tags it reads: " +
			"its policy would deny the release; use --format kyverno or kyverno-clusterpolicy, or publish with --signature-format both")
	}
	var objs []any
	trustRoot := o.Name + "-trust-root"
	if tm != nil {
		objs = append(objs, pcTrustRoot(o, trustRoot, tm))
	}
	images := pcImages(o)
	policy := func(suffix string, auth map[string]any) map[string]any {
		return map[string]any{
			"apiVersion": "policy.sigstore.dev/v1beta1",
			"kind":       "ClusterImagePolicy",
			"metadata":   map[string]any{"name": o.Name + "-" + suffix, "annotations": o.annotations()},
			"spec": map[string]any{
				"mode":        pcMode(o),
				"images":      images,
				"authorities": []any{auth},
			},
		}
	}
	sig := pcAuthority(o, "release-signature", trustRoot, tm)
	if o.Trust.Keyless() {
		// A keyless release's image signature is a Sigstore bundle holding
		// a DSSE statement of this predicate type (publish/sign, whose predicate release.PredicateCosignSign names), as cosign
		// v3 signs. policy-controller v0.13 verifies such bundles only as
		// attestations: as a signature it answers "bundle support for image
		// signatures is not yet implemented" and denies every image.
		sig["attestations"] = []any{map[string]any{"name": "signature", "predicateType": release.PredicateCosignSign}}
	}
	sbom := pcAuthority(o, "release-sbom", trustRoot, tm)
	sbom["attestations"] = []any{map[string]any{"name": "spdx-sbom", "predicateType": o.SBOMPredicateType}}
	objs = append(objs, policy("signature", sig), policy("sbom", sbom))
	return objs, nil
}

// pcImages are the policies' globs: each approved digest in each mirrored
// repository, and nothing else. policy-controller has no list of allowed
// digests, and a policy admits what it does not match; only an image that
// no policy matches is denied, by the no-match-policy "deny" the header
// asks for. So the globs are the pin: an older release still signed at the
// mirror, or anything pushed there by digest, matches none of them. The
// globs hold no wildcard: a digest is hex, and a tag matches none of them
// (policy-tester resolves a tag it is given, and a "repo:*" glob once
// admitted the release's tag that way).
func pcImages(o Options) []any {
	images := make([]any, 0, len(o.Repositories)*len(o.Digests))
	for _, r := range o.Repositories {
		for _, d := range o.Digests {
			images = append(images, map[string]any{"glob": r + "@" + d})
		}
	}
	return images
}

func pcAuthority(o Options, name, trustRoot string, tm *material) map[string]any {
	a := map[string]any{"name": name}
	if !o.Trust.Keyless() {
		// No ctlog: the release's key signatures are verified offline, as
		// reloader-mirror verified them, with no transparency log to reach.
		a["key"] = map[string]any{"data": o.Trust.PublicKeyPEM, "hashAlgorithm": "sha256"}
		return a
	}
	id := map[string]any{"issuer": o.Trust.Issuer}
	if o.Trust.Identity != "" {
		id["subject"] = o.Trust.Identity
	} else {
		id["subjectRegExp"] = o.Trust.anchoredRegexp()
	}
	kl := map[string]any{"trustRootRef": trustRoot, "identities": []any{id}}
	// Keyless releases are signed as Sigstore bundles attached as OCI
	// referrers (publish/sign, whose predicate release.PredicateCosignSign names); without this policy-controller looks only
	// for cosign .sig/.att tags and finds no signature on any release image.
	a["signatureFormat"] = "bundle"
	if o.Trust.IgnoreSCT {
		kl["insecureIgnoreSCT"] = true
	}
	a["keyless"] = kl
	// Keyless certificates live minutes; the signing time comes from the
	// transparency log or a timestamp authority of the same trusted root.
	// policy-controller skips the log check whenever an authority names a
	// timestamp authority, so the TSA is named only where no log entry is
	// required: the user waived the log, or the root is timestamp-only.
	// There policy-controller v0.13.1 requires a signed timestamp from the
	// root's TSA for every bundle (UseSignedTimestamps, which cosign
	// passes to sigstore-go as WithSignedTimestamps(1)), as reloader-mirror
	// verify does; with the log required its entry's time is the source.
	if o.Trust.logRequired(tm) {
		a["ctlog"] = map[string]any{"trustRootRef": trustRoot}
	} else if len(tm.tsas) > 0 {
		a["rfc3161timestamp"] = map[string]any{"trustRootRef": trustRoot}
	}
	return a
}

func pcTrustRoot(o Options, name string, tm *material) map[string]any {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	cas := func(in []authority) []any {
		out := []any{}
		for _, a := range in {
			out = append(out, map[string]any{
				"subject":   map[string]any{"organization": a.organization, "commonName": a.commonName},
				"uri":       a.uri,
				"certChain": b64(a.chainPEM),
			})
		}
		return out
	}
	logs := func(in []tlog) []any {
		out := []any{}
		for _, l := range in {
			out = append(out, map[string]any{"baseURL": l.baseURL, "hashAlgorithm": l.hashAlgorithm, "publicKey": b64(l.publicKeyPEM)})
		}
		return out
	}
	keys := map[string]any{"certificateAuthorities": cas(tm.cas)}
	if len(tm.tlogs) > 0 {
		keys["tLogs"] = logs(tm.tlogs)
	}
	if len(tm.ctlog) > 0 {
		keys["ctLogs"] = logs(tm.ctlog)
	}
	if len(tm.tsas) > 0 {
		keys["timestampAuthorities"] = cas(tm.tsas)
	}
	return map[string]any{
		"apiVersion": "policy.sigstore.dev/v1alpha1",
		"kind":       "TrustRoot",
		"metadata":   map[string]any{"name": name, "annotations": o.annotations()},
		"spec":       map[string]any{"sigstoreKeys": keys},
	}
}
