package controlplane_test

import (
	"context"
	"os"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/test/controlplane"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	os.Exit(controlplane.RunTests(m, controlplane.Options{ControllerManager: true}, &cp))
}

// A Deployment on this control plane gets a real ReplicaSet from the real
// deployment controller.
func TestDeploymentGetsReplicaSet(t *testing.T) {
	cp.LogsOnFailure(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app-config"}, Data: map[string]string{"k": "v"}}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "web"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "web", Image: "example.invalid/web:1",
					EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}}},
				}}},
			},
		},
	}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		rs, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, r := range rs.Items {
			for _, o := range r.OwnerReferences {
				if o.Kind == "Deployment" && o.Name == "web" {
					return true, nil
				}
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no ReplicaSet for Deployment %s/web: %v", ns, err)
	}
}

// RBAC is enforced: a user granted only `get configmaps` can read a ConfigMap
// but is forbidden to list Secrets, both as a real request and as the
// apiserver's own SubjectAccessReview answers.
func TestRBACIsEnforced(t *testing.T) {
	cp.LogsOnFailure(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := cp.Namespace(t)
	admin := cp.AdminClient(t)
	if _, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "readable"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	const user = "configmap-reader"
	rules := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}}
	if err := cp.Grant(ctx, "configmap-reader", ns, controlplane.User(user), rules); err != nil {
		t.Fatal(err)
	}
	cfg, err := cp.UserConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)

	// RBAC caches take a moment to see the new binding.
	err = wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "readable", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("user %s cannot get the ConfigMap it was granted: %v", user, err)
	}
	_, err = cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("listing secrets as %s: got %v, want Forbidden", user, err)
	}
	allowed, _, err := cp.Allowed(ctx, user, nil, authorizationv1.ResourceAttributes{Namespace: ns, Verb: "list", Resource: "secrets"})
	if err != nil || allowed {
		t.Fatalf("SubjectAccessReview list secrets for %s: allowed=%v err=%v, want denied", user, allowed, err)
	}

	// A ServiceAccount token is a second way in, with the same enforcement.
	if err := cp.Grant(ctx, "sa-reader", ns, controlplane.ServiceAccount(ns, "reader"), rules); err != nil {
		t.Fatal(err)
	}
	saCfg, err := cp.ServiceAccountConfig(ctx, ns, "reader")
	if err != nil {
		t.Fatal(err)
	}
	sa := kubernetes.NewForConfigOrDie(saCfg)
	err = wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := sa.CoreV1().ConfigMaps(ns).Get(ctx, "readable", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("ServiceAccount %s/reader cannot get the granted ConfigMap: %v", ns, err)
	}
	if _, err := sa.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("listing secrets as ServiceAccount: got %v, want Forbidden", err)
	}
}
