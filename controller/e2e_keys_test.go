package controller_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/test/reloadertest"
)

// keyedUse is one way a pod template names the key it uses: the workload,
// its resource (with keys USED and OTHER) and how it reads USED.
type keyedUse struct {
	deploy, resource string
	secret           bool
}

func keyedUses() []keyedUse {
	return []keyedUse{
		{deploy: "env-keyref", resource: "cfg-env"},
		{deploy: "volume-items", resource: "cfg-vol"},
		{deploy: "projected-items", resource: "sec-proj", secret: true},
	}
}

func (u keyedUse) objects() []any {
	data := map[string]string{"USED": "1", "OTHER": "1"}
	var res any = reloadertest.ConfigMap(u.resource, data)
	if u.secret {
		res = reloadertest.Secret(u.resource, data)
	}
	app := corev1.Container{Name: "app"}
	tmpl := reloadertest.PodTemplate(u.deploy)
	items := []corev1.KeyToPath{{Key: "USED", Path: "used"}}
	switch u.deploy {
	case "env-keyref":
		app.Env = []corev1.EnvVar{{Name: "USED", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: u.resource}, Key: "USED"}}}}
	case "volume-items":
		app.VolumeMounts = []corev1.VolumeMount{{Name: "cfg", MountPath: "/cfg"}}
		tmpl.Spec.Volumes = []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: u.resource}, Items: items}}}}
	case "projected-items":
		app.VolumeMounts = []corev1.VolumeMount{{Name: "proj", MountPath: "/proj"}}
		tmpl.Spec.Volumes = []corev1.Volume{{Name: "proj", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: u.resource}, Items: items}}}}}}}
	}
	image := tmpl.Spec.Containers[0].Image
	app.Image = image
	tmpl.Spec.Containers = []corev1.Container{app}
	return []any{res, reloadertest.Deployment(u.deploy, auto(), tmpl)}
}

// set writes key=value into the use's resource.
func (u keyedUse) set(ctx context.Context, cs kubernetes.Interface, ns, key, value string) error {
	if u.secret {
		return updateSecret(u.resource, func(s *corev1.Secret) { s.Data[key] = []byte(value) })(ctx, cs, ns)
	}
	return updateCM(u.resource, func(cm *corev1.ConfigMap) { cm.Data[key] = value })(ctx, cs, ns)
}

// settled waits until the controller has run more than after syncs and its
// queue is empty, then a second for a late rollout to show.
func settled(t *testing.T, r *reloaderProc, after float64) {
	t.Helper()
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		done, depth := r.metric(t, "reloader_workload_syncs_total"), r.metric(t, "reloader_workqueue_depth")
		return done > after && depth == 0, fmt.Sprintf("syncs %v (want > %v), queue depth %v", done, after, depth)
	})
	time.Sleep(time.Second)
}

func record(t *testing.T, cs kubernetes.Interface, ns, name string) string {
	t.Helper()
	return getDeployment(t, cs, ns, name).Annotations["reloader.dev/applied-hashes"]
}

func allRevisions(t *testing.T, cs kubernetes.Interface, ns string, uses []keyedUse, want int64) {
	t.Helper()
	for _, u := range uses {
		if g := revision(t, cs, ns, u.deploy); g != want {
			t.Errorf("%s: revision %d, want %d", u.deploy, g, want)
		}
	}
}

// With --reload-on-used-keys-only, for an env keyRef, volume items and
// projected items, under both strategies: a change to a key the workload
// does not use rolls nothing and leaves its record alone; a change to the
// key it uses rolls it once.
func TestPerKeyReloadsRollOnlyForUsedKeys(t *testing.T) {
	requireControlPlane(t)
	for _, strategy := range []string{"env-vars", "annotations"} {
		t.Run(strategy, func(t *testing.T) {
			ctx := ctxFor(t)
			cs := cp.AdminClient(t)
			ns := cp.Namespace(t)
			uses := keyedUses()
			for _, u := range uses {
				reloadertest.MustCreate(t, cs, ns, u.objects()...)
			}
			// POD_NAMESPACE: where the fingerprint key is kept (e2e_fingerprintkey_test.go).
			r := startReloaderEnv(t, "", []string{"POD_NAMESPACE=" + ns}, "--namespaces="+ns, "--reload-strategy="+strategy, "--reload-on-used-keys-only")
			records := map[string]string{}
			for _, u := range uses {
				waitRecorded(t, cs, ns, u.deploy)
				records[u.deploy] = record(t, cs, ns, u.deploy)
			}
			before := r.metric(t, "reloader_workload_syncs_total")
			for _, u := range uses {
				if err := u.set(ctx, cs, ns, "OTHER", "2"); err != nil {
					t.Fatal(err)
				}
			}
			settled(t, r, before+float64(len(uses))-1)
			allRevisions(t, cs, ns, uses, 1)
			for _, u := range uses {
				if got := record(t, cs, ns, u.deploy); got != records[u.deploy] {
					t.Errorf("%s: an unused key changed the record: %s, was %s", u.deploy, got, records[u.deploy])
				}
			}
			for _, u := range uses {
				if err := u.set(ctx, cs, ns, "USED", "2"); err != nil {
					t.Fatal(err)
				}
			}
			for _, u := range uses {
				waitRevision(t, cs, ns, u.deploy, 2, 0)
			}
			r.waitIdle(t, 2*len(uses))
			time.Sleep(time.Second)
			allRevisions(t, cs, ns, uses, 2)
		})
	}
}

