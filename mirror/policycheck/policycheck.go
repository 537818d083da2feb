// Package policycheck proves on a live cluster that the admission policies
// `reloader-mirror policy` wrote are enforced: it asks the apiserver to
// create, as a server-side dry run, one Pod per case (the release's image
// by digest from the mirror, which must be admitted; a tag, another
// registry and a digest the release does not list, which must be denied),
// and reports each answer with the policy or webhook that gave it.
//
// A dry run goes through every admission plugin, policy and webhook exactly
// as a real create does, and persists nothing, so the check needs only
// `create` on pods in one namespace and leaves no trace but audit log
// entries. That makes it safe for an auditor to run against production.
package policycheck

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/reloader-dev/reloader/internal/exitcode"
	"github.com/reloader-dev/reloader/release"
)

// ErrNotEnforced is the class of a check whose verdicts are not the
// expected ones: a bad image admitted (or the release denied, which would
// break the install). Scripts see exit code 3.
var ErrNotEnforced = exitcode.New(exitcode.Refused, "the admission policies are not enforced as expected")

// Case is one image the check asks the cluster to run.
type Case struct {
	// Name says what the image is, e.g. "release image reloader by digest".
	Name  string `json:"name"`
	Image string `json:"image"`
	// Admit is the expected verdict.
	Admit bool `json:"expectAdmitted"`
}

// Cases are the probes for a verified release lock whose repositories are
// mapped to the target by target: per image variant, the release's index by
// digest from the mirror (admit); the same repository by tag, the same digest
// at the lock's source registry, and a digest the release does not hold in
// the mirrored repository (deny each).
func Cases(l *release.Lock, target func(repository string) string) ([]Case, error) {
	indexes := l.Find(release.KindImageIndex, "")
	if len(indexes) == 0 {
		return nil, fmt.Errorf("release %s lists no image index to probe with", l.Version)
	}
	// A digest no registry holds for this release: the policies must deny it
	// by its digest alone, as they would an image pushed into the mirror.
	sum := sha256.Sum256([]byte("reloader-mirror policy check: not an image of release " + l.Version))
	unlisted := "sha256:" + hex.EncodeToString(sum[:])
	var out []Case
	for _, idx := range indexes {
		mirrored := target(idx.Repository)
		name := idx.Name
		other := idx.Repository
		if other == mirrored {
			other = "registry.invalid/" + idx.Name
		}
		tag := l.Version
		if tag == "" {
			tag = "latest"
		}
		out = append(out,
			Case{Name: "release image " + name + " by digest from the mirror", Image: mirrored + "@" + idx.Digest, Admit: true},
			Case{Name: "the mirrored " + name + " by tag", Image: mirrored + ":" + tag},
			Case{Name: "the same digest from another registry", Image: other + "@" + idx.Digest},
			Case{Name: "a digest in the mirrored repository that no approved release lists", Image: mirrored + "@" + unlisted},
		)
	}
	return out, nil
}

// Verdict is the cluster's answer to one case.
type Verdict struct {
	Case
	Admitted bool `json:"admitted"`
	// By names who denied: "ValidatingAdmissionPolicy <name>" (binding
	// <binding>), "webhook <name>", "webhook <name> (unreachable, failing
	// closed)", "PodSecurity"; empty when admitted or not recognised.
	By string `json:"deniedBy,omitempty"`
	// Message is the apiserver's message for a denial.
	Message string `json:"message,omitempty"`
	// Warnings are what the apiserver warned about while admitting: an
	// audit-mode policy's violations appear here.
	Warnings []string `json:"warnings,omitempty"`
	// OK is whether the verdict is the expected one.
	OK bool `json:"ok"`
}

// Report is the whole check.
type Report struct {
	Namespace string    `json:"namespace"`
	Verdicts  []Verdict `json:"verdicts"`
	// Holds is true when every verdict is the expected one.
	Holds bool `json:"holds"`
}

// Err is nil when the report holds, else an ErrNotEnforced naming each
// unexpected verdict.
func (r *Report) Err() error {
	if r.Holds {
		return nil
	}
	var bad []string
	for _, v := range r.Verdicts {
		if v.OK {
			continue
		}
		if v.Admitted {
			s := fmt.Sprintf("%s (%s) was admitted", v.Name, v.Image)
			if len(v.Warnings) > 0 {
				s += " with warnings only (a policy in audit mode?)"
			}
			bad = append(bad, s)
		} else {
			bad = append(bad, fmt.Sprintf("%s (%s) was denied, so the release could not be installed: %s", v.Name, v.Image, v.Message))
		}
	}
	return fmt.Errorf("%w in namespace %s: %s", ErrNotEnforced, r.Namespace, strings.Join(bad, "; "))
}

