// Package hash computes the fingerprints of ConfigMap and Secret contents.
//
// The algorithm is stakater/Reloader's, bit for bit (SHA-1 hex over the
// sorted "key=value" pairs joined by ";", binaryData base64-encoded), so a
// cluster migrating from it sees equal hashes in the STAKATER_* variables it
// left behind and restarts nothing.
package hash

import (
	"crypto/sha1" //nolint:gosec // compatibility fingerprint, not a security boundary
	"encoding/base64"
	"encoding/hex"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ConfigMap fingerprints data and binaryData.
func ConfigMap(data map[string]string, binaryData map[string][]byte) string {
	pairs := make([]string, 0, len(data)+len(binaryData))
	for k, v := range data {
		pairs = append(pairs, k+"="+v)
	}
	for k, v := range binaryData {
		pairs = append(pairs, k+"="+base64.StdEncoding.EncodeToString(v))
	}
	return sum(pairs)
}

// Secret fingerprints a Secret's data (stringData is folded into data by the
// apiserver, so it is covered).
func Secret(data map[string][]byte) string {
	pairs := make([]string, 0, len(data))
	for k, v := range data {
		pairs = append(pairs, k+"="+string(v))
	}
	return sum(pairs)
}

// Of fingerprints a ConfigMap or Secret.
func Of(obj any) (string, bool) {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		return ConfigMap(o.Data, o.BinaryData), true
	case *corev1.Secret:
		return Secret(o.Data), true
	}
	return "", false
}

// SecretProviderClassPodStatus fingerprints what a Secrets Store CSI mount
// holds, as the original does: every object's "id=version" and the class
// name.
func SecretProviderClassPodStatus(className string, objects map[string]string) string {
	pairs := make([]string, 0, len(objects)+1)
	for id, version := range objects {
		pairs = append(pairs, id+"="+version)
	}
	pairs = append(pairs, "SecretProviderClassName="+className)
	return sum(pairs)
}

// Empty is the fingerprint of a resource with no data: what the original
// records when a resource is deleted under the annotations strategy.
func Empty() string { return sum(nil) }

func sum(pairs []string) string {
	sort.Strings(pairs)
	h := sha1.New() //nolint:gosec // see package comment
	_, _ = h.Write([]byte(strings.Join(pairs, ";")))
	return hex.EncodeToString(h.Sum(nil))
}
