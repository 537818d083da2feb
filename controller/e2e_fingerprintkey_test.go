package controller_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/controller/fingerprint"
	"github.com/reloader-dev/reloader/controller/hash"
	"github.com/reloader-dev/reloader/test/reloadertest"
)

// pinApp is the pod template of a Deployment reading the key PIN of the
// Secret pin through a secretKeyRef.
func pinApp(name string) *corev1.PodTemplateSpec {
	tmpl := reloadertest.PodTemplate(name, corev1.Container{Name: "app", Env: []corev1.EnvVar{{Name: "PIN", ValueFrom: &corev1.EnvVarSource{
		SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "pin"}, Key: "PIN"}}}}})
	return &tmpl
}

// pinRecord is the record's entry for the Secret pin on Deployment name.
func pinRecord(t *testing.T, cs kubernetes.Interface, ns, name string) string {
	t.Helper()
	m := map[string]string{}
	if s := record(t, cs, ns, name); s != "" {
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatalf("%s: record %q: %v", name, s, err)
		}
	}
	return m["secret/pin"]
}

// perKey is the per-key record of PIN=pin under d (keyed or not).
func perKey(d hash.KeyDigester, pin string) string {
	return d.SecretKeys(map[string][]byte{"PIN": []byte(pin), "OTHER": []byte("x")}).Subset(hash.SHA1, []string{"PIN"})
}

// With --reload-on-used-keys-only, the controller creates its fingerprint
// key Secret on first start and records, for a 4-digit PIN, the keyed hash,
// not the unkeyed formula anyone could test the 10,000 PINs against. A
// workload recorded under the unkeyed formula by an earlier release is
// adopted, not rolled. A restart reads the same key: its digests are the
// same and it rolls nothing. A change of an unused key rolls nothing; of
// the used key, once.
func TestFingerprintKeyIsMadeOnceAndKeysPerKeyRecords(t *testing.T) {
	requireControlPlane(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	unkeyed := hash.KeyDigester{}
	reloadertest.MustCreate(t, cs, ns, reloadertest.Secret("pin", map[string]string{"PIN": "4711", "OTHER": "x"}),
		reloadertest.Deployment("app", auto(), *pinApp("app")))
	legacy, _ := json.Marshal(map[string]string{"secret/pin": perKey(unkeyed, "4711")})
	legacyAnn := auto()
	legacyAnn["reloader.dev/applied-hashes"] = string(legacy)
	createDeployment(t, cs, ns, reloadertest.Deployment("legacy", legacyAnn, *pinApp("legacy")))
	waitRevision(t, cs, ns, "legacy", 1, 0)

	args := []string{"--namespaces=" + ns, "--reload-on-used-keys-only"}
	env := []string{"POD_NAMESPACE=" + ns}
	r := startReloaderEnv(t, "", env, args...)
	waitRecorded(t, cs, ns, "app")
	key, err := cs.CoreV1().Secrets(ns).Get(ctx, fingerprint.DefaultSecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the controller made no fingerprint key Secret: %v", err)
	}
	if len(key.Data[fingerprint.DataKey]) != hash.KeySize || key.Immutable == nil || !*key.Immutable {
		t.Fatalf("the key Secret holds %d bytes, immutable %v; want %d, immutable", len(key.Data[fingerprint.DataKey]), key.Immutable, hash.KeySize)
	}
	keyed, err := hash.Keyed(key.Data[fingerprint.DataKey])
	if err != nil {
		t.Fatal(err)
	}
	if got := pinRecord(t, cs, ns, "app"); got != perKey(keyed, "4711") || got == perKey(unkeyed, "4711") {
		t.Fatalf("the record of PIN=4711 is %s; want the keyed %s, not the unkeyed %s", got, perKey(keyed, "4711"), perKey(unkeyed, "4711"))
	}
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		got := pinRecord(t, cs, ns, "legacy")
		return got == perKey(keyed, "4711"), "the unkeyed record of legacy is not adopted: " + got
	})
	settled(t, r, 1)
	checkRevisions(t, cs, ns, map[string]int64{"app": 1, "legacy": 1})

	// A restart, as a second replica would, reads the key and rolls nothing.
	if err := r.Stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	r = startReloaderEnv(t, "", env, args...)
	settled(t, r, 1)
	again, err := cs.CoreV1().Secrets(ns).Get(ctx, fingerprint.DefaultSecretName, metav1.GetOptions{})
	if err != nil || again.UID != key.UID || again.ResourceVersion != key.ResourceVersion {
		t.Fatalf("the restart replaced the key Secret (%v)", err)
	}
	checkRevisions(t, cs, ns, map[string]int64{"app": 1, "legacy": 1})
	if got := pinRecord(t, cs, ns, "app"); got != perKey(keyed, "4711") {
		t.Errorf("after the restart the record is %s, want %s", got, perKey(keyed, "4711"))
	}

	before := r.metric(t, "reloader_workload_syncs_total")
	setPIN(t, cs, ns, "OTHER", "y")
	settled(t, r, before+1)
	checkRevisions(t, cs, ns, map[string]int64{"app": 1, "legacy": 1})
	setPIN(t, cs, ns, "PIN", "4712")
	waitRevision(t, cs, ns, "app", 2, 0)
	waitRevision(t, cs, ns, "legacy", 2, 0)
	r.waitIdle(t, 2)
	time.Sleep(time.Second)
	checkRevisions(t, cs, ns, map[string]int64{"app": 2, "legacy": 2})
	want := keyed.SecretKeys(map[string][]byte{"PIN": []byte("4712")}).Subset(hash.SHA1, []string{"PIN"})
	if got := pinRecord(t, cs, ns, "app"); got != want {
		t.Errorf("after PIN=4712 the record is %s, want the keyed %s", got, want)
	}
}

