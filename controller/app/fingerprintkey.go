package app

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/controller/fingerprint"
	"github.com/reloader-dev/reloader/controller/hash"
)

// The per-key digests are keyed (hash/keyed.go) under a key kept in a
// Secret in the controller's namespace (controller/fingerprint). With
// --reload-on-used-keys-only the key is required: it is created on first
// start, and a controller with nowhere to keep it refuses to start rather
// than record unkeyed digests. Without the flag the key is not needed and no
// Secret is created, but one that exists is read: workloads that chose
// per-key reloads by annotation stay keyed, and turning the flag off adopts
// the keyed records instead of rolling them.

// resolveFingerprintKey reads where the key Secret is. The namespace is the
// controller's, as for reloader-meta-info: RELOADER_NAMESPACE, else
// POD_NAMESPACE.
func (o *Options) resolveFingerprintKey(r *Resolved, getenv func(string) string, bad func(string, ...any)) {
	ns := getenv("RELOADER_NAMESPACE")
	if ns == "" {
		ns = getenv("POD_NAMESPACE")
	}
	ref, err := fingerprint.ParseRef(o.FingerprintKeySecret, ns)
	if err != nil {
		bad("--fingerprint-key-secret: %v", err)
		return
	}
	if ref.Namespace == "" && o.UsedKeysOnly {
		bad("--reload-on-used-keys-only keys its fingerprints with a key kept in a Secret in the controller's namespace, and the controller has none: "+
			"set RELOADER_NAMESPACE or POD_NAMESPACE (the chart sets both), or --fingerprint-key-secret=NAMESPACE/%s", ref.Name)
	}
	r.FingerprintKey = ref
}

// fingerprintKey gets the key the cache digests under, before the caches
// start: created if absent when the flag needs it, else read if present.
// It never logs the key, only where it is.
func fingerprintKey(ctx context.Context, o *Options, r *Resolved, cs kubernetes.Interface) (hash.KeyDigester, error) {
	ref, log := r.FingerprintKey, r.Logger
	if ref.Namespace == "" {
		log.Debug("per-key fingerprints are unkeyed: the controller has no namespace to keep their key in")
		return hash.KeyDigester{}, nil
	}
	if o.UsedKeysOnly {
		d, created, err := fingerprint.GetOrCreate(ctx, cs, ref)
		if err != nil {
			return hash.KeyDigester{}, fmt.Errorf("--reload-on-used-keys-only needs the fingerprint key (get and create on Secrets in %s): %w", ref.Namespace, err)
		}
		log.Info("per-key fingerprints are keyed", "secret", ref.String(), "created", created)
		return d, nil
	}
	d, found, err := fingerprint.Get(ctx, cs, ref)
	switch {
	case apierrors.IsForbidden(err):
		log.Debug("per-key fingerprints are unkeyed: the fingerprint key Secret may not be read", "secret", ref.String())
		return hash.KeyDigester{}, nil
	case err != nil:
		// Digesting without a key that exists would roll every workload
		// whose record was keyed: better not to start.
		return hash.KeyDigester{}, err
	case found:
		log.Info("per-key fingerprints are keyed", "secret", ref.String(), "created", false)
	default:
		log.Debug("per-key fingerprints are unkeyed: no fingerprint key Secret", "secret", ref.String())
	}
	return d, nil
}

// explainEnv is the environment explain resolves the controller's options
// in: none of the controller's own, but its namespace (controllerNS, else
// the one --controller-namespace names), where the fingerprint key is.
func explainEnv(controllerNS, flagNS string) func(string) string {
	return func(k string) string {
		if k != "RELOADER_NAMESPACE" {
			return ""
		}
		if controllerNS != "" {
			return controllerNS
		}
		return flagNS
	}
}
