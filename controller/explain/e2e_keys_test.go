package explain_test

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/reloader-dev/reloader/test/reloadertest"
)

func keyRefCM(name, key string) func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) {
		s.Containers[0].Env = append(s.Containers[0].Env, corev1.EnvVar{Name: key, ValueFrom: &corev1.EnvVarSource{
			ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key}}})
	}
}

// explain shows, per resource, whether all keys or which keys count, and
// why, under the controller's --reload-on-used-keys-only (read from its
// reloader-meta-info) and the workload's annotations.
func TestExplainShowsWhichKeysCount(t *testing.T) {
	requireControlPlane(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	reloadertest.MustCreate(t, cs, ns,
		configMap("app-config", nil, nil), secret("db"), secret("tls"),
		deployment("web", ann(auto, "true", "secret.reloader.stakater.com/keys", "tls/password"), nil,
			keyRefCM("app-config", "k"), envFromSecret("db"), envFromSecret("tls")),
		deployment("off", ann(auto, "true", "reloader.stakater.com/reload-on-used-keys-only", "false"), nil, keyRefCM("app-config", "k")),
	)
	c := startController(t, ns, "--reload-on-used-keys-only")
	waitRecorded(t, cs, ns, "web")
	waitRecorded(t, cs, ns, "off")
	args := []string{"--controller-namespace=" + ns, "--readyz-url=" + c.readyz, "-n", ns}

	text := runExplain(t, reloaderBin, cp.AdminKubeconfig, append([]string{"explain", "deployment/web"}, args...)...)
	for _, line := range []string{
		"keys: only k count; named by env keyRef",
		"keys: all count; read whole through envFrom (list keys with secret.reloader.stakater.com/keys)",
		`keys: only password count; read whole through envFrom, listed by secret.reloader.stakater.com/keys="tls/password" on the metadata`,
	} {
		if !strings.Contains(text.stdout, line) {
			t.Errorf("output lacks %q:\n%s%s", line, text.stdout, text.stderr)
		}
	}
	rep := reportOf(t, runExplain(t, reloaderBin, cp.AdminKubeconfig, append([]string{"explain", "deployment/web", "--output=json"}, args...)...))
	// explain reads the fingerprint key the controller created, so the
	// per-key hashes are the controller's and nothing is due.
	if rep.Verdict != "up-to-date" || len(rep.Unreadable) > 0 {
		t.Errorf("verdict %q, unreadable %q; want up-to-date, all read", rep.Verdict, rep.Unreadable)
	}
	if k := resourceOf(t, rep, "ConfigMap", "app-config").Keys; k == nil || k.All || !slices.Equal(k.Only, []string{"k"}) {
		t.Errorf("app-config keys = %+v, want only k", k)
	}
	if k := resourceOf(t, rep, "Secret", "db").Keys; k == nil || !k.All {
		t.Errorf("db keys = %+v, want all", k)
	}
	off := runExplain(t, reloaderBin, cp.AdminKubeconfig, append([]string{"explain", "deployment/off"}, args...)...)
	if want := "keys: all count; per-key reloads are off for this workload (reloader.stakater.com/reload-on-used-keys-only=false)"; !strings.Contains(off.stdout, want) {
		t.Errorf("output lacks %q:\n%s%s", want, off.stdout, off.stderr)
	}
}
