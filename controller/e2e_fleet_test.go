package controller_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/controller"
	"github.com/reloader-dev/reloader/controller/audit"
	"github.com/reloader-dev/reloader/controller/hash"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/test/reloadertest"
)

// fleet is what the fault suite runs its faults against: workloads of every
// shape a reload takes, each using a ConfigMap of its own name, all written
// with the same versions. plain are Deployments; declared are of the
// CloneSet-shaped kind the replicas are given with --workload-kind; gated
// are Deployments whose changes need approval, which the fleet gives change
// by change as a person would; told are notify-only Deployments, whose
// record moves and whose template never does.
type fleet struct {
	ns                           string
	plain, declared, gated, told []string
	templates, clones, records   *templateLog
	approved                     map[string]map[int]bool // gated workload -> versions approved
	kind                         declaredCRD
}

// newFleet creates plain Deployments (as createUsers does) and three
// workloads of each other shape, and starts following them.
func newFleet(t *testing.T, cs kubernetes.Interface, ns string, plain int) *fleet {
	t.Helper()
	f := &fleet{ns: ns, plain: createUsers(t, cs, ns, plain), kind: cloneSetKind(), approved: map[string]map[int]bool{}}
	dyn := f.kind.install(t)
	for i := range 3 {
		f.declared = append(f.declared, fmt.Sprintf("clone-%02d", i))
		f.gated = append(f.gated, fmt.Sprintf("gated-%02d", i))
		f.told = append(f.told, fmt.Sprintf("told-%02d", i))
	}
	for _, n := range f.declared {
		reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap(n, versionData(1)))
		f.kind.Create(t, dyn, ns, f.kind.Object(t, n, auto(), usesConfigMap(n, n)))
	}
	for mode, names := range map[string][]string{"required": f.gated, "notify-only": f.told} {
		for _, n := range names {
			ann := auto()
			ann["reloader.stakater.com/approval"] = mode
			reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap(n, versionData(1)))
			createDeployment(t, cs, ns, reloadertest.Deployment(n, ann, usesConfigMap(n, n)))
		}
	}
	f.templates = followTemplates(t, ns)
	f.clones = followValues(t, ns, f.kind.GVR(), func(u *unstructured.Unstructured) string {
		return f.kind.Env(u, controller.EnvVarName(refs.ConfigMap, u.GetName()))
	})
	f.records = followValues(t, ns, appsv1.SchemeGroupVersion.WithResource("deployments"), func(u *unstructured.Unstructured) string {
		var rec map[string]string
		_ = json.Unmarshal([]byte(u.GetAnnotations()["reloader.dev/applied-hashes"]), &rec)
		return rec["configmap/"+u.GetName()]
	})
	return f
}

// flags are what a controller of the fleet is started with (a replica adds
// f.kind.Flag() to its own).
func (f *fleet) flags() []string { return []string{"--namespaces=" + f.ns, f.kind.Flag()} }

// rolling is the number of workloads a change rolls.
func (f *fleet) rolling() int { return len(f.plain) + len(f.declared) + len(f.gated) }

// configMaps are the names of every ConfigMap the fleet uses.
func (f *fleet) configMaps() []string {
	return slices.Concat(f.plain, f.declared, f.gated, f.told)
}

// waitRecorded waits until the controller has adopted every workload.
func (f *fleet) waitRecorded(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	for _, n := range slices.Concat(f.plain, f.gated, f.told) {
		waitRecorded(t, cs, f.ns, n)
	}
	dyn := f.kind.install(t)
	for _, n := range f.declared {
		reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
			_, _, rec := f.kind.State(t, dyn, f.ns, n, "")
			return rec != "", fmt.Sprintf("%s %s/%s has no record", f.kind.Kind, f.ns, n)
		})
	}
}

