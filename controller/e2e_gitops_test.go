package controller_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/reloader-dev/reloader/test/reloadertest"
	"github.com/reloader-dev/reloader/test/tools"
)

// applier is how a GitOps tool writes the manifests from Git: Argo CD with
// ServerSideApply and Flux's kustomize-controller apply server-side with
// their own field manager and force conflicts; Argo CD without it, and a
// person, apply client-side.
type applier struct {
	name    string
	args    []string
	manager string // the field manager of its writes, as managedFields names it
}

func appliers() []applier {
	return []applier{
		{"argocd", []string{"apply", "--server-side", "--force-conflicts", "--field-manager=argocd-controller"}, "argocd-controller"},
		{"flux", []string{"apply", "--server-side", "--force-conflicts", "--field-manager=kustomize-controller"}, "kustomize-controller"},
		{"kubectl", []string{"apply"}, "kubectl-client-side-apply"},
	}
}

var gitopsKinds = []string{"Deployment", "StatefulSet", "DaemonSet"}

// gitManifests is what the Git repository holds for one applier: a
// ConfigMap and one workload of each kind using it, with a VERSION the
// repository can change.
func gitManifests(prefix, config, version string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: v1
kind: ConfigMap
metadata:
  name: %[1]s-config
data:
  setting: %[2]q
`, prefix, config)
	for _, kind := range gitopsKinds {
		fmt.Fprintf(&b, `---
apiVersion: apps/v1
kind: %[1]s
metadata:
  name: %[2]s
  annotations:
    reloader.stakater.com/auto: "true"
spec:
  selector:
    matchLabels: {app: %[2]s}
  template:
    metadata:
      labels: {app: %[2]s}
    spec:
      containers:
      - name: app
        image: registry.invalid/app:1
        env:
        - {name: VERSION, value: %[3]q}
        envFrom:
        - configMapRef: {name: %[4]s-config}
`, kind, workloadName(prefix, kind), version, prefix)
	}
	return b.String()
}

func workloadName(prefix, kind string) string { return prefix + "-" + strings.ToLower(kind) }

// apply runs kubectl as the applier on the manifests.
func (a applier) apply(t *testing.T, kubectl, ns, manifests string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), a.name+".yaml")
	if err := os.WriteFile(path, []byte(manifests), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--kubeconfig=" + cp.AdminKubeconfig, "--namespace=" + ns}, a.args...)
	cmd := exec.Command(kubectl, append(args, "--filename="+path)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: kubectl %s: %v\n%s", a.name, strings.Join(a.args, " "), err, out.String())
	}
}

// observed is what a test reads of a workload: its rollouts are the
// ReplicaSets (Deployment) or ControllerRevisions (StatefulSet, DaemonSet)
// kube-controller-manager made for it, one per distinct template.
type observed struct {
	kind, name string
	generation int64
	rollouts   int
	record     string
	marks      string // the reload variables and annotation of the template
	version    string
	managed    []metav1.ManagedFieldsEntry
}

func observe(t *testing.T, cs kubernetes.Interface, ns, kind, name string) observed {
	t.Helper()
	ctx := context.Background()
	var (
		obj  metav1.Object
		tmpl corev1.PodTemplateSpec
		err  error
	)
	switch kind {
	case "Deployment":
		var d *appsv1.Deployment
		if d, err = cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
			obj, tmpl = d, d.Spec.Template
		}
	case "StatefulSet":
		var s *appsv1.StatefulSet
		if s, err = cs.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
			obj, tmpl = s, s.Spec.Template
		}
	case "DaemonSet":
		var d *appsv1.DaemonSet
		if d, err = cs.AppsV1().DaemonSets(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
			obj, tmpl = d, d.Spec.Template
		}
	}
	if err != nil {
		t.Fatalf("reading %s %s/%s: %v", kind, ns, name, err)
	}
	o := observed{kind: kind, name: name, generation: obj.GetGeneration(), record: obj.GetAnnotations()["reloader.dev/applied-hashes"],
		marks: reloadMarks(tmpl), version: templateEnv(tmpl, "VERSION"), managed: obj.GetManagedFields()}
	o.rollouts = ownedRevisions(t, cs, ns, kind, obj.GetUID())
	return o
}

func ownedRevisions(t *testing.T, cs kubernetes.Interface, ns, kind string, uid types.UID) int {
	t.Helper()
	var owners [][]metav1.OwnerReference
	if kind == "Deployment" {
		for _, rs := range listReplicaSets(t, cs, ns, metav1.ListOptions{}).Items {
			owners = append(owners, rs.OwnerReferences)
		}
	} else {
		l, err := cs.AppsV1().ControllerRevisions(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, cr := range l.Items {
			owners = append(owners, cr.OwnerReferences)
		}
	}
	n := 0
	for _, refs := range owners {
		if slices.ContainsFunc(refs, func(r metav1.OwnerReference) bool { return r.UID == uid }) {
			n++
		}
	}
	return n
}

// reloadMarks is what a reload writes into a template, under either
// strategy: STAKATER_* variables and the last-reloaded-from annotation.
func reloadMarks(tmpl corev1.PodTemplateSpec) string {
	var marks []string
	for _, c := range tmpl.Spec.Containers {
		for _, e := range c.Env {
			if strings.HasPrefix(e.Name, "STAKATER_") {
				marks = append(marks, c.Name+"/"+e.Name+"="+e.Value)
			}
		}
	}
	if v, ok := tmpl.Annotations["reloader.stakater.com/last-reloaded-from"]; ok {
		marks = append(marks, "last-reloaded-from="+v)
	}
	sort.Strings(marks)
	return strings.Join(marks, " ")
}

func (o observed) String() string {
	return fmt.Sprintf("%s %s: generation %d, %d rollouts, marks %q, VERSION %q; fields: %s", o.kind, o.name, o.generation, o.rollouts, o.marks, o.version, fieldOwners(o.managed))
}

// owners are the field managers whose managedFields entries hold any of
// the reload's fields: the record annotation and the template's marks.
func (o observed) owners() []string {
	var owners []string
	for _, m := range o.managed {
		raw := m.FieldsV1.GetRawString()
		if strings.Contains(raw, `"f:reloader.dev/applied-hashes"`) || strings.Contains(raw, `"f:reloader.stakater.com/last-reloaded-from"`) ||
			strings.Contains(raw, `"k:{\"name\":\"STAKATER_`) {
			owners = append(owners, m.Manager)
		}
	}
	sort.Strings(owners)
	return slices.Compact(owners)
}

