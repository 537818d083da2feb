package admission

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// referenceRE is an image reference as Pins holds it: a repository with a
// tag, a digest or both. It also keeps the value safe in a CEL string
// literal.
var referenceRE = regexp.MustCompile(`^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-]+[a-z0-9]+)*)+(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$`)

// checkPins refuses a pin that is not a reference, or that pins to anything
// but an approved digest in a mirrored repository: the mutating policy must
// only ever write what the validating ones admit.
func (o *Options) checkPins() error {
	for from, to := range o.Pins {
		if !referenceRE.MatchString(from) {
			return fmt.Errorf("pinned reference %q is not an image reference", from)
		}
		repo, digest, ok := strings.Cut(to, "@")
		if !ok || !slices.Contains(o.Repositories, repo) || !slices.Contains(o.Digests, digest) {
			return fmt.Errorf("%s is pinned to %s, which is not an approved digest in a mirrored repository", from, to)
		}
	}
	return nil
}

// celPodPath is the JSON pointer of the pod spec, found by kind as
// celPodSpec finds the spec itself.
const celPodPath = `object.kind == 'Pod' ? '/spec' : ` +
	`(object.kind == 'CronJob' ? '/spec/jobTemplate/spec/template/spec' : '/spec/template/spec')`

// celPinPatches is one JSON patch per container of the list whose image is
// a key of variables.pins: exact references only, so an unknown tag of a
// release repository is left for the validating policy to deny rather than
// guessed.
func celPinPatches(list string) string {
	field := `variables.podSpec.` + list
	patches := field + `.transformList(i, c, has(c.image) && c.image in variables.pins, ` +
		`JSONPatch{op: 'replace', path: variables.podPath + '/` + list + `/' + string(i) + '/image', value: variables.pins[c.image]})`
	if list == "containers" {
		return patches
	}
	return `(has(` + field + `) ? ` + patches + ` : [])`
}

func mapHeader(o Options) string {
	keys := make([]string, 0, len(o.Pins))
	for k := range o.Pins {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	lines := []string{
		"MutatingAdmissionPolicy written by reloader-mirror policy" + releaseSuffix(o) + " (Kubernetes >= 1.36).",
		"In " + o.scopeText() + ", every container, init container and ephemeral container",
		"image of Pods and pod-template workloads that names the release by one of these",
		"references is rewritten to the release's image at the mirror, pinned by digest:",
	}
	for _, k := range keys {
		lines = append(lines, "  "+k+" -> "+o.Pins[k])
	}
	return comment(append(lines,
		"Any other image is left alone: an unknown tag is not guessed. Apply it with the",
		"ValidatingAdmissionPolicy (--format vap), which then admits the pinned images and",
		"denies anything else. Mode: mutations are not audited; the binding always rewrites.",
		"Apply: kubectl apply --server-side -f "+Mutating.FileName(),
	)...)
}

// mapObjects writes the MutatingAdmissionPolicy and its binding. The
// policy matches the same kinds as the ValidatingAdmissionPolicy, and runs
// before it (mutating admission precedes validating admission).
func mapObjects(o Options) ([]any, error) {
	if len(o.Pins) == 0 {
		return nil, fmt.Errorf("no references to pin: the mutating policy is made from a release's lock")
	}
	keys := make([]string, 0, len(o.Pins))
	for k := range o.Pins {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	entries := make([]string, len(keys))
	for i, k := range keys {
		// Both sides were checked against referenceRE and the mirrored
		// repositories, so quoting cannot be escaped.
		entries[i] = strconv.Quote(k) + ": " + strconv.Quote(o.Pins[k])
	}
	fail := admissionv1.Fail
	equivalent := admissionv1.Equivalent
	policy := &admissionv1.MutatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name + "-pin-images", Annotations: o.annotations()},
		Spec: admissionv1.MutatingAdmissionPolicySpec{
			FailurePolicy:    &fail,
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: workloadRules(), MatchPolicy: &equivalent},
			Variables: []admissionv1.Variable{
				{Name: "pins", Expression: "{" + strings.Join(entries, ", ") + "}"},
				{Name: "podSpec", Expression: celPodSpec},
				{Name: "podPath", Expression: celPodPath},
			},
			Mutations: []admissionv1.Mutation{{
				PatchType: admissionv1.PatchTypeJSONPatch,
				JSONPatch: &admissionv1.JSONPatch{Expression: celPinPatches("containers") + " + " +
					celPinPatches("initContainers") + " + " + celPinPatches("ephemeralContainers")},
			}},
			// Another mutation (a webhook's) may set an image after this
			// one ran; rewriting again is idempotent.
			ReinvocationPolicy: admissionv1.IfNeededReinvocationPolicy,
		},
	}
	binding := &admissionv1.MutatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name + "-pin-images", Annotations: o.annotations()},
		Spec: admissionv1.MutatingAdmissionPolicyBindingSpec{
			PolicyName:     policy.Name,
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: namespaceSelector(o)},
		},
	}
	return cleanAll(policy, binding)
}
