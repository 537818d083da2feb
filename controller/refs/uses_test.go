package refs

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Uses (for people) and Find (for the controller) must agree on what a
// template uses, or explain would describe a different set than is watched.
func TestUsesCoversExactlyWhatFindFinds(t *testing.T) {
	opt := true
	spec := &corev1.PodSpec{
		Volumes: []corev1.Volume{
			{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}}},
			{Name: "unmounted", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "tls", Optional: &opt}}},
			{Name: "proj", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}}},
			}}}},
		},
		InitContainers: []corev1.Container{{Name: "init", EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "init-secret"}}}}}},
		Containers: []corev1.Container{{
			Name:         "app",
			VolumeMounts: []corev1.VolumeMount{{Name: "cfg", MountPath: "/etc/app.yaml", SubPath: "app.yaml"}, {Name: "proj", MountPath: "/creds"}},
			Env:          []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "flags"}, Key: "x"}}}},
		}},
	}
	found := map[Ref]bool{}
	for _, r := range Find(spec) {
		found[Ref{Kind: r.Kind, Name: r.Name}] = true
	}
	used := map[Ref]bool{}
	var subPath Use
	for _, u := range Uses(spec) {
		used[Ref{Kind: u.Kind, Name: u.Name}] = true
		if u.SubPath != "" {
			subPath = u
		}
	}
	if len(found) != len(used) {
		t.Fatalf("Find %v, Uses %v", found, used)
	}
	for r := range found {
		if !used[r] {
			t.Errorf("Uses misses %v", r)
		}
	}
	if subPath.Name != "app" || subPath.Container != "app" || subPath.MountPath != "/etc/app.yaml" {
		t.Errorf("subPath use = %+v", subPath)
	}
}