func setPIN(t *testing.T, cs kubernetes.Interface, ns, key, value string) {
	t.Helper()
	if err := updateSecret("pin", func(s *corev1.Secret) { s.Data[key] = []byte(value) })(ctxFor(t), cs, ns); err != nil {
		t.Fatal(err)
	}
}

func checkRevisions(t *testing.T, cs kubernetes.Interface, ns string, want map[string]int64) {
	t.Helper()
	for name, w := range want {
		if g := revision(t, cs, ns, name); g != w {
			t.Errorf("%s: revision %d, want %d", name, g, w)
		}
	}
}

// Per-key mode with nowhere to keep the key refuses to start, naming what
// to set, and without per-key mode no key Secret is made.
func TestFingerprintKeyIsRequiredOnlyInPerKeyMode(t *testing.T) {
	requireControlPlane(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	cmd := exec.CommandContext(ctx, reloaderBin, "--kubeconfig="+cp.AdminKubeconfig, "--namespaces="+ns, "--reload-on-used-keys-only")
	cmd.Env = slices.DeleteFunc(os.Environ(), func(e string) bool {
		return strings.HasPrefix(e, "RELOADER_NAMESPACE=") || strings.HasPrefix(e, "POD_NAMESPACE=")
	})
	out, err := cmd.CombinedOutput()
	for _, want := range []string{"RELOADER_NAMESPACE", "POD_NAMESPACE", "--fingerprint-key-secret=NAMESPACE/"} {
		if err == nil || !strings.Contains(string(out), want) {
			t.Fatalf("per-key mode without a namespace: %v, output:\n%s\nwant a refusal naming %s", err, out, want)
		}
	}
	reloadertest.MustCreate(t, cs, ns, reloadertest.Secret("pin", map[string]string{"PIN": "4711"}),
		reloadertest.Deployment("app", auto(), *pinApp("app")))
	startReloaderEnv(t, "", []string{"POD_NAMESPACE=" + ns}, "--namespaces="+ns)
	waitRecorded(t, cs, ns, "app")
	if _, err := cs.CoreV1().Secrets(ns).Get(ctx, fingerprint.DefaultSecretName, metav1.GetOptions{}); err == nil {
		t.Error("without per-key mode the controller made a fingerprint key Secret")
	}
}
