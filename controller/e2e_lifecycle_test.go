package controller_test

// Creation and deletion of watched resources (stakater's test/e2e/flags
// reload-on-create and reload-on-delete cases), changes racing a workload's
// first sighting (its test/e2e/advanced Job cases), and changes deliberately
// not applied being logged and counted.

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/controller"
	"github.com/reloader-dev/reloader/controller/hash"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/test/reloadertest"
)

const lastReloadedFrom = "reloader.stakater.com/last-reloaded-from"

func cmReload(names string) map[string]string {
	return map[string]string{"configmap.reloader.stakater.com/reload": names}
}

func secretReload(names string) map[string]string {
	return map[string]string{"secret.reloader.stakater.com/reload": names}
}

func mustDelete(t *testing.T, cs kubernetes.Interface, ns string, kind refs.Kind, name string) {
	t.Helper()
	var err error
	if kind == refs.Secret {
		err = cs.CoreV1().Secrets(ns).Delete(context.Background(), name, metav1.DeleteOptions{})
	} else {
		err = cs.CoreV1().ConfigMaps(ns).Delete(context.Background(), name, metav1.DeleteOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// reloadedFrom waits for a Deployment's rollout revision want and returns its
// last-reloaded-from annotation (annotations strategy).
func reloadedFrom(t *testing.T, cs kubernetes.Interface, ns, name string, want int64) string {
	t.Helper()
	waitRevision(t, cs, ns, name, want, 0)
	return getDeployment(t, cs, ns, name).Spec.Template.Annotations[lastReloadedFrom]
}

func wantReloadedFrom(t *testing.T, got string, kind, name, h string) {
	t.Helper()
	for _, want := range []string{`"type":"` + kind + `"`, `"name":"` + name + `"`, `"hash":"` + h + `"`} {
		if !strings.Contains(got, want) {
			t.Fatalf("last-reloaded-from %s lacks %s", got, want)
		}
	}
}

// log returns the controller's whole log so far.
func (r *reloaderProc) log(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(r.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wantNotApplied checks that a change deliberately not applied was counted
// under reason in reloader_skipped_total and logged naming the workload.
func (r *reloaderProc) wantNotApplied(t *testing.T, reason, workload string) {
	t.Helper()
	reloadertest.Eventually(t, 20*time.Second, func() (bool, string) {
		n := r.metric(t, `reloader_skipped_total{reason="`+reason+`"}`)
		return n >= 1, fmt.Sprintf("reloader_skipped_total{reason=%q} = %v, want >= 1", reason, n)
	})
	for _, line := range strings.Split(r.log(t), "\n") {
		if strings.Contains(line, "change not applied") && strings.Contains(line, reason) && strings.Contains(line, workload) {
			return
		}
	}
	t.Fatalf("no %q log line naming %s and %s", "change not applied", reason, workload)
}

// With --reload-on-create and --reload-on-delete, a Deployment that names a
// ConfigMap or Secret only in its reload list (its pod spec does not use it)
// rolls when that resource is created and when it is deleted: stakater's
// flags cases "should reload when a new ConfigMap/Secret is created" and
// "should reload when a referenced ConfigMap/Secret is deleted", in its
// annotations strategy. The same holds for a name matched by a regular
// expression, for a resource deleted and created again, and for a resource a
// search workload uses that is created carrying match.
func TestReloadOnCreateAndDeleteOfNamedResources(t *testing.T) {
	requireControlPlane(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	startReloader(t, "", "--namespaces="+ns, "--reload-strategy=annotations", "--reload-on-create=true", "--reload-on-delete=true")

	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("doomed-cm", map[string]string{"key": "value"}))
	reloadertest.MustCreate(t, cs, ns, reloadertest.Secret("doomed-secret", map[string]string{"password": "secret"}))
	createDeployment(t, cs, ns, reloadertest.Deployment("create-cm", cmReload("late-cm"), reloadertest.PodTemplate("create-cm")))
	createDeployment(t, cs, ns, reloadertest.Deployment("create-secret", secretReload("late-secret"), reloadertest.PodTemplate("create-secret")))
	createDeployment(t, cs, ns, reloadertest.Deployment("delete-cm", cmReload("doomed-cm"), reloadertest.PodTemplate("delete-cm")))
	createDeployment(t, cs, ns, reloadertest.Deployment("delete-secret", secretReload("doomed-secret"), reloadertest.PodTemplate("delete-secret")))
	createDeployment(t, cs, ns, reloadertest.Deployment("by-regex", cmReload("other,feature-.*"), reloadertest.PodTemplate("by-regex")))
	createDeployment(t, cs, ns, reloadertest.Deployment("search", map[string]string{"reloader.stakater.com/search": "true"},
		reloadertest.PodTemplate("search", corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromConfigMap("matched-late")}})))
	createDeployment(t, cs, ns, reloadertest.Deployment("search-nomatch", map[string]string{"reloader.stakater.com/search": "true"},
		reloadertest.PodTemplate("search-nomatch", corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromConfigMap("unmatched-late")}})))
	createDeployment(t, cs, ns, reloadertest.Deployment("typed-auto", map[string]string{"secret.reloader.stakater.com/auto": "true"},
		reloadertest.PodTemplate("typed-auto", corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromSecret("typed-late")}})))
	for _, d := range []string{"create-cm", "create-secret", "delete-cm", "delete-secret", "by-regex", "search", "search-nomatch", "typed-auto"} {
		waitRecorded(t, cs, ns, d)
	}
	// What the record holds for resources that do not exist yet: the reload
	// list (every match not listed is missing), or "" for a pod-spec use.
	for d, want := range map[string]string{"create-cm": `{"configmap/*":"late-cm"}`, "search": `{"configmap/matched-late":""}`} {
		if got := getDeployment(t, cs, ns, d).Annotations["reloader.dev/applied-hashes"]; got != want {
			t.Fatalf("%s: record %s, want %s", d, got, want)
		}
	}

	cmData := map[string]string{"key": "value"}
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("late-cm", cmData))
	reloadertest.MustCreate(t, cs, ns, reloadertest.Secret("late-secret", map[string]string{"password": "secret"}))
	mustDelete(t, cs, ns, refs.ConfigMap, "doomed-cm")
	mustDelete(t, cs, ns, refs.Secret, "doomed-secret")
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("feature-a", map[string]string{"on": "1"}))
	matched := reloadertest.ConfigMap("matched-late", cmData)
	matched.Annotations = map[string]string{"reloader.stakater.com/match": "true"}
	reloadertest.MustCreate(t, cs, ns, matched)
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("unmatched-late", cmData))
	reloadertest.MustCreate(t, cs, ns, reloadertest.Secret("typed-late", map[string]string{"password": "secret"}))

	cmHash := hash.SHA1.ConfigMap(cmData, nil)
	t.Run("ConfigMap created", func(t *testing.T) {
		wantReloadedFrom(t, reloadedFrom(t, cs, ns, "create-cm", 2), "CONFIGMAP", "late-cm", cmHash)
	})
	t.Run("Secret created", func(t *testing.T) {
		wantReloadedFrom(t, reloadedFrom(t, cs, ns, "create-secret", 2), "SECRET", "late-secret", hashOfSecret(map[string]string{"password": "secret"}))
	})
	t.Run("ConfigMap deleted", func(t *testing.T) {
		wantReloadedFrom(t, reloadedFrom(t, cs, ns, "delete-cm", 2), "CONFIGMAP", "doomed-cm", hash.SHA1.Empty())
	})
	t.Run("Secret deleted", func(t *testing.T) {
		wantReloadedFrom(t, reloadedFrom(t, cs, ns, "delete-secret", 2), "SECRET", "doomed-secret", hash.SHA1.Empty())
	})
	t.Run("search workload, used ConfigMap created with match", func(t *testing.T) {
		wantReloadedFrom(t, reloadedFrom(t, cs, ns, "search", 2), "CONFIGMAP", "matched-late", cmHash)
	})
	t.Run("typed auto, used Secret created", func(t *testing.T) {
		wantReloadedFrom(t, reloadedFrom(t, cs, ns, "typed-auto", 2), "SECRET", "typed-late", hashOfSecret(map[string]string{"password": "secret"}))
	})
	t.Run("search workload, used ConfigMap created without match", func(t *testing.T) {
		waitRevision(t, cs, ns, "search-nomatch", 1, 0)
	})
	t.Run("name matched by a regex: created, deleted, created again", func(t *testing.T) {
		wantReloadedFrom(t, reloadedFrom(t, cs, ns, "by-regex", 2), "CONFIGMAP", "feature-a", hash.SHA1.ConfigMap(map[string]string{"on": "1"}, nil))
		mustDelete(t, cs, ns, refs.ConfigMap, "feature-a")
		wantReloadedFrom(t, reloadedFrom(t, cs, ns, "by-regex", 3), "CONFIGMAP", "feature-a", hash.SHA1.Empty())
		reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("feature-a", map[string]string{"on": "2"}))
		wantReloadedFrom(t, reloadedFrom(t, cs, ns, "by-regex", 4), "CONFIGMAP", "feature-a", hash.SHA1.ConfigMap(map[string]string{"on": "2"}, nil))
		// A name that comes and goes leaves nothing behind in the record:
		// the wildcard entry stands for every match not listed.
		mustDelete(t, cs, ns, refs.ConfigMap, "feature-a")
		waitRevision(t, cs, ns, "by-regex", 5, 0)
		reloadertest.Eventually(t, 20*time.Second, func() (bool, string) {
			rec := getDeployment(t, cs, ns, "by-regex").Annotations["reloader.dev/applied-hashes"]
			return rec == `{"configmap/*":"other,feature-.*"}`, "record " + rec
		})
	})
	// Nothing rolled twice.
	time.Sleep(time.Second)
	for d, want := range map[string]int64{"create-cm": 2, "create-secret": 2, "delete-cm": 2, "delete-secret": 2, "search": 2, "search-nomatch": 1, "by-regex": 5, "typed-auto": 2} {
		if got := revision(t, cs, ns, d); got != want {
			t.Errorf("%s: revision %d, want %d", d, got, want)
		}
	}
}