// Turning per-key reloads on, then off, rolls nothing: a workload whose
// record (or, after a reload, its marker) matches the content under the old
// mode is adopted under the new one, and only its record changes. The pod
// template is compared whole.
func TestPerKeyMigrationRollsNothing(t *testing.T) {
	requireControlPlane(t)
	for _, strategy := range []string{"env-vars", "annotations"} {
		t.Run(strategy, func(t *testing.T) {
			ctx := ctxFor(t)
			cs := cp.AdminClient(t)
			ns := cp.Namespace(t)
			uses := keyedUses()
			for _, u := range uses {
				reloadertest.MustCreate(t, cs, ns, u.objects()...)
			}
			args := []string{"--namespaces=" + ns, "--reload-strategy=" + strategy}
			env := []string{"POD_NAMESPACE=" + ns}
			r := startReloaderEnv(t, "", env, args...)
			for _, u := range uses {
				waitRecorded(t, cs, ns, u.deploy)
			}
			// A reload under whole-resource mode leaves a marker of the whole hash.
			for _, u := range uses {
				if err := u.set(ctx, cs, ns, "OTHER", "2"); err != nil {
					t.Fatal(err)
				}
			}
			for _, u := range uses {
				waitRevision(t, cs, ns, u.deploy, 2, 0)
			}
			r.waitIdle(t, 2*len(uses))
			templates := map[string]string{}
			for _, u := range uses {
				templates[u.deploy] = templateOf(t, getDeployment(t, cs, ns, u.deploy))
			}
			for _, mode := range []string{"--reload-on-used-keys-only=true", "--reload-on-used-keys-only=false"} {
				if err := r.Stop(10 * time.Second); err != nil {
					t.Fatal(err)
				}
				old := map[string]string{}
				for _, u := range uses {
					old[u.deploy] = record(t, cs, ns, u.deploy)
				}
				r = startReloaderEnv(t, "", env, append(args, mode)...)
				for _, u := range uses {
					reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
						got := record(t, cs, ns, u.deploy)
						return got != old[u.deploy], fmt.Sprintf("%s %s: record %s not adopted under the new mode", mode, u.deploy, got)
					})
				}
				r.waitIdle(t, len(uses))
				time.Sleep(time.Second)
				allRevisions(t, cs, ns, uses, 2)
				for _, u := range uses {
					if got := templateOf(t, getDeployment(t, cs, ns, u.deploy)); got != templates[u.deploy] {
						t.Errorf("%s %s: the pod template changed on adoption:\n%s\nwas\n%s", mode, u.deploy, got, templates[u.deploy])
					}
				}
			}
		})
	}
}

func templateOf(t *testing.T, d *appsv1.Deployment) string {
	t.Helper()
	b, err := d.Spec.Template.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Invalid values are reported as other invalid annotations are (a
// ReloadFail Event, reloader_invalid_annotations_total); the controller
// keeps reloading.
func TestInvalidKeysAnnotationIsReported(t *testing.T) {
	requireControlPlane(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("cfg", map[string]string{"k": "1"}))
	ann := auto()
	ann["configmap.reloader.stakater.com/keys"] = "cfg"
	ann["reloader.stakater.com/reload-on-used-keys-only"] = "maybe"
	createDeployment(t, cs, ns, reloadertest.Deployment("web", ann, reloadertest.PodTemplate("web",
		corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromConfigMap("cfg")}})))
	r := startReloader(t, "", "--namespaces="+ns)
	waitRecorded(t, cs, ns, "web")
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		evs := listEvents(t, cs, ns, metav1.ListOptions{FieldSelector: "reason=ReloadFail,involvedObject.name=web"})
		return len(evs.Items) > 0, "no ReloadFail Event"
	})
	if n := r.metric(t, "reloader_invalid_annotations_total"); n < 1 {
		t.Errorf("reloader_invalid_annotations_total = %v, want >= 1", n)
	}
	if err := updateCM("cfg", func(cm *corev1.ConfigMap) { cm.Data["k"] = "2" })(ctx, cs, ns); err != nil {
		t.Fatal(err)
	}
	waitRevision(t, cs, ns, "web", 2, 0)
}
