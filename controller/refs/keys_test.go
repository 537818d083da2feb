package refs

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func lor(name string) corev1.LocalObjectReference { return corev1.LocalObjectReference{Name: name} }

func items(keys ...string) []corev1.KeyToPath {
	var out []corev1.KeyToPath
	for _, k := range keys {
		out = append(out, corev1.KeyToPath{Key: k, Path: k})
	}
	return out
}

func cmKeyEnv(name, key string, optional *bool) corev1.EnvVar {
	return corev1.EnvVar{Name: key, ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: lor(name), Key: key, Optional: optional}}}
}

func secretKeyEnv(name, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: key, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: lor(name), Key: key}}}
}

// keyUseTemplate uses resources in every way a pod template can: the names
// say how.
func keyUseTemplate() *corev1.PodSpec {
	opt := true
	return &corev1.PodSpec{
		Volumes: []corev1.Volume{
			{Name: "v1", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: lor("vol-items"), Items: items("b.yaml", "a.yaml")}}},
			{Name: "v2", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "secret-vol-items", Items: items("tls.crt")}}},
			{Name: "v3", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: lor("vol-whole")}}},
			{Name: "v4", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: lor("vol-empty-items"), Items: []corev1.KeyToPath{}}}},
			{Name: "v5", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: lor("proj-items"), Items: items("p")}},
				{Secret: &corev1.SecretProjection{LocalObjectReference: lor("secret-proj-whole")}},
				{Secret: &corev1.SecretProjection{LocalObjectReference: lor("secret-proj-items"), Items: items("q"), Optional: &opt}},
			}}}},
			{Name: "v6", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d", VolumeAttributes: map[string]string{SecretProviderClassAttribute: "spc"}}}},
		},
		InitContainers: []corev1.Container{{Name: "init",
			Env: []corev1.EnvVar{cmKeyEnv("env-keys", "INIT_ONLY", nil)}}},
		Containers: []corev1.Container{{Name: "app",
			Env: []corev1.EnvVar{cmKeyEnv("env-keys", "URL", &opt), cmKeyEnv("env-keys", "LOG_LEVEL", nil), cmKeyEnv("env-keys", "URL", nil),
				secretKeyEnv("secret-env-keys", "password"), cmKeyEnv("mixed", "ONE", nil), {Name: "PLAIN", Value: "x"}},
			EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: lor("mixed")}},
				{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: lor("secret-envfrom")}}},
		}},
		EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug",
			EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: lor("env-keys")}}}}}},
	}
}

func TestKeyUsesSaysWhichKeysEachUseReads(t *testing.T) {
	got := map[string]KeyUse{}
	for _, u := range KeyUses(keyUseTemplate()) {
		got[string(u.Kind)+"/"+u.Name] = u
	}
	for _, tc := range []struct {
		res      string
		keys     []string
		keysVia  []Via
		wholeVia []Via
	}{
		// init and app containers' keyRefs add up; a key named twice counts once;
		// optional changes nothing; an ephemeral container is not a template's.
		{"configmap/env-keys", []string{"INIT_ONLY", "LOG_LEVEL", "URL"}, []Via{ViaEnv}, nil},
		{"secret/secret-env-keys", []string{"password"}, []Via{ViaEnv}, nil},
		{"configmap/vol-items", []string{"a.yaml", "b.yaml"}, []Via{ViaVolume}, nil},
		{"secret/secret-vol-items", []string{"tls.crt"}, []Via{ViaVolume}, nil},
		{"configmap/proj-items", []string{"p"}, []Via{ViaProjected}, nil},
		{"secret/secret-proj-items", []string{"q"}, []Via{ViaProjected}, nil},
		{"configmap/vol-whole", nil, nil, []Via{ViaVolume}},
		{"configmap/vol-empty-items", nil, nil, []Via{ViaVolume}},
		{"secret/secret-proj-whole", nil, nil, []Via{ViaProjected}},
		{"secret/secret-envfrom", nil, nil, []Via{ViaEnvFrom}},
		// One whole use makes the whole resource count, whatever else names keys.
		{"configmap/mixed", []string{"ONE"}, []Via{ViaEnv}, []Via{ViaEnvFrom}},
	} {
		u, ok := got[tc.res]
		if !ok {
			t.Errorf("%s: not found", tc.res)
			continue
		}
		if !slices.Equal(u.Keys, tc.keys) || !slices.Equal(u.KeysVia, tc.keysVia) || !slices.Equal(u.WholeVia, tc.wholeVia) {
			t.Errorf("%s = keys %v via %v, whole via %v; want keys %v via %v, whole via %v", tc.res, u.Keys, u.KeysVia, u.WholeVia, tc.keys, tc.keysVia, tc.wholeVia)
		}
		if u.Whole() != (tc.wholeVia != nil) {
			t.Errorf("%s: Whole() = %v", tc.res, u.Whole())
		}
	}
	if _, ok := got["secretproviderclass/spc"]; ok {
		t.Error("a SecretProviderClass has no keys to list")
	}
}

// KeyUses must cover every ConfigMap and Secret Find watches, or a watched
// resource would have no key rule.
func TestKeyUsesCoversEveryConfigMapAndSecretFindFinds(t *testing.T) {
	spec := keyUseTemplate()
	var want, got []string
	for _, r := range Find(spec) {
		if r.Kind != SecretProviderClass {
			want = append(want, string(r.Kind)+"/"+r.Name)
		}
	}
	for _, u := range KeyUses(spec) {
		got = append(got, string(u.Kind)+"/"+u.Name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("KeyUses = %v, Find = %v", got, want)
	}
}
