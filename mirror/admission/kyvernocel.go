package admission

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// The Kyverno ImageValidatingPolicy (policies.kyverno.io/v1, GA in Kyverno
// 1.17): the ClusterPolicy's rules in Kyverno's CEL policy type.

// ivpolAttestor is the name the validations call the release's signer by.
const ivpolAttestor = "release"

// attestationText names the attestations the Kyverno policies require.
func attestationText(o Options) string {
	if o.ProvenancePredicateType == "" {
		return "SPDX SBOM attestation"
	}
	return "SPDX SBOM and SLSA provenance attestations"
}

func ivpolHeader(o Options) string {
	lines := []string{
		"Kyverno ImageValidatingPolicy written by reloader-mirror policy" + releaseSuffix(o) + ",",
		"for Kyverno 1.17 and later (for older Kyverno: --format kyverno-clusterpolicy).",
		"In " + o.scopeText() + ", Pods and pod-template workloads are admitted only when every",
		"container image is pinned by digest, comes from a mirrored repository, is an image of",
		"an approved release (" + strings.Join(o.Approved, ", ") + "), and carries the release's signature",
	}
	if o.Trust.Keyless() {
		lines = append(lines, "and "+attestationText(o)+", verified by "+trustText(o.Trust)+".")
	} else {
		lines = append(lines, "verified by "+trustText(o.Trust)+". Its attestations are not checked here: Kyverno",
			"v1.19.1 verifies a key-signed attestation only with a transparency-log entry",
			"(kyverno/kyverno#17109); they were verified with the lock whose digests this policy",
			"admits. To check them at admission too, use --format kyverno-clusterpolicy or policy-controller.")
	}
	lines = append(lines, "Mode: "+kyvernoAction(o)+"; the webhook fails closed (failurePolicy: Fail).")
	switch {
	case o.Trust.Keyless() && o.KyvernoTUF.Mirror == "":
		lines = append(lines,
			"Keyless: the trusted root is in the policy (trustedRoot), but Kyverno still starts its",
			"Sigstore TUF client before it verifies, here from the public Sigstore repository:",
			"air-gapped, give --kyverno-tuf-mirror and --kyverno-tuf-root (docs/enforce.md).")
	case o.Trust.Keyless():
		lines = append(lines,
			"Keyless: the trusted root is in the policy (trustedRoot); Kyverno starts its Sigstore",
			"TUF client from "+o.KyvernoTUF.Mirror+" before it verifies.")
	}
	return comment(append(lines, "Apply: kubectl apply --server-side -f "+Kyverno.FileName())...)
}