// Options are what the check runs with.
type Options struct {
	// Config reaches the cluster (the user's kubeconfig).
	Config *rest.Config
	// Namespace is where the probe Pods are dry-run created: one the
	// policies cover (where Reloader is installed).
	Namespace string
}

// Run dry-run creates a Pod per case, one after another, and reports the
// answers. It returns an error, and no report, only when the check itself
// cannot run: the cluster unreachable, the namespace missing, or the
// kubeconfig's identity not allowed to create pods there. Those are not
// verdicts: a refusal by RBAC says nothing about the image policies.
func Run(ctx context.Context, o Options, cases []Case) (*Report, error) {
	if o.Namespace == "" {
		return nil, errors.New("policy check: no namespace to probe in")
	}
	warn := &warnings{}
	cfg := rest.CopyConfig(o.Config)
	cfg.WarningHandlerWithContext = warn
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("policy check: building the client: %w", err)
	}
	r := &Report{Namespace: o.Namespace, Holds: true}
	for _, c := range cases {
		warn.reset()
		_, err := cs.CoreV1().Pods(o.Namespace).Create(ctx, probe(c.Image), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: "reloader-mirror"})
		v := Verdict{Case: c, Warnings: warn.take()}
		if err == nil {
			v.Admitted = true
		} else if v.By, v.Message, err = classify(o.Namespace, err); err != nil {
			return nil, err
		}
		v.OK = v.Admitted == c.Admit
		r.Holds = r.Holds && v.OK
		r.Verdicts = append(r.Verdicts, v)
	}
	return r, nil
}

// probe is a Pod that passes the restricted Pod Security standard, so that a
// denial is the image policy's, never Pod Security's, in a namespace that
// enforces it (as the chart's namespace does).
func probe(image string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "reloader-policy-check-",
			Labels: map[string]string{"app.kubernetes.io/managed-by": "reloader-mirror", "app.kubernetes.io/component": "policy-check"}},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: ptr.To(false),
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{Name: "probe", Image: image,
				SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}},
		},
	}
}

var (
	vapDenied     = regexp.MustCompile(`ValidatingAdmissionPolicy '([^']+)' with binding '([^']+)' denied request`)
	webhookDenied = regexp.MustCompile(`admission webhook "([^"]+)" denied the request`)
	webhookFailed = regexp.MustCompile(`failed calling webhook "([^"]+)"`)
)

// classify reads an admission denial from err: who denied and the message.
// Errors that are not admission verdicts come back as err.
func classify(ns string, err error) (by, message string, _ error) {
	msg := err.Error()
	switch {
	case apierrors.IsNotFound(err):
		return "", "", fmt.Errorf("policy check: namespace %s: %w", ns, err)
	case apierrors.IsForbidden(err) && strings.Contains(msg, "cannot create resource"):
		return "", "", fmt.Errorf("policy check needs create on pods in namespace %s (dry-run creates persist nothing): %w", ns, err)
	case apierrors.IsUnauthorized(err):
		return "", "", fmt.Errorf("policy check: the kubeconfig's credentials were refused: %w", err)
	}
	if m := vapDenied.FindStringSubmatch(msg); m != nil {
		return "ValidatingAdmissionPolicy " + m[1] + " (binding " + m[2] + ")", msg, nil
	}
	if m := webhookDenied.FindStringSubmatch(msg); m != nil {
		return "webhook " + m[1], msg, nil
	}
	if m := webhookFailed.FindStringSubmatch(msg); m != nil {
		return "webhook " + m[1] + " (unreachable, failing closed)", msg, nil
	}
	if strings.Contains(msg, "violates PodSecurity") {
		return "PodSecurity", msg, nil
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		// Some other admission plugin's denial (a quota, a limit): still a
		// denial, named by the message alone. The release case, admitted
		// under the same plugins, shows it is not the image that is denied.
		return "", msg, nil
	}
	// Not an answer from the apiserver: the cluster could not be reached.
	return "", "", fmt.Errorf("policy check: creating a dry-run pod in namespace %s: %w", ns, err)
}

// warnings collects the apiserver's warnings for one request at a time.
type warnings struct {
	mu  sync.Mutex
	got []string
}

func (w *warnings) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got = append(w.got, text)
}

func (w *warnings) reset() { _ = w.take() }

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.got
	w.got = nil
	return out
}
