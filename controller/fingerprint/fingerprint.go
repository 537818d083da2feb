// Package fingerprint keeps the installation's fingerprint key: KeySize
// random bytes in a Secret in the controller's namespace, under which the
// per-key digests are made (hash/keyed.go), so that a workload's per-key
// record, readable by anyone who can read the workload, reveals nothing that
// can be tested offline.
//
// The first replica to start with per-key reloads on creates the Secret;
// every replica, and every restart, reads the same one, so their digests
// agree and a restart rolls nothing. Two replicas starting together both
// try to create it; the one that loses reads the winner's. The Secret is
// immutable: a new key changes every per-key record once, so each per-key
// workload would roll once.
package fingerprint

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/controller/hash"
)

const (
	// DefaultSecretName is the key Secret's name (--fingerprint-key-secret).
	DefaultSecretName = "reloader-fingerprint-key"
	// DataKey is the key of the Secret's data that holds the key.
	DataKey = "key"
	// AboutAnnotation tells whoever finds the Secret what it is for.
	AboutAnnotation = "reloader.dev/about"
	about           = "The key of Reloader's per-key fingerprints (--reload-on-used-keys-only). " +
		"Deleting or replacing it rolls each workload in per-key mode once."
)

// Ref names the key Secret.
type Ref struct{ Namespace, Name string }

func (r Ref) String() string { return r.Namespace + "/" + r.Name }

// ParseRef reads --fingerprint-key-secret: "name", kept in namespace ns
// (the controller's; "" when it has none), or "namespace/name".
func ParseRef(s, ns string) (Ref, error) {
	r := Ref{Namespace: ns, Name: s}
	if n, name, ok := strings.Cut(s, "/"); ok {
		r = Ref{Namespace: n, Name: name}
		if errs := validation.IsDNS1123Label(n); len(errs) > 0 {
			return Ref{}, fmt.Errorf("namespace %q: %s", n, strings.Join(errs, "; "))
		}
	}
	if errs := validation.IsDNS1123Subdomain(r.Name); len(errs) > 0 {
		return Ref{}, fmt.Errorf("the Secret name %q: %s", r.Name, strings.Join(errs, "; "))
	}
	return r, nil
}

// Get reads the key kept in ref's Secret; found is false when the Secret
// does not exist. A Secret without a usable key is an error: digesting
// under another key would roll every per-key workload.
func Get(ctx context.Context, cs kubernetes.Interface, ref Ref) (d hash.KeyDigester, found bool, err error) {
	s, err := cs.CoreV1().Secrets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return hash.KeyDigester{}, false, nil
	case err != nil:
		return hash.KeyDigester{}, false, fmt.Errorf("reading the fingerprint key Secret %s: %w", ref, err)
	}
	if d, err = hash.Keyed(s.Data[DataKey]); err != nil {
		return hash.KeyDigester{}, false, fmt.Errorf("the fingerprint key Secret %s: data %q: %w (delete the Secret to have a new key made; each per-key workload then rolls once)", ref, DataKey, err)
	}
	return d, true, nil
}

// GetOrCreate reads the key kept in ref's Secret, creating the Secret with
// a new random key when it does not exist; the bool says it did.
func GetOrCreate(ctx context.Context, cs kubernetes.Interface, ref Ref) (hash.KeyDigester, bool, error) {
	// A lost race is retried: the Secret may be deleted again between
	// AlreadyExists and the read that follows.
	for range 3 {
		if d, found, err := Get(ctx, cs, ref); err != nil || found {
			return d, false, err
		}
		key := make([]byte, hash.KeySize)
		_, _ = rand.Read(key) // never fails: crypto/rand crashes the program rather than return short
		d, err := hash.Keyed(key)
		if err != nil {
			return hash.KeyDigester{}, false, err
		}
		_, err = cs.CoreV1().Secrets(ref.Namespace).Create(ctx, newSecret(ref, key), metav1.CreateOptions{})
		switch {
		case err == nil:
			return d, true, nil
		case !apierrors.IsAlreadyExists(err):
			return hash.KeyDigester{}, false, fmt.Errorf("creating the fingerprint key Secret %s: %w", ref, err)
		}
	}
	return hash.KeyDigester{}, false, errors.New("creating the fingerprint key Secret " + ref.String() + ": it keeps appearing and disappearing")
}

func newSecret(ref Ref, key []byte) *corev1.Secret {
	immutable := true
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: ref.Name, Namespace: ref.Namespace,
			Labels:      map[string]string{"app.kubernetes.io/managed-by": "reloader", "app.kubernetes.io/component": "fingerprint-key"},
			Annotations: map[string]string{AboutAnnotation: about}},
		Type:      corev1.SecretTypeOpaque,
		Immutable: &immutable,
		Data:      map[string][]byte{DataKey: key},
	}
}
