package reloadertest

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MetaOption sets something on an object's metadata.
type MetaOption func(*metav1.ObjectMeta)

// WithAnnotations and WithLabels set an object's annotations or labels.
func WithAnnotations(m map[string]string) MetaOption {
	return func(o *metav1.ObjectMeta) { o.Annotations = m }
}

func WithLabels(m map[string]string) MetaOption {
	return func(o *metav1.ObjectMeta) { o.Labels = m }
}

func meta(name string, opts []MetaOption) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: name}
	for _, o := range opts {
		o(&m)
	}
	return m
}

// ConfigMap is a ConfigMap holding data.
func ConfigMap(name string, data map[string]string, opts ...MetaOption) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: meta(name, opts), Data: data}
}

// Secret is a Secret holding data, given as strings for readable tests.
func Secret(name string, data map[string]string, opts ...MetaOption) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: meta(name, opts), Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// image is what test pods run: they are never scheduled, so it is never
// pulled, and .invalid can never resolve if one were.
const image = "registry.invalid/app:1"

// PodTemplate is a pod template labelled app=app with containers (one
// container "app" if none), each given the test image if it has none.
func PodTemplate(app string, containers ...corev1.Container) corev1.PodTemplateSpec {
	if len(containers) == 0 {
		containers = []corev1.Container{{Name: "app"}}
	}
	for i := range containers {
		if containers[i].Image == "" {
			containers[i].Image = image
		}
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec:       corev1.PodSpec{Containers: containers},
	}
}

// Deployment runs tmpl, selected by its app label, with ann on its
// metadata.
func Deployment(name string, ann map[string]string, tmpl corev1.PodTemplateSpec) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": tmpl.Labels["app"]}},
			Template: tmpl,
		},
	}
}

// EnvOf is the value of container's env var name in d's pod template, and
// whether it is set.
func EnvOf(d *appsv1.Deployment, container, name string) (string, bool) {
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name != container {
			continue
		}
		for _, e := range c.Env {
			if e.Name == name {
				return e.Value, true
			}
		}
	}
	return "", false
}
