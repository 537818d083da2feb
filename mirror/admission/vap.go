package admission

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The CEL shared by the ValidatingAdmissionPolicy and the Kyverno policy. The
// pod spec is found by kind, so one policy covers Pods and every pod-template
// workload; init and ephemeral containers count, since each runs an image.
const (
	celPodSpec = `object.kind == 'Pod' ? object.spec : ` +
		`(object.kind == 'CronJob' ? object.spec.jobTemplate.spec.template.spec : object.spec.template.spec)`
	celContainers = `variables.podSpec.containers` +
		` + (has(variables.podSpec.initContainers) ? variables.podSpec.initContainers : [])` +
		` + (has(variables.podSpec.ephemeralContainers) ? variables.podSpec.ephemeralContainers : [])`
	celUnpinned = `variables.containers.filter(c, !c.image.matches('@sha256:[a-f0-9]{64}$'))`
	celForeign  = `variables.containers.filter(c, !variables.repositories.exists(r, c.image.startsWith(r + '@') || c.image.startsWith(r + ':')))`
	// celUnapproved: images of the mirrored repositories, pinned, whose
	// digest belongs to no approved release (an old image still in the
	// registry, or anything pushed there by digest). exists over a list
	// literal keeps the cost linear in the digests and within the
	// apiserver's estimate.
	celUnapproved = `variables.containers.filter(c, c.image.matches('@sha256:[a-f0-9]{64}$') && ` +
		`variables.repositories.exists(r, c.image.startsWith(r + '@') || c.image.startsWith(r + ':')) && ` +
		`!variables.digests.exists(d, c.image.endsWith('@' + d)))`
	// celOffenders names each offending container with its image.
	celOffenders = `.map(c, 'container ' + c.name + ' image ' + c.image).join(', ')`
)

// celVariable is a named CEL expression, in both dialects' shape.
type celVariable struct{ Name, Expression string }

func celVariables(o Options) []celVariable {
	quoted := make([]string, len(o.Repositories))
	for i, r := range o.Repositories {
		// Repositories are checked against repositoryRE, so quoting cannot
		// be escaped; strconv adds the quotes CEL reads.
		quoted[i] = strconv.Quote(r)
	}
	digests := make([]string, len(o.Digests))
	for i, d := range o.Digests {
		digests[i] = strconv.Quote(d) // checked against digestRE
	}
	return []celVariable{
		{"repositories", "[" + strings.Join(quoted, ", ") + "]"},
		{"digests", "[" + strings.Join(digests, ", ") + "]"},
		{"podSpec", celPodSpec},
		{"containers", celContainers},
		{"unpinned", celUnpinned},
		{"foreign", celForeign},
		{"unapproved", celUnapproved},
	}
}

// celRule is one validation with its message.
type celRule struct{ Expression, Message, MessageExpression string }

func celRules(o Options) []celRule {
	repos := strings.Join(o.Repositories, ", ")
	// Versions match versionRE in the lock, so they cannot end the literal.
	approved := strings.Join(o.Approved, ", ")
	return []celRule{{
		Expression:        `size(variables.unpinned) == 0`,
		Message:           "every image must be pinned by digest (repository@sha256:<digest>)",
		MessageExpression: `'not pinned by digest: ' + variables.unpinned` + celOffenders + ` + '; pin each image as repository@sha256:<digest> (reloader-mirror values prints them)'`,
	}, {
		Expression:        `size(variables.foreign) == 0`,
		Message:           "every image must come from the mirrored repositories: " + repos,
		MessageExpression: `'not from the mirrored repositories: ' + variables.foreign` + celOffenders + ` + '; allowed: ' + variables.repositories.join(', ')`,
	}, {
		Expression:        `size(variables.unapproved) == 0`,
		Message:           "every image must be one of an approved Reloader release: " + approved,
		MessageExpression: `'not an image of an approved release: ' + variables.unapproved` + celOffenders + ` + '; approved: Reloader ` + approved + ` (reloader-mirror policy -f / --keep-previous)'`,
	}}
}