// Without the flags (the default), creating or deleting a resource a
// Deployment names rolls nothing: stakater's "should NOT reload when a new
// ConfigMap is created" and "should NOT reload when a referenced ConfigMap is
// deleted". Each such change is logged and counted with its reason, as is a
// change to a resource a workload uses but does not select.
func TestCreateAndDeleteAreNotAppliedWithoutTheFlags(t *testing.T) {
	requireControlPlane(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	r := startReloader(t, "", "--namespaces="+ns, "--reload-strategy=annotations")
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("doomed-cm", map[string]string{"key": "value"}))
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("typed-cm", map[string]string{"key": "value"}))
	createDeployment(t, cs, ns, reloadertest.Deployment("create-cm", cmReload("late-cm"), reloadertest.PodTemplate("create-cm")))
	createDeployment(t, cs, ns, reloadertest.Deployment("delete-cm", cmReload("doomed-cm"), reloadertest.PodTemplate("delete-cm")))
	createDeployment(t, cs, ns, reloadertest.Deployment("typed", map[string]string{"secret.reloader.stakater.com/auto": "true"},
		reloadertest.PodTemplate("typed", corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromConfigMap("typed-cm")}})))
	for _, d := range []string{"create-cm", "delete-cm", "typed"} {
		waitRecorded(t, cs, ns, d)
	}
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("late-cm", map[string]string{"key": "value"}))
	mustDelete(t, cs, ns, refs.ConfigMap, "doomed-cm")
	updateConfigMapData(t, cs, ns, "typed-cm", map[string]string{"key": "changed"})

	r.wantNotApplied(t, "reload_on_create_disabled", "create-cm")
	r.wantNotApplied(t, "reload_on_delete_disabled", "delete-cm")
	r.wantNotApplied(t, "not_named", "typed")
	r.waitIdle(t, 3)
	time.Sleep(time.Second)
	for _, d := range []string{"create-cm", "delete-cm", "typed"} {
		if got := revision(t, cs, ns, d); got != 1 {
			t.Errorf("%s: revision %d, want 1", d, got)
		}
		if from, ok := getDeployment(t, cs, ns, d).Spec.Template.Annotations[lastReloadedFrom]; ok {
			t.Errorf("%s: reloaded from %s", d, from)
		}
	}
	// The created resource is now the baseline: a later change rolls.
	updateConfigMapData(t, cs, ns, "late-cm", map[string]string{"key": "changed"})
	waitRevision(t, cs, ns, "create-cm", 2, 0)
}

