package admission

import (
	"errors"
)

func kyvernoHeader(o Options) string {
	lines := []string{
		"Kyverno ClusterPolicy written by reloader-mirror policy" + releaseSuffix(o) + ",",
		"for Kyverno before 1.17 (deprecated there; use --format kyverno on 1.17 and later).",
		"In " + o.scopeText() + ", Pods and pod-template workloads are admitted only when every",
		"container image is pinned by digest and comes from a mirrored repository, and those",
		"images carry the release's signature and " + attestationText(o) + ", verified by",
		trustText(o.Trust) + ".",
		"Mode: " + kyvernoAction(o) + "; the webhook fails closed (failurePolicy: Fail).",
	}
	if o.Trust.Keyless() {
		lines = append(lines,
			"Keyless: Kyverno verifies the release's Sigstore bundles (type SigstoreBundle) against",
			"the trusted_root.json of its own TUF client, not a root in this policy: start its",
			"admission controller with --enableTuf --tufMirror and --tufRoot naming a TUF repository",
			"that serves the release's trusted root (docs/enforce.md).")
	}
	return comment(append(lines, "Apply: kubectl apply --server-side -f "+KyvernoClusterPolicy.FileName())...)
}

func kyvernoAction(o Options) string {
	if o.Mode == Audit {
		return "Audit"
	}
	return "Enforce"
}

// kyvernoObjects writes one ClusterPolicy: a CEL validate rule with the same
// variables and expressions as the ValidatingAdmissionPolicy, and a
// verifyImages rule for the signature and the SBOM attestation. Autogen is
// off because both rules already name every pod-template kind.
func kyvernoObjects(o Options, tm *material) ([]any, error) {
	var kinds []any
	for _, k := range workloadKinds {
		kinds = append(kinds, k.kind)
	}
	resources := map[string]any{"kinds": kinds, "operations": []any{"CREATE", "UPDATE"}}
	if o.Namespace != "" {
		resources["namespaces"] = []any{o.Namespace}
	} else {
		resources["namespaceSelector"] = o.NamespaceSelector
	}
	match := map[string]any{"any": []any{map[string]any{"resources": resources}}}

	var vars, exprs []any
	for _, v := range celVariables(o) {
		vars = append(vars, map[string]any{"name": v.Name, "expression": v.Expression})
	}
	for _, r := range celRules(o) {
		exprs = append(exprs, map[string]any{"expression": r.Expression, "message": r.Message, "messageExpression": r.MessageExpression})
	}
	var refs []any
	for _, r := range o.Repositories {
		refs = append(refs, r+"@*", r+":*")
	}
	entry, err := kyvernoAttestor(o.Trust, tm)
	if err != nil {
		return nil, err
	}
	verifier, err := kyvernoVerifier(o)
	if err != nil {
		return nil, err
	}
	attestors := []any{map[string]any{"count": 1, "entries": []any{entry}}}
	attestations := []any{map[string]any{"type": o.SBOMPredicateType, "attestors": attestors}}
	if o.ProvenancePredicateType != "" {
		attestations = append(attestations, map[string]any{"type": o.ProvenancePredicateType, "attestors": attestors})
	}
	annotations := o.annotations()
	annotations["pod-policies.kyverno.io/autogen-controllers"] = "none"
	annotations["policies.kyverno.io/title"] = "Reloader: signed, digest-pinned images from the mirror"
	return []any{map[string]any{
		"apiVersion": "kyverno.io/v1",
		"kind":       "ClusterPolicy",
		"metadata":   map[string]any{"name": o.Name + "-images", "annotations": annotations},
		"spec": map[string]any{
			"background": false,
			// Kyverno's default, written out: an unreachable or timed-out
			// webhook must refuse the pod, never admit it unchecked.
			"failurePolicy":         "Fail",
			"webhookTimeoutSeconds": 30,
			"rules": []any{
				map[string]any{
					"name":  "pinned-mirrored-images",
					"match": match,
					"validate": map[string]any{
						"failureAction": kyvernoAction(o),
						"cel":           map[string]any{"variables": vars, "expressions": exprs},
					},
				},
				map[string]any{
					"name":  "release-signature-and-sbom",
					"match": match,
					"verifyImages": []any{map[string]any{
						"type":            verifier,
						"imageReferences": refs,
						"failureAction":   kyvernoAction(o),
						"mutateDigest":    false,
						"verifyDigest":    true,
						"required":        true,
						"attestors":       attestors,
						"attestations":    attestations,
					}},
				},
			},
		},
	}}, nil
}

// kyvernoVerifier is the verifyImages type that reads the release's
// signatures. Keyless releases carry Sigstore bundles as OCI referrers,
// which Kyverno's Cosign verifier never looks at (it would deny every
// keyless image). Key-signed releases carry cosign .sig/.att tags (Cosign),
// bundles as well (publish's default), or bundles only (--signature-format
// bundle): SigstoreBundle, which verifies them with the policy's key.
// Kyverno runs one verifier per rule, so approved releases of which some
// carry only tags and others only bundles have none that admits them all.
func kyvernoVerifier(o Options) (string, error) {
	switch {
	case o.Trust.Keyless():
		return "SigstoreBundle", nil
	case o.NoTags && o.NoBundles:
		return "", errors.New("the approved key-signed releases carry their signatures in different forms, some only as cosign .sig/.att tags, " +
			"some only as Sigstore bundles, and a Kyverno ClusterPolicy reads one of them: use --format kyverno, or approve releases of one form")
	case o.NoTags:
		return "SigstoreBundle", nil
	}
	return "Cosign", nil
}

func kyvernoAttestor(t Trust, tm *material) (map[string]any, error) {
	if !t.Keyless() {
		// Offline, as reloader-mirror verified: no transparency log, no SCT.
		return map[string]any{"keys": map[string]any{
			"publicKeys": t.PublicKeyPEM,
			"rekor":      map[string]any{"ignoreTlog": true},
			"ctlog":      map[string]any{"ignoreSCT": true},
		}}, nil
	}
	if tm == nil {
		return nil, errors.New("keyless trust policy without a trusted root")
	}
	// Kyverno's SigstoreBundle verifier takes the Fulcio CAs, log keys and
	// timestamp authorities from the trusted root of its TUF client and
	// ignores roots, rekor.url/pubkey and ctlog.pubkey here, so the policy
	// carries only the identity and the two waivers: writing the root's
	// material too would suggest to a reader that the policy anchors it.
	kl := map[string]any{"issuer": t.Issuer}
	if t.Identity != "" {
		kl["subject"] = t.Identity
	} else {
		kl["subjectRegExp"] = t.anchoredRegexp()
	}
	// The log requirement follows the user's verification and the root:
	// none when the user waived it or the root is timestamp-only. With
	// ignoreTlog and no ignoreSCT, Kyverno v1.19.1's SigstoreBundle
	// verifier asks sigstore-go for one observer timestamp and verifies no
	// log entry, so a signed timestamp from a timestamp authority of its
	// TUF trusted root is required, as reloader-mirror verify requires it.
	if !t.logRequired(tm) {
		kl["rekor"] = map[string]any{"ignoreTlog": true}
	}
	// No ctlog.ignoreSCT, even with --insecure-ignore-sct: Kyverno
	// v1.19.1's SigstoreBundle verifier checks no SCT either way, and with
	// ignoreSCT it asks sigstore-go for no observer timestamp, which
	// refuses to build the verifier, so every image would be denied.
	return map[string]any{"keyless": kl}, nil
}
