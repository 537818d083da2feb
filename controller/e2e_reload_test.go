package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/controller"
	"github.com/reloader-dev/reloader/controller/hash"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/test/reloadertest"
)

// reloadCase is one annotation or reference rule: resources, a Deployment
// that uses them, a change, and whether that change must roll the Deployment
// (and which container then carries which STAKATER_* variable).
type reloadCase struct {
	name       string
	configMaps []*corev1.ConfigMap
	secrets    []*corev1.Secret
	deploy     *appsv1.Deployment
	change     func(ctx context.Context, cs kubernetes.Interface, ns string) error
	wantReload bool
	container  string // container expected to carry the variable
	variable   string
}

func updateCM(name string, mutate func(*corev1.ConfigMap)) func(context.Context, kubernetes.Interface, string) error {
	return func(ctx context.Context, cs kubernetes.Interface, ns string) error {
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		mutate(cm)
		_, err = cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
		return err
	}
}

func updateSecret(name string, mutate func(*corev1.Secret)) func(context.Context, kubernetes.Interface, string) error {
	return func(ctx context.Context, cs kubernetes.Interface, ns string) error {
		s, err := cs.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		mutate(s)
		_, err = cs.CoreV1().Secrets(ns).Update(ctx, s, metav1.UpdateOptions{})
		return err
	}
}

func auto() map[string]string { return map[string]string{"reloader.stakater.com/auto": "true"} }