// In the env-vars strategy, deleting a resource the workload was never
// reloaded for has no variable to remove and changes nothing, as in the
// original; it is counted, not rolled.
func TestDeleteWithNothingToRemoveRollsNothing(t *testing.T) {
	requireControlPlane(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	r := startReloader(t, "", "--namespaces="+ns, "--reload-on-delete=true")
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("gone", map[string]string{"k": "1"}))
	createDeployment(t, cs, ns, reloadertest.Deployment("named", cmReload("gone"), reloadertest.PodTemplate("named")))
	waitRecorded(t, cs, ns, "named")
	mustDelete(t, cs, ns, refs.ConfigMap, "gone")
	r.wantNotApplied(t, "no_variable_to_remove", "named")
	waitRevision(t, cs, ns, "named", 1, 500*time.Millisecond)
}

// stakater's test/e2e/advanced Job cases, with the change made right after
// the Job is created (as its suite does, about 10 ms later): the change is
// never taken as the Job's starting state. Each Job is recreated exactly once,
// carrying the new hash.
func TestJobChangedRightAfterCreationIsRecreated(t *testing.T) {
	requireControlPlane(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	r := startReloader(t, "", "--namespaces="+ns, "--reload-strategy=annotations")
	keyRef := func(kind refs.Kind, name, key string) corev1.Container {
		src := &corev1.EnvVarSource{}
		if kind == refs.Secret {
			src.SecretKeyRef = &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key}
		} else {
			src.ConfigMapKeyRef = &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key}
		}
		return corev1.Container{Name: "job", Env: []corev1.EnvVar{{Name: "VALUE", ValueFrom: src}}}
	}
	envFrom := func(kind refs.Kind, name string) corev1.Container {
		ef := reloadertest.EnvFromConfigMap(name)
		if kind == refs.Secret {
			ef = reloadertest.EnvFromSecret(name)
		}
		return corev1.Container{Name: "job", EnvFrom: []corev1.EnvFromSource{ef}}
	}
	cases := []struct {
		name      string // Job and resource name
		kind      refs.Kind
		ann       map[string]string
		container corev1.Container
	}{
		{"cm-envfrom", refs.ConfigMap, cmReload("cm-envfrom"), envFrom(refs.ConfigMap, "cm-envfrom")},
		{"secret-envfrom", refs.Secret, secretReload("secret-envfrom"), envFrom(refs.Secret, "secret-envfrom")},
		{"auto-envfrom", refs.ConfigMap, auto(), envFrom(refs.ConfigMap, "auto-envfrom")},
		{"cm-valuefrom", refs.ConfigMap, cmReload("cm-valuefrom"), keyRef(refs.ConfigMap, "cm-valuefrom", "k")},
		{"secret-valuefrom", refs.Secret, secretReload("secret-valuefrom"), keyRef(refs.Secret, "secret-valuefrom", "k")},
	}
	uids := map[string]types.UID{}
	for _, c := range cases {
		if c.kind == refs.Secret {
			reloadertest.MustCreate(t, cs, ns, reloadertest.Secret(c.name, map[string]string{"k": "initial"}))
		} else {
			reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap(c.name, map[string]string{"k": "initial"}))
		}
	}
	var slowest time.Duration
	for _, c := range cases {
		tmpl := reloadertest.PodTemplate(c.name, c.container)
		tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
		job, err := cs.BatchV1().Jobs(ns).Create(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: c.name, Annotations: c.ann}, Spec: batchv1.JobSpec{Template: tmpl}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		created := time.Now()
		if c.kind == refs.Secret {
			_, err = cs.CoreV1().Secrets(ns).Update(ctx, reloadertest.Secret(c.name, map[string]string{"k": "updated"}), metav1.UpdateOptions{})
		} else {
			_, err = cs.CoreV1().ConfigMaps(ns).Update(ctx, reloadertest.ConfigMap(c.name, map[string]string{"k": "updated"}), metav1.UpdateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
		slowest = max(slowest, time.Since(created))
		uids[c.name] = job.UID
	}
	t.Logf("each change was written at most %s after its Job was created", slowest)
	recreated := map[string]types.UID{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var j *batchv1.Job
			reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
				var err error
				j, err = cs.BatchV1().Jobs(ns).Get(ctx, c.name, metav1.GetOptions{})
				if err != nil {
					return false, err.Error()
				}
				return j.UID != uids[c.name], "Job " + c.name + " not recreated"
			})
			recreated[c.name] = j.UID
			want := hash.SHA1.ConfigMap(map[string]string{"k": "updated"}, nil)
			kind := "CONFIGMAP"
			if c.kind == refs.Secret {
				want, kind = hashOfSecret(map[string]string{"k": "updated"}), "SECRET"
			}
			wantReloadedFrom(t, j.Spec.Template.Annotations[lastReloadedFrom], kind, c.name, want)
		})
	}
	r.waitIdle(t, 2*len(cases))
	time.Sleep(time.Second)
	for _, c := range cases {
		j, err := cs.BatchV1().Jobs(ns).Get(ctx, c.name, metav1.GetOptions{})
		if err != nil || j.UID != recreated[c.name] {
			t.Errorf("Job %s recreated more than once (err %v)", c.name, err)
		}
	}
}

