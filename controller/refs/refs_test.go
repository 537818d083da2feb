package refs

import (
	"encoding/json"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func ptr[T any](v T) *T { return &v }

func podSpec() *corev1.PodSpec {
	return &corev1.PodSpec{
		InitContainers: []corev1.Container{{
			Name:    "init",
			EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "init-only"}}}},
		}},
		Containers: []corev1.Container{
			{Name: "app", VolumeMounts: []corev1.VolumeMount{{Name: "cfg", MountPath: "/cfg"}}},
			{
				Name: "sidecar",
				Env: []corev1.EnvVar{{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{
					SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "token"}, Key: "t", Optional: ptr(true)},
				}}},
				VolumeMounts: []corev1.VolumeMount{{Name: "bundle", MountPath: "/bundle"}},
			},
		},
		Volumes: []corev1.Volume{
			{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}}},
			{Name: "bundle", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "ca-bundle"}}},
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "tls"}}},
			}}}},
		},
	}
}

func TestFindListsEveryWayAPodUsesAResource(t *testing.T) {
	got := Find(podSpec())
	want := []Ref{
		{Kind: ConfigMap, Name: "app-config"},
		{Kind: ConfigMap, Name: "ca-bundle"},
		{Kind: Secret, Name: "init-only"},
		{Kind: Secret, Name: "tls"},
		{Kind: Secret, Name: "token", Optional: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Find:\n got %+v\nwant %+v", got, want)
	}
}

func TestOneRequiredUseMakesAReferenceRequired(t *testing.T) {
	s := podSpec()
	s.Containers[0].EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "token"}}}}
	for _, r := range Find(s) {
		if r.Name == "token" && r.Optional {
			t.Fatal("token is required by app, so it must not be optional")
		}
	}
}

func TestContainerForFollowsTheOriginalsRules(t *testing.T) {
	s := podSpec()
	cases := []struct {
		kind Kind
		name string
		auto bool
		want string
		ok   bool
	}{
		{ConfigMap, "app-config", true, "app", true},    // mounted by app
		{ConfigMap, "ca-bundle", true, "sidecar", true}, // projected, mounted by sidecar
		{Secret, "token", true, "sidecar", true},        // env valueFrom
		{Secret, "init-only", true, "app", true},        // init container only: first container
		{ConfigMap, "unused", true, "", false},          // auto reload needs a use
		{ConfigMap, "unused", false, "app", true},       // named reload: first container
	}
	for _, c := range cases {
		got, ok := ContainerFor(s, c.kind, c.name, c.auto)
		if got != c.want || ok != c.ok {
			t.Errorf("ContainerFor(%s %s auto=%v) = %q,%v; want %q,%v", c.kind, c.name, c.auto, got, ok, c.want, c.ok)
		}
	}
	if _, ok := ContainerFor(&corev1.PodSpec{}, ConfigMap, "x", false); ok {
		t.Error("a template without containers has no container for the marker")
	}
}

func FuzzFind(f *testing.F) {
	b, _ := json.Marshal(podSpec())
	f.Add(b)
	f.Add([]byte(`{"volumes":[{"name":"v","projected":{"sources":[{}]}}]}`))
	f.Add([]byte(`{"containers":[{"name":"","env":[{"name":"x","valueFrom":{}}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var spec corev1.PodSpec
		if json.Unmarshal(data, &spec) != nil {
			return
		}
		found := Find(&spec)
		for i, r := range found {
			if r.Name == "" {
				t.Fatalf("empty name in %+v", found)
			}
			if i > 0 && (found[i-1].Kind > r.Kind || found[i-1].Kind == r.Kind && found[i-1].Name >= r.Name) {
				t.Fatalf("not sorted and unique: %+v", found)
			}
			c, ok := ContainerFor(&spec, r.Kind, r.Name, true)
			if ok && !hasContainer(spec.Containers, c) {
				t.Fatalf("ContainerFor chose %q, not a container of the spec", c)
			}
		}
	})
}

func hasContainer(cs []corev1.Container, name string) bool {
	for _, c := range cs {
		if c.Name == name {
			return true
		}
	}
	return false
}