func reloadCases() []reloadCase {
	cmVar := func(n string) string { return controller.EnvVarName(refs.ConfigMap, n) }
	secVar := func(n string) string { return controller.EnvVarName(refs.Secret, n) }
	setData := func(k, v string) func(*corev1.ConfigMap) { return func(c *corev1.ConfigMap) { c.Data[k] = v } }
	return []reloadCase{
		{
			name:       "auto, envFrom ConfigMap",
			configMaps: []*corev1.ConfigMap{reloadertest.ConfigMap("envfrom-cm", map[string]string{"k": "1"})},
			deploy: reloadertest.Deployment("envfrom-cm", auto(), reloadertest.PodTemplate("envfrom-cm",
				corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromConfigMap("envfrom-cm")}})),
			change: updateCM("envfrom-cm", setData("k", "2")), wantReload: true, container: "app", variable: cmVar("envfrom-cm"),
		},
		{
			name:    "auto, envFrom Secret changed through stringData",
			secrets: []*corev1.Secret{reloadertest.Secret("envfrom-secret", map[string]string{"password": "one"})},
			deploy: reloadertest.Deployment("envfrom-secret", auto(), reloadertest.PodTemplate("envfrom-secret",
				corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromSecret("envfrom-secret")}})),
			change: updateSecret("envfrom-secret", func(s *corev1.Secret) {
				s.StringData = map[string]string{"password": "two"}
			}),
			wantReload: true, container: "app", variable: secVar("envfrom-secret"),
		},
		{
			name:       "auto, projected volume mounted by the second container",
			configMaps: []*corev1.ConfigMap{reloadertest.ConfigMap("projected-cm", map[string]string{"ca.crt": "A"})},
			secrets:    []*corev1.Secret{reloadertest.Secret("projected-secret", map[string]string{"tls.key": "K"})},
			deploy: func() *appsv1.Deployment {
				tmpl := reloadertest.PodTemplate("projected",
					corev1.Container{Name: "app"},
					corev1.Container{Name: "proxy", VolumeMounts: []corev1.VolumeMount{{Name: "bundle", MountPath: "/bundle"}}})
				tmpl.Spec.Volumes = []corev1.Volume{{Name: "bundle", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
					Sources: []corev1.VolumeProjection{
						{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "projected-cm"}}},
						{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "projected-secret"}}},
					}}}}}
				return reloadertest.Deployment("projected", auto(), tmpl)
			}(),
			change:     updateSecret("projected-secret", func(s *corev1.Secret) { s.Data["tls.key"] = []byte("K2") }),
			wantReload: true, container: "proxy", variable: secVar("projected-secret"),
		},
		{
			name:       "auto, reference only in an init container marks the first container",
			configMaps: []*corev1.ConfigMap{reloadertest.ConfigMap("init-cm", map[string]string{"k": "1"})},
			deploy: func() *appsv1.Deployment {
				tmpl := reloadertest.PodTemplate("init-only", corev1.Container{Name: "main"})
				tmpl.Spec.InitContainers = []corev1.Container{{Name: "setup", Image: "registry.invalid/setup:1",
					Env: []corev1.EnvVar{{Name: "K", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: "init-cm"}, Key: "k"}}}}}}
				return reloadertest.Deployment("init-only", auto(), tmpl)
			}(),
			change: updateCM("init-cm", setData("k", "2")), wantReload: true, container: "main", variable: cmVar("init-cm"),
		},
		{
			name:       "auto, binaryData change",
			configMaps: []*corev1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Name: "binary-cm"}, Data: map[string]string{}, BinaryData: map[string][]byte{"blob": {0, 1}}}},
			deploy: reloadertest.Deployment("binary", auto(), reloadertest.PodTemplate("binary",
				corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromConfigMap("binary-cm")}})),
			change:     updateCM("binary-cm", func(c *corev1.ConfigMap) { c.BinaryData["blob"] = []byte{0, 2} }),
			wantReload: true, container: "app", variable: cmVar("binary-cm"),
		},
		{
			name:       "a label-only change does not reload",
			configMaps: []*corev1.ConfigMap{reloadertest.ConfigMap("labels-cm", map[string]string{"k": "1"})},
			deploy: reloadertest.Deployment("labels", auto(), reloadertest.PodTemplate("labels",
				corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromConfigMap("labels-cm")}})),
			change: updateCM("labels-cm", func(c *corev1.ConfigMap) { c.Labels = map[string]string{"team": "x"} }),
		},
		{
			name:       "named reload by regex list fires for an unused ConfigMap",
			configMaps: []*corev1.ConfigMap{reloadertest.ConfigMap("feature-flags-v2", map[string]string{"k": "1"})},
			deploy: reloadertest.Deployment("named", map[string]string{"configmap.reloader.stakater.com/reload": "other, feature-flags-.*"},
				reloadertest.PodTemplate("named", corev1.Container{Name: "first"}, corev1.Container{Name: "second"})),
			change: updateCM("feature-flags-v2", setData("k", "2")), wantReload: true, container: "first", variable: cmVar("feature-flags-v2"),
		},
		{
			name:       "exclude list beats auto",
			configMaps: []*corev1.ConfigMap{reloadertest.ConfigMap("excluded-cm", map[string]string{"k": "1"})},
			deploy: reloadertest.Deployment("excluded", map[string]string{"reloader.stakater.com/auto": "true", "configmaps.exclude.reloader.stakater.com/reload": "excluded-cm"},
				reloadertest.PodTemplate("excluded", corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromConfigMap("excluded-cm")}})),
			change: updateCM("excluded-cm", setData("k", "2")),
		},
		{
			name: "search and match",
			configMaps: []*corev1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Name: "matched-cm", Annotations: map[string]string{"reloader.stakater.com/match": "true"}},
				Data: map[string]string{"k": "1"}}},
			deploy: reloadertest.Deployment("search", map[string]string{"reloader.stakater.com/search": "true"},
				reloadertest.PodTemplate("search", corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromConfigMap("matched-cm")}})),
			change: updateCM("matched-cm", setData("k", "2")), wantReload: true, container: "app", variable: cmVar("matched-cm"),
		},
		{
			name:       "search without match does not reload",
			configMaps: []*corev1.ConfigMap{reloadertest.ConfigMap("unmatched-cm", map[string]string{"k": "1"})},
			deploy: reloadertest.Deployment("search-nomatch", map[string]string{"reloader.stakater.com/search": "true"},
				reloadertest.PodTemplate("search-nomatch", corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromConfigMap("unmatched-cm")}})),
			change: updateCM("unmatched-cm", setData("k", "2")),
		},
		{
			name: "ignore on the ConfigMap",
			configMaps: []*corev1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Name: "ignored-cm", Annotations: map[string]string{"reloader.stakater.com/ignore": "true"}},
				Data: map[string]string{"k": "1"}}},
			deploy: reloadertest.Deployment("ignored", auto(), reloadertest.PodTemplate("ignored",
				corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromConfigMap("ignored-cm")}})),
			change: updateCM("ignored-cm", setData("k", "2")),
		},
		{
			name:       "typed secret auto ignores ConfigMaps",
			configMaps: []*corev1.ConfigMap{reloadertest.ConfigMap("typed-cm", map[string]string{"k": "1"})},
			deploy: reloadertest.Deployment("typed", map[string]string{"secret.reloader.stakater.com/auto": "true"},
				reloadertest.PodTemplate("typed", corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromConfigMap("typed-cm")}})),
			change: updateCM("typed-cm", setData("k", "2")),
		},
		{
			name:       "auto on the pod template when metadata has none",
			configMaps: []*corev1.ConfigMap{reloadertest.ConfigMap("template-auto-cm", map[string]string{"k": "1"})},
			deploy: func() *appsv1.Deployment {
				tmpl := reloadertest.PodTemplate("template-auto", corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromConfigMap("template-auto-cm")}})
				tmpl.Annotations = auto()
				return reloadertest.Deployment("template-auto", nil, tmpl)
			}(),
			change: updateCM("template-auto-cm", setData("k", "2")), wantReload: true, container: "app", variable: cmVar("template-auto-cm"),
		},
	}
}

