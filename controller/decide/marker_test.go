package decide

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// The Decision names the reload marker the template carries: the
// last-reloaded-from annotation first, else a reload variable set by value.
func TestDecisionNamesTheTemplatesMarker(t *testing.T) {
	byValue := corev1.EnvVar{Name: "STAKATER_APP_CONFIG_CONFIGMAP", Value: "h1"}
	fromRef := corev1.EnvVar{Name: "STAKATER_OTHER_SECRET", ValueFrom: &corev1.EnvVarSource{}}
	cases := []struct {
		name     string
		template map[string]string
		env      []corev1.EnvVar
		want     Marker
	}{
		{name: "none", want: Marker{}},
		{name: "a variable set by value", env: []corev1.EnvVar{fromRef, byValue},
			want: Marker{Strategy: EnvVars, Key: byValue.Name, Container: "app"}},
		{name: "a variable from a reference is no marker", env: []corev1.EnvVar{fromRef}, want: Marker{}},
		{name: "the annotation first", template: with(names.LastReloadedFrom, "{}"), env: []corev1.EnvVar{byValue},
			want: Marker{Strategy: Annotations, Key: names.LastReloadedFrom}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := deployment(t, with(names.Auto, "true"), tc.env...)
			v.Template.Annotations = tc.template
			if got := Decide(Options{}, v, &testReader{}, now).Marker; got != tc.want {
				t.Errorf("Marker = %+v, want %+v", got, tc.want)
			}
		})
	}
}