// ivpolObjects writes one ImageValidatingPolicy. Its validations run in
// order and the first that fails is the denial: signatures and attestations
// first, so an image pushed into the mirror is denied for what it lacks,
// then the digest and repository rules shared with the
// ValidatingAdmissionPolicy. It matches every pod-template kind itself, so
// Kyverno generates no per-controller copies.
func ivpolObjects(o Options, tm *material) ([]any, error) {
	resources := []any{}
	for _, r := range workloadRules() {
		var plain []any
		for _, res := range r.Resources {
			// The VAP covers kubectl debug's subresource; the
			// ClusterPolicy never matched it either.
			if !strings.Contains(res, "/") {
				plain = append(plain, res)
			}
		}
		resources = append(resources, map[string]any{
			"apiGroups": r.APIGroups, "apiVersions": r.APIVersions,
			"operations": []any{"CREATE", "UPDATE"}, "resources": plain,
		})
	}
	var refs []any
	for _, r := range o.Repositories {
		refs = append(refs, map[string]any{"glob": r + "@*"}, map[string]any{"glob": r + ":*"})
	}
	cosign, err := ivpolCosign(o.Trust, tm)
	if err == nil && o.Trust.Keyless() {
		err = addTUF(cosign, o.KyvernoTUF)
	}
	if err != nil {
		return nil, err
	}
	validations := []any{ivpolCheck(`verifyImageSignatures(i, [attestors.`+ivpolAttestor+`]) > 0`,
		"not signed by "+trustText(o.Trust))}
	attestations := []any{}
	for _, a := range ivpolAttestations(o) {
		attestations = append(attestations, map[string]any{"name": a.name, "intoto": map[string]any{"type": a.predicateType}})
		validations = append(validations, ivpolCheck(`verifyAttestationSignatures(i, attestations.`+a.name+`, [attestors.`+ivpolAttestor+`]) > 0`,
			"no "+a.predicateType+" attestation signed by "+trustText(o.Trust)))
	}
	var vars []any
	for _, v := range celVariables(o) {
		vars = append(vars, map[string]any{"name": v.Name, "expression": v.Expression})
	}
	for _, r := range celRules(o) {
		validations = append(validations, map[string]any{"expression": r.Expression, "message": r.Message, "messageExpression": r.MessageExpression})
	}
	actions := []any{"Deny"}
	if o.Mode == Audit {
		actions = []any{"Audit", "Warn"}
	}
	var images []any
	for _, list := range []string{"containers", "initContainers", "ephemeralContainers"} {
		// Kyverno's own extractors know no ReplicationController; these,
		// by the name of its defaults, replace them for every kind.
		images = append(images, map[string]any{"name": list, "expression": "(" + celPodSpec + ")." + "?" + list + ".orValue([]).map(c, c.image)"})
	}
	spec := map[string]any{
		// An unreachable or timed-out webhook refuses the pod.
		"failurePolicy":        "Fail",
		"webhookConfiguration": map[string]any{"timeoutSeconds": 30},
		"validationActions":    actions,
		// Admission only: background scans need the reports controller
		// and would re-verify every running pod's images.
		"evaluation": map[string]any{"background": map[string]any{"enabled": false}},
		"matchConstraints": map[string]any{
			"resourceRules":     resources,
			"namespaceSelector": namespaceSelector(o),
			"matchPolicy":       "Equivalent",
		},
		"matchImageReferences": refs,
		"images":               images,
		"validationConfigurations": map[string]any{
			"mutateDigest": false, "verifyDigest": true, "required": true,
		},
		"attestors":   []any{map[string]any{"name": ivpolAttestor, "cosign": cosign}},
		"variables":   vars,
		"validations": validations,
	}
	if len(attestations) > 0 {
		spec["attestations"] = attestations
	}
	return []any{map[string]any{
		"apiVersion": "policies.kyverno.io/v1",
		"kind":       "ImageValidatingPolicy",
		"metadata":   map[string]any{"name": o.Name + "-images", "annotations": o.annotations()},
		"spec":       spec,
	}}, nil
}

type ivpolAttestation struct{ name, predicateType string }

// ivpolAttestations are the attestations the ImageValidatingPolicy
// verifies. None for a key-signed release: Kyverno v1.19.1 verifies a
// key-signed attestation only with a transparency-log entry, which an
// offline key-signed release has none of, ignoring insecureIgnoreTlog on
// that path (kyverno/kyverno#17109, fix open in #17217), so requiring one
// would deny the release itself. Its attestations were verified by
// reloader-mirror before the policy was written, and the policy admits
// only the digests of that verified lock; the ClusterPolicy still checks
// them at admission.
func ivpolAttestations(o Options) []ivpolAttestation {
	if !o.Trust.Keyless() {
		return nil
	}
	out := []ivpolAttestation{{"sbom", o.SBOMPredicateType}}
	if o.ProvenancePredicateType != "" {
		out = append(out, ivpolAttestation{"provenance", o.ProvenancePredicateType})
	}
	return out
}

// ivpolCheck is a validation that every image matched by the policy's
// image references passes check (over i), naming those that do not.
func ivpolCheck(check, message string) map[string]any {
	all := `(images.containers + images.initContainers + images.ephemeralContainers)`
	return map[string]any{
		"expression": all + `.all(i, ` + check + `)`,
		"message":    message,
		// The message may hold an identity regexp: quoted, it stays a literal.
		"messageExpression": strconv.Quote(message+": ") + ` + ` + all + `.filter(i, !(` + check + `)).join(', ')`,
	}
}