// Every annotation and reference rule, against one controller in env-vars
// mode: the Deployments that must roll roll exactly once, with the
// variable on the right container holding the new hash; the others do not.
func TestReloadRules(t *testing.T) {
	requireControlPlane(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	cases := reloadCases()
	for _, c := range cases {
		for _, cm := range c.configMaps {
			if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		for _, s := range c.secrets {
			if _, err := cs.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := cs.AppsV1().Deployments(ns).Create(ctx, c.deploy, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	r := startReloader(t, "", "--namespaces="+ns)
	for _, c := range cases {
		waitRecorded(t, cs, ns, c.deploy.Name)
	}
	for _, c := range cases {
		if err := c.change(ctx, cs, ns); err != nil {
			t.Fatalf("%s: applying the change: %v", c.name, err)
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := int64(1)
			if c.wantReload {
				want = 2
			}
			waitRevision(t, cs, ns, c.deploy.Name, want, 0)
			if !c.wantReload {
				return
			}
			d := getDeployment(t, cs, ns, c.deploy.Name)
			got, ok := reloadertest.EnvOf(d, c.container, c.variable)
			if !ok {
				t.Fatalf("container %q has no %s: %+v", c.container, c.variable, d.Spec.Template.Spec.Containers)
			}
			if len(got) != 40 {
				t.Fatalf("%s=%q is not a SHA-1 hex", c.variable, got)
			}
		})
	}
	// Let any late second rollout show, then check none happened.
	r.waitIdle(t, len(cases))
	time.Sleep(time.Second)
	for _, c := range cases {
		want := int64(1)
		if c.wantReload {
			want = 2
		}
		if g := revision(t, cs, ns, c.deploy.Name); g != want {
			t.Errorf("%s: revision %d, want %d (rolled more than once?)", c.name, g, want)
		}
	}
}

// The variable holds stakater/Reloader's hash of the new data, so clusters
// can migrate in both directions without a restart.
func TestEnvVarHoldsTheOriginalsHash(t *testing.T) {
	requireControlPlane(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, reloadertest.ConfigMap("app", map[string]string{"a": "1"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createDeployment(t, cs, ns, reloadertest.Deployment("web", auto(), reloadertest.PodTemplate("web",
		corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromConfigMap("app")}})))
	startReloader(t, "", "--namespaces="+ns)
	waitRecorded(t, cs, ns, "web")
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, reloadertest.ConfigMap("app", map[string]string{"a": "2", "b": "3"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRevision(t, cs, ns, "web", 2, 0)
	d := getDeployment(t, cs, ns, "web")
	got, _ := reloadertest.EnvOf(d, "app", "STAKATER_APP_CONFIGMAP")
	if want := hash.SHA1.ConfigMap(map[string]string{"a": "2", "b": "3"}, nil); got != want {
		t.Fatalf("STAKATER_APP_CONFIGMAP = %q, want %q", got, want)
	}
	// A new ReplicaSet exists for the new template: the rollout is real.
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		rs := listReplicaSets(t, cs, ns, metav1.ListOptions{LabelSelector: "app=web"})
		return len(rs.Items) == 2, fmt.Sprintf("%d ReplicaSets, want 2", len(rs.Items))
	})
}

// The annotations strategy writes the original's last-reloaded-from JSON on
// the pod template and no variables.
func TestAnnotationsStrategy(t *testing.T) {
	requireControlPlane(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, reloadertest.Secret("creds", map[string]string{"p": "1"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createDeployment(t, cs, ns, reloadertest.Deployment("api", auto(), reloadertest.PodTemplate("api",
		corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromSecret("creds")}})))
	startReloader(t, "", "--namespaces="+ns, "--reload-strategy=annotations")
	waitRecorded(t, cs, ns, "api")
	if _, err := cs.CoreV1().Secrets(ns).Update(ctx, reloadertest.Secret("creds", map[string]string{"p": "2"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRevision(t, cs, ns, "api", 2, 500*time.Millisecond)
	d := getDeployment(t, cs, ns, "api")
	v := d.Spec.Template.Annotations["reloader.stakater.com/last-reloaded-from"]
	for _, want := range []string{`"type":"SECRET"`, `"name":"creds"`, `"namespace":"` + ns + `"`, `"hash":"` + hash.SHA1.Secret(map[string][]byte{"p": []byte("2")}) + `"`, `"containerRefs":["app"]`} {
		if !strings.Contains(v, want) {
			t.Fatalf("last-reloaded-from %s lacks %s", v, want)
		}
	}
	if _, ok := reloadertest.EnvOf(d, "app", "STAKATER_CREDS_SECRET"); ok {
		t.Fatal("annotations strategy must not add variables")
	}
}

// An invalid regular expression on one workload is an Event and a metric;
// the controller keeps running and keeps reloading the others.
func TestInvalidAnnotationIsReportedAndOthersStillReload(t *testing.T) {
	requireControlPlane(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, reloadertest.ConfigMap("cfg", map[string]string{"k": "1"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createDeployment(t, cs, ns, reloadertest.Deployment("broken", map[string]string{"configmap.reloader.stakater.com/reload": "([unclosed"},
		reloadertest.PodTemplate("broken")))
	createDeployment(t, cs, ns, reloadertest.Deployment("healthy", auto(), reloadertest.PodTemplate("healthy",
		corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromConfigMap("cfg")}})))
	r := startReloader(t, "", "--namespaces="+ns)
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		evs := listEvents(t, cs, ns, metav1.ListOptions{FieldSelector: "involvedObject.name=broken,reason=ReloadFail"})
		for _, e := range evs.Items {
			if strings.Contains(e.Message, "([unclosed") && strings.Contains(e.Message, "configmap.reloader.stakater.com/reload") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("no ReloadFail event naming the bad regex on broken (%d events)", len(evs.Items))
	})
	if v := r.metric(t, "reloader_invalid_annotations_total"); v < 1 {
		t.Fatalf("reloader_invalid_annotations_total = %v, want >= 1", v)
	}
	waitRecorded(t, cs, ns, "healthy")
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, reloadertest.ConfigMap("cfg", map[string]string{"k": "2"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRevision(t, cs, ns, "healthy", 2, 0)
	if exited, err := r.Exited(); exited {
		t.Fatalf("controller exited: %v", err)
	}
}

// A Deployment that uses a ConfigMap that does not exist gets one Warning
// event naming it; creating it later is a baseline, not a reload, unless
// --reload-on-create is on.
func TestMissingConfigMapIsReported(t *testing.T) {
	requireControlPlane(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	createDeployment(t, cs, ns, reloadertest.Deployment("early", auto(), reloadertest.PodTemplate("early",
		corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromConfigMap("late")}})))
	startReloader(t, "", "--namespaces="+ns, "--reload-on-create=true")
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		evs := listEvents(t, cs, ns, metav1.ListOptions{FieldSelector: "involvedObject.name=early,reason=ReloadFail"})
		for _, e := range evs.Items {
			if strings.Contains(e.Message, `ConfigMap "late"`) && strings.Contains(e.Message, "does not exist") {
				return true, ""
			}
		}
		return false, "no ReloadFail event about the missing ConfigMap"
	})
	waitRecorded(t, cs, ns, "early")
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, reloadertest.ConfigMap("late", map[string]string{"k": "1"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRevision(t, cs, ns, "early", 2, 500*time.Millisecond)
}

// --reload-on-delete: deleting a watched ConfigMap removes its variable,
// which rolls the workload once.
func TestReloadOnDelete(t *testing.T) {
	requireControlPlane(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, reloadertest.ConfigMap("doomed", map[string]string{"k": "1"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createDeployment(t, cs, ns, reloadertest.Deployment("user", auto(), reloadertest.PodTemplate("user",
		corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromConfigMap("doomed")}})))
	startReloader(t, "", "--namespaces="+ns, "--reload-on-delete=true")
	waitRecorded(t, cs, ns, "user")
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, reloadertest.ConfigMap("doomed", map[string]string{"k": "2"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRevision(t, cs, ns, "user", 2, 0)
	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRevision(t, cs, ns, "user", 3, 500*time.Millisecond)
	d := getDeployment(t, cs, ns, "user")
	if _, ok := reloadertest.EnvOf(d, "app", "STAKATER_DOOMED_CONFIGMAP"); ok {
		t.Fatal("the variable of a deleted ConfigMap must be removed")
	}
}

// A Deployment with a pause period is paused by the reload and resumed by the
// controller once the period has passed; the deadline is on the object.
func TestPausePeriod(t *testing.T) {
	requireControlPlane(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, reloadertest.ConfigMap("cfg", map[string]string{"k": "1"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ann := auto()
	ann["deployment.reloader.stakater.com/pause-period"] = "2s"
	createDeployment(t, cs, ns, reloadertest.Deployment("paused", ann, reloadertest.PodTemplate("paused",
		corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromConfigMap("cfg")}})))
	startReloader(t, "", "--namespaces="+ns)
	waitRecorded(t, cs, ns, "paused")
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, reloadertest.ConfigMap("cfg", map[string]string{"k": "2"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	reloadertest.Eventually(t, 20*time.Second, func() (bool, string) {
		d := getDeployment(t, cs, ns, "paused")
		_, at := d.Annotations["deployment.reloader.stakater.com/paused-at"]
		return d.Spec.Paused && at, "not paused with paused-at after the reload"
	})
	reloadertest.Eventually(t, 20*time.Second, func() (bool, string) {
		d := getDeployment(t, cs, ns, "paused")
		_, at := d.Annotations["deployment.reloader.stakater.com/paused-at"]
		return !d.Spec.Paused && !at, "still paused after the pause period"
	})
}