// A Deployment created and its ConfigMap changed within 10 ms, 50 times in a
// row: no change is missed (every Deployment ends with the new hash) and none
// is applied twice (exactly one reload each).
func TestChangeRightAfterCreationIsNeverLost(t *testing.T) {
	requireControlPlane(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	r := startReloader(t, "", "--namespaces="+ns)
	const n = 50
	name := func(i int) string { return fmt.Sprintf("race-%02d", i) }
	for i := range n {
		reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap(name(i), map[string]string{"k": "before"}))
	}
	var replicas int32
	var gaps []time.Duration
	for i := range n {
		d := reloadertest.Deployment(name(i), auto(), usesConfigMap(name(i), name(i)))
		d.Spec.Replicas = &replicas
		if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		created := time.Now()
		if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, reloadertest.ConfigMap(name(i), map[string]string{"k": "after"}), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		gaps = append(gaps, time.Since(created))
	}
	// Each change is sent the moment its Deployment's creation is
	// acknowledged; the gap is until the change itself is acknowledged, an
	// upper bound of the time between the two writes.
	slices.Sort(gaps)
	within := 0
	for _, g := range gaps {
		if g <= 10*time.Millisecond {
			within++
		}
	}
	t.Logf("changes acknowledged %v (median) and %v (max) after their Deployment's creation; %d of %d within 10 ms",
		gaps[n/2].Round(100*time.Microsecond), gaps[n-1].Round(100*time.Microsecond), within, n)
	want := hash.SHA1.ConfigMap(map[string]string{"k": "after"}, nil)
	reloadertest.Eventually(t, 60*time.Second, func() (bool, string) {
		for i := range n {
			d := getDeployment(t, cs, ns, name(i))
			if got, _ := reloadertest.EnvOf(d, "app", controller.EnvVarName(refs.ConfigMap, name(i))); got != want {
				return false, fmt.Sprintf("%s: variable %q, want %q", name(i), got, want)
			}
		}
		return true, ""
	})
	r.waitIdle(t, 2*n)
	time.Sleep(time.Second)
	if got := r.metric(t, `reloader_reload_executed_total{success="true"}`); got != n {
		t.Fatalf("%v reloads for %d changes, want exactly one each", got, n)
	}
	// Deployments first seen before their change were adopted; the others
	// met their change at first sight, which the old rule lost.
	t.Logf("%v of %d Deployments first seen after their change", n-r.metric(t, `reloader_skipped_total{reason="adopted_baseline"}`), n)
}

