package compat

import (
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/reloader-dev/reloader/charts"
	"github.com/reloader-dev/reloader/test/controlplane"
)

// stakaterShaped is a chart whose objects have exactly the names, labels and
// selector stakater's chart 2.2.16 renders for a release with its default
// values: Deployment, container and ServiceAccount <release>-reloader,
// selector {app: <release>-reloader, release: <release>}, ClusterRole
// <fullname>-role bound by <fullname>-role-binding, Role
// <fullname>-metadata-role bound by <fullname>-metadata-role-binding. The
// templates are written here from those facts; nothing of that chart is
// copied.
func stakaterShaped() *chart.Chart {
	const labels = `
    app: {{ .Release.Name }}-reloader
    release: {{ .Release.Name | quote }}
    app.kubernetes.io/name: reloader
    app.kubernetes.io/instance: {{ .Release.Name | quote }}
    helm.sh/chart: "reloader-2.2.16"
    chart: "reloader-2.2.16"
    heritage: "Helm"
    app.kubernetes.io/managed-by: "Helm"
    app.kubernetes.io/version: "v1.4.21"`
	objects := `apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ .Release.Name }}-reloader
  namespace: {{ .Release.Namespace }}
  labels:` + labels + `
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ .Release.Name }}-reloader-role
  labels:` + labels + `
rules:
  - apiGroups: [""]
    resources: [secrets, configmaps]
    verbs: [list, get, watch]
  - apiGroups: [apps]
    resources: [deployments, daemonsets, statefulsets]
    verbs: [list, get, update, patch]
  - apiGroups: [batch]
    resources: [cronjobs]
    verbs: [list, get]
  - apiGroups: [batch]
    resources: [jobs]
    verbs: [create, delete, list, get]
  - apiGroups: [""]
    resources: [events]
    verbs: [create, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ .Release.Name }}-reloader-role-binding
  labels:` + labels + `
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ .Release.Name }}-reloader-role
subjects:
  - kind: ServiceAccount
    name: {{ .Release.Name }}-reloader
    namespace: {{ .Release.Namespace }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ .Release.Name }}-reloader-metadata-role
  namespace: {{ .Release.Namespace }}
  labels:` + labels + `
rules:
  - apiGroups: [""]
    resources: [configmaps]
    verbs: [list, get, watch, create, update]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ .Release.Name }}-reloader-metadata-role-binding
  namespace: {{ .Release.Namespace }}
  labels:` + labels + `
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ .Release.Name }}-reloader-metadata-role
subjects:
  - kind: ServiceAccount
    name: {{ .Release.Name }}-reloader
    namespace: {{ .Release.Namespace }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-reloader
  namespace: {{ .Release.Namespace }}
  labels:` + labels + `
    provider: stakater
    group: com.stakater.platform
    version: v1.4.21
spec:
  replicas: 1
  revisionHistoryLimit: 2
  selector:
    matchLabels:
      app: {{ .Release.Name }}-reloader
      release: {{ .Release.Name | quote }}
  template:
    metadata:
      labels:` + strings.ReplaceAll(labels, "\n", "\n    ") + `
        provider: stakater
        group: com.stakater.platform
        version: v1.4.21
    spec:
      serviceAccountName: {{ .Release.Name }}-reloader
      securityContext:
        runAsNonRoot: true
        runAsUser: 65534
        seccompProfile:
          type: RuntimeDefault
      containers:
        - name: {{ .Release.Name }}-reloader
          image: ghcr.io/stakater/reloader:v1.4.21
          imagePullPolicy: IfNotPresent
          args: ["--log-level=info"]
          env:
            - name: RELOADER_NAMESPACE
              valueFrom:
                fieldRef:
                  fieldPath: metadata.namespace
            - name: RELOADER_DEPLOYMENT_NAME
              value: {{ .Release.Name }}-reloader
          ports:
            - name: http
              containerPort: 9090
`
	return &chart.Chart{
		Metadata:  &chart.Metadata{APIVersion: "v1", Name: "reloader", Version: "2.2.16", AppVersion: "v1.4.21"},
		Templates: []*chart.File{{Name: "templates/objects.yaml", Data: []byte(objects)}},
	}
}