// ivpolCosign is the cosign attestor: the release's key, or its keyless
// identity anchored by the trusted root written into the policy. Kyverno
// reads the release's signatures in either form (cosign .sig/.att tags, or
// Sigstore bundles as OCI referrers), whichever the image carries.
func ivpolCosign(t Trust, tm *material) (map[string]any, error) {
	if !t.Keyless() {
		// Offline, as reloader-mirror verified: no transparency log, no
		// SCT; with both waived Kyverno needs no Sigstore service at all.
		return map[string]any{
			"key":   map[string]any{"data": t.PublicKeyPEM},
			"ctlog": map[string]any{"insecureIgnoreTlog": true, "insecureIgnoreSCT": true},
		}, nil
	}
	if tm == nil {
		return nil, errors.New("keyless trust policy without a trusted root")
	}
	if len(tm.tlogs) == 0 {
		// initTUFAndFetch: every keyless verification reads the Rekor keys
		// of the trusted root Kyverno's TUF client serves, before the
		// policy's own root is looked at, and fails without one; the
		// site's TUF repository serves the root it verified with.
		return nil, errors.New("the ImageValidatingPolicy of Kyverno v1.19.1 cannot verify under a trusted root without a transparency log: " +
			"before every keyless verification it reads Rekor public keys from the trusted root its TUF client serves, even with the log ignored, " +
			"and denies the image when there are none (\"no Rekor public keys found in trusted root\"); " +
			"use --format kyverno-clusterpolicy, which takes the timestamp authority's timestamp, or policy-controller")
	}
	id := map[string]any{"issuer": t.Issuer}
	if t.Identity != "" {
		id["subject"] = t.Identity
	} else {
		id["subjectRegExp"] = t.anchoredRegexp()
	}
	c := map[string]any{
		"keyless":     map[string]any{"identities": []any{id}},
		"trustedRoot": map[string]any{"value": string(t.TrustedRootJSON)},
	}
	// The log requirement follows the user's verification: waived, Kyverno
	// v1.19.1 verifies a Sigstore bundle with a signed timestamp of a
	// timestamp authority of this root required (ivpol's
	// shouldUseSignedTimestamps: the log ignored, a bundle found, trusted
	// material given). A timestamp-only root was refused above.
	ctlog := map[string]any{}
	if !t.logRequired(tm) {
		ctlog["insecureIgnoreTlog"] = true
	} else if t.IgnoreSCT {
		// Kyverno wants the log's URL once ctlog is given; bundles are
		// verified against the root's log keys, offline.
		if tm.tlogs[0].baseURL == "" {
			return nil, errors.New("trusted root: its transparency log has no base URL, which Kyverno requires")
		}
		ctlog["url"] = tm.tlogs[0].baseURL
	}
	if t.IgnoreSCT {
		ctlog["insecureIgnoreSCT"] = true
	}
	if len(ctlog) > 0 {
		c["ctlog"] = ctlog
	}
	return c, nil
}

// addTUF points a keyless attestor at the site's TUF repository. Kyverno
// v1.19.1 initialises its TUF client before every keyless verification,
// even with the trusted root inline, and fails the verification (denying
// the image) when that repository cannot be reached.
func addTUF(cosign map[string]any, t TUF) error {
	if t.Mirror == "" && len(t.RootJSON) == 0 {
		return nil
	}
	u, err := url.Parse(t.Mirror)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("kyverno TUF mirror %q: want an http(s) URL", t.Mirror)
	}
	if !json.Valid(t.RootJSON) {
		return fmt.Errorf("kyverno TUF mirror %s: its root.json is missing or not JSON", t.Mirror)
	}
	cosign["tuf"] = map[string]any{"mirror": t.Mirror, "root": map[string]any{"data": base64.StdEncoding.EncodeToString(t.RootJSON)}}
	return nil
}