// Re-applying the unchanged Git manifests after a reload, server-side with
// another field manager and --force-conflicts (Argo CD with ServerSideApply,
// Flux) or client-side (kubectl, Argo CD without it), neither reverts the
// reload nor rolls the workload again; a change in Git to the workload rolls
// it once, by Git's hand, and keeps the reload. Every field of the reload
// is owned by the field manager docs/gitops.md tells Argo CD to trust.
func TestGitOpsReapplyNeitherRevertsNorRolls(t *testing.T) {
	requireControlPlane(t)
	kubectl, err := tools.Binary(ctxFor(t), tools.ControlPlane, "kubectl")
	if err != nil {
		t.Fatal(err)
	}
	trusted := documentedManagers(t)
	for _, strategy := range []string{"env-vars", "annotations"} {
		t.Run(strategy, func(t *testing.T) {
			t.Parallel()
			cs := cp.AdminClient(t)
			ns := cp.Namespace(t)
			all := appliers()
			for _, a := range all {
				a.apply(t, kubectl, ns, gitManifests(a.name, "1", "1"))
			}
			r := startReloader(t, "", "--namespaces="+ns, "--reload-strategy="+strategy)
			var names [][2]string
			for _, a := range all {
				for _, kind := range gitopsKinds {
					names = append(names, [2]string{kind, workloadName(a.name, kind)})
				}
			}
			state := func() map[string]observed {
				m := map[string]observed{}
				for _, n := range names {
					m[n[1]] = observe(t, cs, ns, n[0], n[1])
				}
				return m
			}
			waitAll := func(what string, cond func(o observed) bool) map[string]observed {
				t.Helper()
				reloadertest.Eventually(t, 60*time.Second, func() (bool, string) {
					for _, o := range state() {
						if !cond(o) {
							return false, what + ": " + o.String()
						}
					}
					return true, ""
				})
				return state()
			}
			base := waitAll("baseline recorded, first rollout made", func(o observed) bool { return o.record != "" && o.rollouts == 1 && o.marks == "" })

			// Git changes the ConfigMap: the workloads reload once.
			for _, a := range all {
				a.apply(t, kubectl, ns, gitManifests(a.name, "2", "1"))
			}
			reloaded := waitAll("reloaded once", func(o observed) bool { return o.marks != "" && o.rollouts == 2 && o.record != base[o.name].record })
			r.waitIdle(t, 2*len(names))
			for _, a := range all {
				for _, kind := range gitopsKinds {
					o := reloaded[workloadName(a.name, kind)]
					if got := o.owners(); !slices.Equal(got, trusted) {
						t.Errorf("%s: the reload's fields are owned by %v, docs/gitops.md trusts %v; %s", o.name, got, trusted, o)
					}
					reloadedBy(t, cs, ns, o.name, a.manager)
				}
			}
			reloads := r.metric(t, `reloader_reload_executed_total{success="true"}`)
			if reloads != float64(len(names)) {
				t.Errorf("%v reloads, want %d", reloads, len(names))
			}

			// Git is re-applied unchanged (a sync, a self-heal): nothing moves.
			syncs := r.metric(t, "reloader_workload_syncs_total")
			for _, a := range all {
				a.apply(t, kubectl, ns, gitManifests(a.name, "2", "1"))
			}
			settled(t, r, syncs-1)
			time.Sleep(2 * time.Second) // a revert would show as a new rollout by now
			for name, o := range state() {
				was := reloaded[name]
				if o.marks != was.marks || o.rollouts != was.rollouts || o.generation != was.generation || o.record != was.record {
					t.Errorf("re-applying the unchanged manifest moved the workload:\n now %s\n was %s", o, was)
				}
			}

			// Git changes the workload: one rollout by Git, the reload kept.
			for _, a := range all {
				a.apply(t, kubectl, ns, gitManifests(a.name, "2", "2"))
			}
			waitAll("rolled by Git", func(o observed) bool { return o.version == "2" && o.rollouts == 3 })
			syncs = r.metric(t, "reloader_workload_syncs_total")
			settled(t, r, syncs-1)
			time.Sleep(2 * time.Second)
			for name, o := range state() {
				was := reloaded[name]
				if o.marks != was.marks || o.rollouts != 3 || o.record != was.record {
					t.Errorf("a change in Git reverted the reload or rolled twice:\n now %s\n was %s", o, was)
				}
			}
			if got := r.metric(t, `reloader_reload_executed_total{success="true"}`); got != reloads {
				t.Errorf("re-applying Git made the controller reload again: %v reloads, was %v", got, reloads)
			}
		})
	}
}