// helmConfig is the Helm SDK pointed at the test apiserver, storing releases
// as Secrets in ns, as the helm CLI does.
func helmConfig(t *testing.T, ns string) *action.Configuration {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "admin.kubeconfig")
	if err := controlplane.WriteKubeconfig(cp.Admin, kubeconfig); err != nil {
		t.Fatal(err)
	}
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &kubeconfig, &ns
	cfg := new(action.Configuration)
	if err := cfg.Init(flags, ns, "secret", func(string, ...any) {}); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// `helm upgrade` of a release installed with stakater's chart, with the
// values file that release was installed with, succeeds in place: same
// Deployment, selector, container, ServiceAccount and ClusterRole; and the
// controller it now runs, under that ServiceAccount, reloads.
func TestHelmUpgradeInPlaceFromAStakaterRelease(t *testing.T) {
	needControlPlane(t)
	ctx := testContext(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	const name = "reloader"
	cfg := helmConfig(t, ns)

	install := action.NewInstall(cfg)
	install.ReleaseName, install.Namespace = name, ns
	before, err := install.RunWithContext(ctx, stakaterShaped(), nil)
	if err != nil {
		t.Fatalf("installing the stakater-shaped release: %v", err)
	}
	old, err := cs.AppsV1().Deployments(ns).Get(ctx, "reloader-reloader", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	ours, err := charts.Load(charts.Reloader)
	if err != nil {
		t.Fatal(err)
	}
	upgrade := action.NewUpgrade(cfg)
	upgrade.Namespace = ns
	after, err := upgrade.RunWithContext(ctx, name, ours, fixture(t, "stakater-defaults.yaml"))
	if err != nil {
		t.Fatalf("helm upgrade from the stakater-shaped release: %v", err)
	}
	if after.Version != before.Version+1 || after.Info.Status != release.StatusDeployed {
		t.Fatalf("release %s is at version %d (%s), want %d deployed", name, after.Version, after.Info.Status, before.Version+1)
	}

	d, err := cs.AppsV1().Deployments(ns).Get(ctx, "reloader-reloader", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the Deployment is no longer reloader-reloader: %v", err)
	}
	if d.UID != old.UID {
		t.Errorf("the Deployment was replaced (uid %s -> %s), want it upgraded in place", old.UID, d.UID)
	}
	if got, want := d.Spec.Selector.MatchLabels, old.Spec.Selector.MatchLabels; len(got) != len(want) || got["app"] != want["app"] || got["release"] != want["release"] {
		t.Errorf("selector %v, want stakater's %v", got, want)
	}
	if c := d.Spec.Template.Spec.Containers[0]; c.Name != "reloader-reloader" {
		t.Errorf("container %s, want stakater's name reloader-reloader", c.Name)
	}
	if d.Spec.Template.Spec.ServiceAccountName != "reloader-reloader" {
		t.Errorf("ServiceAccount %s, want reloader-reloader", d.Spec.Template.Spec.ServiceAccountName)
	}
	if _, err := cs.RbacV1().ClusterRoles().Get(ctx, "reloader-reloader-role", metav1.GetOptions{}); err != nil {
		t.Errorf("ClusterRole reloader-reloader-role: %v", err)
	}
	if _, err := cs.RbacV1().RoleBindings(ns).Get(ctx, "reloader-reloader-metadata-role-binding", metav1.GetOptions{}); err != nil {
		t.Errorf("RoleBinding reloader-reloader-metadata-role-binding: %v", err)
	}

	// The upgraded Deployment, as stored, is what runs.
	runDeployment(t, ctx, d, ns, d.Spec.Template.Spec.ServiceAccountName)
	app := cp.Namespace(t)
	cm := configMap("settings", map[string]string{"k": "1"})
	if _, err := cs.CoreV1().ConfigMaps(app).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AppsV1().Deployments(app).Create(ctx, autoDeployment("web", "settings", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAdopted(t, ctx, cs, app, "web")
	cm.Data["k"] = "2"
	if _, err := cs.CoreV1().ConfigMaps(app).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitReloaded(t, ctx, cs, app, "web", "STAKATER_SETTINGS_CONFIGMAP")
}