func vapHeader(o Options) string {
	return comment(
		"ValidatingAdmissionPolicy written by reloader-mirror policy"+releaseSuffix(o)+".",
		"In "+o.scopeText()+", Pods and pod-template workloads are admitted only when every",
		"container image is pinned by digest, comes from a mirrored repository:",
	) + comment(indent(o.Repositories)...) + comment(
		"and is an image (index or platform manifest) of an approved release: "+strings.Join(o.Approved, ", "),
		fmt.Sprintf("(%d digests); any other digest in those repositories is denied.", len(o.Digests)),
	) + comment(
		"Mode: "+string(o.Mode)+" (the binding's validationActions).",
		"Apply: kubectl apply --server-side -f "+VAP.FileName(),
	)
}

func releaseSuffix(o Options) string {
	if o.Version == "" {
		return ""
	}
	return " for Reloader " + o.Version
}

func indent(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = "  " + s
	}
	return out
}

// namespaceSelector is the scope as a namespace label selector; a single
// namespace is selected by the label the apiserver sets on every namespace.
func namespaceSelector(o Options) *metav1.LabelSelector {
	if o.NamespaceSelector != nil {
		return o.NamespaceSelector.DeepCopy()
	}
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: []string{o.Namespace},
	}}}
}

// workloadRules are the resource rules of every pod-carrying kind, shared
// by the validating and the mutating policy.
func workloadRules() []admissionv1.NamedRuleWithOperations {
	byGroup := map[string][]string{}
	var groups []string
	for _, k := range workloadKinds {
		if _, ok := byGroup[k.group]; !ok {
			groups = append(groups, k.group)
		}
		byGroup[k.group] = append(byGroup[k.group], k.resource)
		if k.kind == "Pod" {
			// kubectl debug adds ephemeral containers through this subresource.
			byGroup[k.group] = append(byGroup[k.group], "pods/ephemeralcontainers")
		}
	}
	var rules []admissionv1.NamedRuleWithOperations
	for _, g := range groups {
		rules = append(rules, admissionv1.NamedRuleWithOperations{RuleWithOperations: admissionv1.RuleWithOperations{
			Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
			Rule:       admissionv1.Rule{APIGroups: []string{g}, APIVersions: []string{"v1"}, Resources: byGroup[g]},
		}})
	}
	return rules
}

func vapObjects(o Options) ([]any, error) {
	fail := admissionv1.Fail
	equivalent := admissionv1.Equivalent
	rules := workloadRules()
	policy := &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name + "-images", Annotations: o.annotations()},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    &fail,
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: rules, MatchPolicy: &equivalent},
		},
	}
	for _, v := range celVariables(o) {
		policy.Spec.Variables = append(policy.Spec.Variables, admissionv1.Variable{Name: v.Name, Expression: v.Expression})
	}
	forbidden := metav1.StatusReasonForbidden
	for _, r := range celRules(o) {
		policy.Spec.Validations = append(policy.Spec.Validations, admissionv1.Validation{
			Expression: r.Expression, Message: r.Message, MessageExpression: r.MessageExpression, Reason: &forbidden,
		})
	}
	actions := []admissionv1.ValidationAction{admissionv1.Deny}
	if o.Mode == Audit {
		actions = []admissionv1.ValidationAction{admissionv1.Warn, admissionv1.Audit}
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name + "-images", Annotations: o.annotations()},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			ValidationActions: actions,
			MatchResources:    &admissionv1.MatchResources{NamespaceSelector: namespaceSelector(o)},
		},
	}
	return cleanAll(policy, binding)
}

// cleanAll turns typed objects into maps without the empty creationTimestamp
// and status they marshal, so what is printed is only what the user applies.
func cleanAll(objs ...any) ([]any, error) {
	out := make([]any, len(objs))
	for i, obj := range objs {
		b, err := json.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("encoding %T: %w", obj, err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("encoding %T: %w", obj, err)
		}
		delete(m, "status")
		if md, ok := m["metadata"].(map[string]any); ok {
			delete(md, "creationTimestamp")
		}
		out[i] = m
	}
	return out, nil
}