// Adopting workloads the controller did not see being created (here: created
// before it started) rolls nothing, whether or not their resources changed
// since; each adoption is logged and counted as adopted_baseline.
func TestAdoptionRollsNothing(t *testing.T) {
	requireControlPlane(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("steady", map[string]string{"k": "1"}))
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("moved", map[string]string{"k": "1"}))
	createDeployment(t, cs, ns, reloadertest.Deployment("steady", auto(), usesConfigMap("steady", "steady")))
	createDeployment(t, cs, ns, reloadertest.Deployment("moved", auto(), usesConfigMap("moved", "moved")))
	updateConfigMapData(t, cs, ns, "moved", map[string]string{"k": "2"})
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		return revision(t, cs, ns, "steady") == 1 && revision(t, cs, ns, "moved") == 1, "first ReplicaSets not there yet"
	})
	r := startReloader(t, "", "--namespaces="+ns)
	waitRecorded(t, cs, ns, "steady")
	waitRecorded(t, cs, ns, "moved")
	r.wantNotApplied(t, "adopted_baseline", "steady")
	r.wantNotApplied(t, "adopted_baseline", "moved")
	waitRevision(t, cs, ns, "steady", 1, 0)
	waitRevision(t, cs, ns, "moved", 1, 500*time.Millisecond)
}

