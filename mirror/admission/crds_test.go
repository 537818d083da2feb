package admission_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/reloader-dev/reloader/mirror/admission"
)

// The admission projects whose CRDs the generated policies must satisfy,
// pinned. Their CRDs come from the projects' own Go modules (each ships its
// CRD YAML), fetched through the module proxy into the module cache: nothing
// is copied by hand, and neither module joins this one's dependency graph.
const (
	kyvernoModule          = "github.com/kyverno/kyverno@v1.19.1"
	policyControllerModule = "github.com/sigstore/policy-controller@v0.13.1"
)

var projectCRDs = map[string][]string{
	kyvernoModule: {"config/crds/kyverno/kyverno.io_clusterpolicies.yaml",
		"config/crds/policies.kyverno.io/policies.kyverno.io_imagevalidatingpolicies.yaml"},
	policyControllerModule: {"config/300-clusterimagepolicy.yaml", "config/300-trustroot.yaml"},
}

// moduleDir downloads module@version into the module cache (a no-op when it
// is there) and returns its directory.
func moduleDir(t *testing.T, module string) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", module)
	// Outside this module, so its go.mod and go.sum are neither read nor
	// changed; the download is still checked against the checksum database.
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.Output()
	var info struct{ Dir, Error string }
	_ = json.Unmarshal(out, &info)
	if err != nil || info.Dir == "" {
		msg := info.Error
		if ee, ok := err.(*exec.ExitError); ok {
			msg += string(ee.Stderr)
		}
		t.Fatalf("go mod download %s: %v %s", module, err, msg)
	}
	return info.Dir
}

// installCRDs creates the projects' CRDs in the test apiserver, exactly as
// shipped, and waits until they are served.
// withoutConversionWebhook drops a CRD's conversion webhook: the webhook is
// the project's running controller, which the test apiserver does not have,
// and without it a dry run in any version but the storage one fails before
// validation. It is dropped only where it cannot matter to validation: every
// version must carry the identical schema (policy-controller's v1alpha1 and
// v1beta1 do; its webhook only rewrites apiVersion).
func withoutConversionWebhook(t *testing.T, crd *unstructured.Unstructured) {
	t.Helper()
	strategy, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "strategy")
	if strategy != "Webhook" {
		return
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	var first []byte
	for i, v := range versions {
		b, err := json.Marshal(v.(map[string]any)["schema"])
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = b
		} else if string(b) != string(first) {
			t.Fatalf("CRD %s: versions have different schemas; its conversion webhook cannot be left out", crd.GetName())
		}
	}
	if err := unstructured.SetNestedField(crd.Object, "None", "spec", "conversion", "strategy"); err != nil {
		t.Fatal(err)
	}
	unstructured.RemoveNestedField(crd.Object, "spec", "conversion", "webhook")
}

func installCRDs(t *testing.T, ctx context.Context, k *kube) {
	t.Helper()
	for module, files := range projectCRDs {
		dir := moduleDir(t, module)
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatalf("%s does not ship %s: %v", module, f, err)
			}
			var crd unstructured.Unstructured
			if err := yaml.Unmarshal(b, &crd.Object); err != nil {
				t.Fatalf("%s %s: %v", module, f, err)
			}
			withoutConversionWebhook(t, &crd)
			ri := k.dyn.Resource(crdGVR)
			if _, err := ri.Create(ctx, &crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatalf("installing CRD %s from %s: %v", crd.GetName(), module, err)
			}
			if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
				got, err := ri.Get(ctx, crd.GetName(), metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
				for _, c := range conds {
					c := c.(map[string]any)
					if c["type"] == "Established" && c["status"] == "True" {
						return true, nil
					}
				}
				return false, nil
			}); err != nil {
				t.Fatalf("CRD %s from %s never became established: %v", crd.GetName(), module, err)
			}
		}
	}
	k.mapper.Reset()
}

// The policy-controller and Kyverno policies, for a key and for a keyless
// trust policy, in both modes, pass a server-side dry run against those
// projects' CRDs: the apiserver checks every field against their schemas.
func TestProjectPoliciesPassServerSideDryRunAgainstTheirCRDs(t *testing.T) {
	t.Parallel()
	needControlPlane(t)
	ctx := testContext(t)
	k := newKube(t, cp.Admin)
	installCRDs(t, ctx, k)
	m := publishKeyed(t)

	keyless := m.opts
	keyless.Trust = admission.Trust{
		Identity: "https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1.2.3",
		Issuer:   "https://token.actions.githubusercontent.com", TrustedRootJSON: trustedRootJSON(t), IgnoreSCT: true,
	}
	keylessRegexp := keyless
	keylessRegexp.Trust.Identity, keylessRegexp.Trust.IdentityRegexp = "", `^https://github\.com/reloader-dev/reloader/`
	for name, o := range map[string]admission.Options{"key": m.opts, "keyless": keyless, "keyless regexp": keylessRegexp} {
		for _, mode := range []admission.Mode{admission.Audit, admission.Enforce} {
			for _, scope := range []string{"namespace", "selector"} {
				o := o
				o.Mode = mode
				if scope == "namespace" {
					o.Namespace = "reloader"
				} else {
					o.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "reloader.dev/enforce", Operator: metav1.LabelSelectorOpExists}}}
				}
				t.Run(strings.Join([]string{name, string(mode), scope}, " "), func(t *testing.T) {
					out, err := admission.Generate(o, admission.Formats)
					if err != nil {
						t.Fatal(err)
					}
					n := 0
					for _, f := range admission.Formats {
						for _, obj := range decode(t, out[f]) {
							if err := k.apply(ctx, obj, true); err != nil {
								t.Errorf("%s: server-side dry run of %s %s: %v", f, obj.GetKind(), obj.GetName(), err)
							}
							n++
						}
					}
					if n < 4 {
						t.Errorf("only %d objects generated", n)
					}
					// The dry run has teeth: a misspelt field is refused.
					for _, f := range []admission.Format{admission.PolicyController, admission.Kyverno, admission.KyvernoClusterPolicy} {
						objs := decode(t, out[f])
						bad := objs[len(objs)-1]
						spec, _, _ := unstructured.NestedMap(bad.Object, "spec")
						spec["authoritiez"] = spec["rules"]
						_ = unstructured.SetNestedMap(bad.Object, spec, "spec")
						if err := k.apply(ctx, bad, true); err == nil || !strings.Contains(err.Error(), "authoritiez") {
							t.Errorf("%s: a misspelt field passed the dry run: %v", f, err)
						}
					}
				})
			}
		}
	}
}