// reloadedBy checks the workload's Reloaded Event names the applier as the
// writer of the change.
func reloadedBy(t *testing.T, cs kubernetes.Interface, ns, name, manager string) {
	t.Helper()
	var msgs []string
	for _, e := range listEvents(t, cs, ns, metav1.ListOptions{FieldSelector: "reason=Reloaded,involvedObject.name=" + name}).Items {
		if strings.HasSuffix(e.Message, "(changed by "+manager+")") {
			return
		}
		msgs = append(msgs, e.Message)
	}
	t.Errorf("%s: no Reloaded Event names %s as the writer of the change: %q", name, manager, msgs)
}

// documentedManagers reads the Argo CD Application in docs/gitops.md and
// returns the managedFieldsManagers it trusts, after checking it covers
// every kind the test applies.
func documentedManagers(t *testing.T) []string {
	t.Helper()
	root, err := tools.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "gitops.md"))
	if err != nil {
		t.Fatal(err)
	}
	var app struct {
		Kind string `json:"kind"`
		Spec struct {
			IgnoreDifferences []struct {
				Group                 string   `json:"group"`
				Kind                  string   `json:"kind"`
				ManagedFieldsManagers []string `json:"managedFieldsManagers"`
			} `json:"ignoreDifferences"`
			SyncPolicy struct {
				SyncOptions []string `json:"syncOptions"`
			} `json:"syncPolicy"`
		} `json:"spec"`
	}
	found := false
	for _, block := range yamlBlocks(string(doc)) {
		if err := yaml.Unmarshal([]byte(block), &app); err == nil && app.Kind == "Application" {
			found = true
			break
		}
	}
	if !found {
		t.Fatal("docs/gitops.md has no Argo CD Application in a ```yaml block")
	}
	var managers []string
	for _, kind := range gitopsKinds {
		covered := false
		for _, d := range app.Spec.IgnoreDifferences {
			if d.Group == "apps" && d.Kind == kind {
				covered = true
				managers = append(managers, d.ManagedFieldsManagers...)
			}
		}
		if !covered {
			t.Errorf("docs/gitops.md: ignoreDifferences has no entry for apps/%s", kind)
		}
	}
	for _, opt := range []string{"RespectIgnoreDifferences=true", "ServerSideApply=true"} {
		if !slices.Contains(app.Spec.SyncPolicy.SyncOptions, opt) {
			t.Errorf("docs/gitops.md: the Application's syncOptions lack %s", opt)
		}
	}
	sort.Strings(managers)
	return slices.Compact(managers)
}

// yamlBlocks are the fenced ```yaml blocks of a Markdown document.
func yamlBlocks(doc string) []string {
	var blocks []string
	for {
		_, rest, ok := strings.Cut(doc, "```yaml\n")
		if !ok {
			return blocks
		}
		block, after, _ := strings.Cut(rest, "```")
		blocks = append(blocks, block)
		doc = after
	}
}