// stakater's test/e2e/advanced "Job with SecretProviderClass reference": a
// Job mounting a Secrets Store CSI class and naming it in its reload list is
// recreated when the class's mounts report a new object version. (The
// original drives Vault and the CSI driver; here the driver's
// SecretProviderClassPodStatus is written directly.)
func TestJobWithSecretProviderClassIsRecreated(t *testing.T) {
	requireControlPlane(t)
	dyn := installCRDs(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	first := csiClass(t, dyn, ns, "vault-job", "job-pod")
	tmpl := mountsClass("job", "job", "vault-job")
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	r := startReloader(t, "", "--namespaces="+ns, "--enable-csi-integration", "--reload-strategy=annotations")
	job, err := cs.BatchV1().Jobs(ns).Create(ctx, &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "vault-job", Annotations: map[string]string{"secretproviderclass.reloader.stakater.com/reload": "vault-job"}},
		Spec:       batchv1.JobSpec{Template: tmpl},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		j, err := cs.BatchV1().Jobs(ns).Get(ctx, "vault-job", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		_, ok := j.Annotations["reloader.dev/applied-hashes"]
		return ok && j.UID == job.UID, "Job not recorded yet"
	})
	next := spcPodStatus(ns, "vault-job", "job-pod", "2")
	next.SetResourceVersion(first.GetResourceVersion())
	if _, err := dyn.Resource(spcpsGVR).Namespace(ns).Update(ctx, next, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var recreated types.UID
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		j, err := cs.BatchV1().Jobs(ns).Get(ctx, "vault-job", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		recreated = j.UID
		return j.UID != job.UID && strings.Contains(j.Spec.Template.Annotations[lastReloadedFrom], `"type":"SECRETPROVIDERCLASS"`), "Job not recreated for the class"
	})
	r.waitIdle(t, 3)
	time.Sleep(500 * time.Millisecond)
	if j, err := cs.BatchV1().Jobs(ns).Get(ctx, "vault-job", metav1.GetOptions{}); err != nil || j.UID != recreated {
		t.Fatalf("Job recreated more than once (err %v)", err)
	}
}

// csiClass creates a SecretProviderClass and the status the CSI driver
// writes for one pod mounting it (object version 1), and returns that status.
func csiClass(t *testing.T, dyn dynamic.Interface, ns, class, pod string) *unstructured.Unstructured {
	t.Helper()
	spc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "secrets-store.csi.x-k8s.io/v1", "kind": "SecretProviderClass",
		"metadata": map[string]any{"name": class}, "spec": map[string]any{"provider": "vault"},
	}}
	if _, err := dyn.Resource(spcGVR).Namespace(ns).Create(context.Background(), spc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := dyn.Resource(spcpsGVR).Namespace(ns).Create(context.Background(), spcPodStatus(ns, class, pod, "1"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// spcPodStatus is the SecretProviderClassPodStatus of pod's mount of class,
// reporting one object at version.
func spcPodStatus(ns, class, pod, version string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "secrets-store.csi.x-k8s.io/v1", "kind": "SecretProviderClassPodStatus",
		"metadata": map[string]any{"name": pod + "-" + ns + "-" + class},
		"status": map[string]any{"secretProviderClassName": class, "podName": pod, "mounted": true,
			"objects": []any{map[string]any{"id": "secret/db-password", "version": version}}},
	}}
}

// mountsClass is a pod template whose container mounts class through the
// Secrets Store CSI driver.
func mountsClass(app, container, class string) corev1.PodTemplateSpec {
	tmpl := reloadertest.PodTemplate(app, corev1.Container{Name: container, VolumeMounts: []corev1.VolumeMount{{Name: "secrets", MountPath: "/mnt/secrets"}}})
	tmpl.Spec.Volumes = []corev1.Volume{{Name: "secrets", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{
		Driver: "secrets-store.csi.k8s.io", VolumeAttributes: map[string]string{"secretProviderClass": class}}}}}
	return tmpl
}