// waitAllOn waits until every workload has applied version i: the rolling
// ones on their template, the notify-only ones in their record. A gated
// workload is approved first, once the controller says which change waits
// for version i, and only then: its template must not have moved before.
func (f *fleet) waitAllOn(t *testing.T, cs kubernetes.Interface, i int) {
	t.Helper()
	want := hash.SHA1.ConfigMap(versionData(i), nil)
	for _, n := range f.gated {
		change := f.waiting(t, cs, n, want)
		if v, _ := reloadertest.EnvOf(getDeployment(t, cs, f.ns, n), "app", controller.EnvVarName(refs.ConfigMap, n)); v == want {
			t.Errorf("%s rolled to version %d before its change %s was approved", n, i, change)
		}
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"reloader.stakater.com/approve":%q}}}`, change)
		if _, err := cs.AppsV1().Deployments(f.ns).Patch(context.Background(), n, types.MergePatchType, []byte(patch),
			metav1.PatchOptions{FieldManager: "approver"}); err != nil {
			t.Fatalf("approving change %s of %s: %v", change, n, err)
		}
		if f.approved[n] == nil {
			f.approved[n] = map[int]bool{}
		}
		f.approved[n][i] = true
	}
	f.templates.waitAllOn(t, slices.Concat(f.plain, f.gated), i)
	f.clones.waitAllOn(t, f.declared, i)
	f.records.waitAllOn(t, f.told, i)
}

// waiting is the change of gated workload n whose new hash is want, as its
// ReloadAwaitingApproval Event names it.
func (f *fleet) waiting(t *testing.T, cs kubernetes.Interface, n, want string) string {
	t.Helper()
	var change string
	reloadertest.EventuallyEvery(t, 200*time.Millisecond, 60*time.Second, func() (bool, string) {
		for _, e := range listEvents(t, cs, f.ns, metav1.ListOptions{FieldSelector: "reason=ReloadAwaitingApproval,involvedObject.name=" + n}).Items {
			if strings.Contains(e.Message, "-> "+want[:audit.HashPrefixLen]) {
				change = changeIDPattern.FindString(e.Message)
				return change != "", ""
			}
		}
		return false, fmt.Sprintf("no ReloadAwaitingApproval Event on %s for a change to hash %s", n, want[:audit.HashPrefixLen])
	})
	return change
}

// check holds the suite's guarantees for every shape (see
// templateLog.check), written with versions 1..last: a gated workload only
// ever took versions that were approved for it, a notify-only one never
// rolled, its record never went back, and no change of it was told twice.
// It returns the rollouts and rollbacks of the rolling workloads.
func (f *fleet) check(t *testing.T, cs kubernetes.Interface, last int) (rollouts, rollbacks int) {
	t.Helper()
	rollouts, rollbacks = f.templates.check(t, slices.Concat(f.plain, f.gated), last)
	r, b := f.clones.check(t, f.declared, last)
	rollouts, rollbacks = rollouts+r, rollbacks+b
	f.records.check(t, f.told, last)
	version := map[string]int{}
	for i := 1; i <= last; i++ {
		version[hash.SHA1.ConfigMap(versionData(i), nil)] = i
	}
	f.templates.mu.Lock()
	for _, n := range f.gated {
		for _, v := range f.templates.values[n] {
			if i := version[v]; v != "" && !f.approved[n][i] {
				t.Errorf("%s took version %d, which was never approved", n, i)
			}
		}
	}
	for _, n := range f.told {
		if vs := f.templates.values[n]; len(vs) != 1 || vs[0] != "" {
			t.Errorf("notify-only %s rolled: its template took %q", n, vs)
		}
	}
	f.templates.mu.Unlock()
	for _, n := range f.told {
		told := map[string]int32{}
		for _, e := range listEvents(t, cs, f.ns, metav1.ListOptions{FieldSelector: "reason=ReloadNotified,involvedObject.name=" + n}).Items {
			told[changeIDPattern.FindString(e.Message)] += e.Count
		}
		for change, times := range told {
			if times > 1 {
				t.Errorf("notify-only %s: change %s told %d times, want once", n, change, times)
			}
		}
	}
	return rollouts, rollbacks
}
