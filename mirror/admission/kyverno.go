package admission

import (
	"errors"
	"strings"
)

func kyvernoHeader(o Options) string {
	return comment(
		"Kyverno ClusterPolicy written by reloader-mirror policy"+releaseSuffix(o)+".",
		"In "+o.scopeText()+", Pods and pod-template workloads are admitted only when every",
		"container image is pinned by digest and comes from a mirrored repository, and those",
		"images carry the release's signature and SPDX SBOM attestation, verified by",
		trustText(o.Trust)+".",
		"Mode: "+kyvernoAction(o)+".",
		"Apply: kubectl apply --server-side -f "+Kyverno.FileName(),
	)
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
	attestors := []any{map[string]any{"count": 1, "entries": []any{entry}}}
	annotations := o.annotations()
	annotations["pod-policies.kyverno.io/autogen-controllers"] = "none"
	annotations["policies.kyverno.io/title"] = "Reloader: signed, digest-pinned images from the mirror"
	return []any{map[string]any{
		"apiVersion": "kyverno.io/v1",
		"kind":       "ClusterPolicy",
		"metadata":   map[string]any{"name": o.Name + "-images", "annotations": annotations},
		"spec": map[string]any{
			"background":            false,
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
						"type":            "Cosign",
						"imageReferences": refs,
						"failureAction":   kyvernoAction(o),
						"mutateDigest":    false,
						"verifyDigest":    true,
						"required":        true,
						"attestors":       attestors,
						"attestations": []any{map[string]any{
							"type":      o.SBOMPredicateType,
							"attestors": attestors,
						}},
					}},
				},
			},
		},
	}}, nil
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
	var roots []string
	for _, ca := range tm.cas {
		roots = append(roots, ca.chainPEM)
	}
	kl := map[string]any{"issuer": t.Issuer, "roots": strings.Join(roots, "")}
	if t.Identity != "" {
		kl["subject"] = t.Identity
	} else {
		kl["subjectRegExp"] = t.anchoredRegexp()
	}
	// The log requirement follows the user's verification, never the root:
	// Generate refused a root without a log unless IgnoreTlog was given.
	rekor := map[string]any{"ignoreTlog": true}
	if !t.IgnoreTlog {
		// Kyverno takes one Rekor key: with several logs in the root the
		// first by log ID is used, and a signature logged to another fails
		// closed.
		rekor = map[string]any{"url": tm.tlogs[0].baseURL, "pubkey": tm.tlogs[0].publicKeyPEM}
	}
	ctlog := map[string]any{}
	if t.IgnoreSCT {
		ctlog["ignoreSCT"] = true
	}
	if len(tm.ctlog) > 0 {
		ctlog["pubkey"] = tm.ctlog[0].publicKeyPEM
	}
	if len(tm.tsas) > 0 {
		ctlog["tsaCertChain"] = tm.tsas[0].chainPEM
	}
	kl["rekor"] = rekor
	if len(ctlog) > 0 {
		kl["ctlog"] = ctlog
	}
	return map[string]any{"keyless": kl}, nil
}
