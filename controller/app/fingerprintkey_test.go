package app

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/reloader-dev/reloader/controller/fingerprint"
)

// The key lives in the controller's namespace, RELOADER_NAMESPACE before
// POD_NAMESPACE, or where --fingerprint-key-secret says. Per-key mode with
// nowhere to keep it refuses to start, naming what to set; without per-key
// mode no key is needed.
func TestTheFingerprintKeyIsInTheControllersNamespaceOrRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string // the Secret, or the error's text
	}{
		{name: "RELOADER_NAMESPACE", env: map[string]string{"RELOADER_NAMESPACE": "ops", "POD_NAMESPACE": "pods"},
			args: []string{"--reload-on-used-keys-only"}, want: "ops/reloader-fingerprint-key"},
		{name: "POD_NAMESPACE", env: map[string]string{"POD_NAMESPACE": "pods"}, args: []string{"--reload-on-used-keys-only"},
			want: "pods/reloader-fingerprint-key"},
		{name: "a name", env: map[string]string{"POD_NAMESPACE": "pods"}, args: []string{"--reload-on-used-keys-only", "--fingerprint-key-secret=k"},
			want: "pods/k"},
		{name: "a namespace and a name outside a cluster", args: []string{"--reload-on-used-keys-only", "--fingerprint-key-secret=ops/k"},
			want: "ops/k"},
		{name: "nowhere to keep it", args: []string{"--reload-on-used-keys-only"},
			want: "error: set RELOADER_NAMESPACE or POD_NAMESPACE (the chart sets both), or --fingerprint-key-secret=NAMESPACE/reloader-fingerprint-key"},
		{name: "not needed without per-key mode", want: "/reloader-fingerprint-key"},
		{name: "a bad name", args: []string{"--fingerprint-key-secret=Bad_Name"}, want: "error: --fingerprint-key-secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := resolve(t, tc.env, tc.args...)
			if want, ok := strings.CutPrefix(tc.want, "error: "); ok {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("got %v, want an error saying %q", err, want)
				}
				return
			}
			if err != nil || r.FingerprintKey.String() != tc.want {
				t.Fatalf("got %v, %v; want %s", r, err, tc.want)
			}
		})
	}
}

func keyResolved(t *testing.T, usedKeysOnly bool) (*Options, *Resolved) {
	t.Helper()
	o := DefaultOptions()
	o.UsedKeysOnly = usedKeysOnly
	return o, &Resolved{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		FingerprintKey: fingerprint.Ref{Namespace: "ops", Name: fingerprint.DefaultSecretName}}
}

// Per-key mode creates the key; without it the controller creates nothing
// and digests unkeyed, unless a key Secret exists, which it then reads, so
// turning the flag off rolls nothing. A key it may not read is no key; any
// other failure stops the start.
func TestTheControllerCreatesTheKeyOnlyInPerKeyMode(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset()
	o, r := keyResolved(t, false)
	if d, err := fingerprintKey(ctx, o, r, cs); err != nil || d.Keyed() {
		t.Fatalf("flag off, no Secret: keyed %v, %v; want unkeyed", d.Keyed(), err)
	}
	if l, _ := cs.CoreV1().Secrets("ops").List(ctx, metav1.ListOptions{}); len(l.Items) != 0 {
		t.Fatalf("flag off: the controller created %d Secrets", len(l.Items))
	}
	o.UsedKeysOnly = true
	on, err := fingerprintKey(ctx, o, r, cs)
	if err != nil || !on.Keyed() {
		t.Fatalf("flag on: keyed %v, %v", on.Keyed(), err)
	}
	o.UsedKeysOnly = false
	off, err := fingerprintKey(ctx, o, r, cs)
	data := map[string][]byte{"k": []byte("v")}
	if err != nil || !off.Keyed() || off.SecretKeys(data)[0] != on.SecretKeys(data)[0] {
		t.Fatalf("flag off after on: keyed %v, %v; want the same key read", off.Keyed(), err)
	}

	forbidden := fake.NewClientset()
	forbidden.PrependReactor("get", "secrets", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "x", errors.New("no"))
	})
	if d, err := fingerprintKey(ctx, o, r, forbidden); err != nil || d.Keyed() {
		t.Errorf("flag off, Secret forbidden: keyed %v, %v; want unkeyed", d.Keyed(), err)
	}
	o.UsedKeysOnly = true
	if _, err := fingerprintKey(ctx, o, r, forbidden); err == nil || !strings.Contains(err.Error(), "--reload-on-used-keys-only needs the fingerprint key") {
		t.Errorf("flag on, Secret forbidden: %v; want a refusal to start", err)
	}
	o.UsedKeysOnly = false
	broken := fake.NewClientset()
	broken.PrependReactor("get", "secrets", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("etcd")
	})
	if _, err := fingerprintKey(ctx, o, r, broken); err == nil {
		t.Error("flag off, the apiserver failing: the controller would start unkeyed beside a key that may exist")
	}
}
