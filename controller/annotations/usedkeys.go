package annotations

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/reloader-dev/reloader/controller/refs"
)

// Per-key reloads. A workload reloads only for the keys it uses when
// --reload-on-used-keys-only is on or it carries
// reloader.stakater.com/reload-on-used-keys-only: "true" ("false" turns it
// off for the workload whatever the flag). Uses that read every key (envFrom,
// a volume without items) count whole unless
// configmap|secret.reloader.stakater.com/keys lists keys for the resource:
// "name/key,name/key". Both are read on the workload's metadata, else on its
// pod template, as the other workload annotations.

// KeysKey is the keys annotation of kind ("" for a SecretProviderClass,
// whose content has no keys).
func (n Names) KeysKey(kind refs.Kind) string {
	switch kind {
	case refs.ConfigMap:
		return n.ConfigMapKeys
	case refs.Secret:
		return n.SecretKeys
	}
	return ""
}

// lookup reads key on the metadata, else on the pod template.
func (w Workload) lookup(key string) (value, on string, ok bool) {
	if v, found := w.Meta[key]; found {
		return v, "metadata", true
	}
	if v, found := w.Template[key]; found {
		return v, "pod template", true
	}
	return "", "", false
}

// UsedKeysOnlyFor is the workload's choice of per-key reloads: on, and set
// false when the workload does not choose (the flag then decides). An
// invalid value is an error and counts as not chosen.
func (n Names) UsedKeysOnlyFor(w Workload) (on, set bool, err error) {
	v, where, ok := w.lookup(n.UsedKeysOnly)
	if !ok {
		return false, false, nil
	}
	b, perr := strconv.ParseBool(strings.TrimSpace(v))
	if perr != nil {
		return false, false, fmt.Errorf("annotation %s=%q on the %s is not a boolean", n.UsedKeysOnly, v, where)
	}
	return b, true, nil
}

// ListedKeys parses the keys annotation of kind on w: the keys listed per
// resource name (sorted, no duplicates), with the annotation's text for
// people. An invalid entry is an error and skipped; the others still count.
func (n Names) ListedKeys(w Workload, kind refs.Kind) (keys map[string][]string, text string, errs []error) {
	key := n.KeysKey(kind)
	if key == "" {
		return nil, "", nil
	}
	v, where, ok := w.lookup(key)
	if !ok {
		return nil, "", nil
	}
	keys, errs = ParseKeys(v)
	for i, err := range errs {
		errs[i] = fmt.Errorf("annotation %s on the %s: %w", key, where, err)
	}
	return keys, fmt.Sprintf("%s=%q on the %s", key, v, where), errs
}

// ParseKeys reads "name/key,name/key": the keys listed per resource name.
// Neither a name nor a key can contain "/"; a key must be a valid ConfigMap
// or Secret key.
func ParseKeys(v string) (map[string][]string, []error) {
	out := map[string][]string{}
	var errs []error
	for _, entry := range strings.Split(v, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		name, key, ok := strings.Cut(entry, "/")
		switch {
		case !ok || name == "" || key == "" || strings.Contains(key, "/"):
			errs = append(errs, fmt.Errorf("entry %q: want name/key", entry))
			continue
		case len(validation.IsDNS1123Subdomain(name)) > 0:
			errs = append(errs, fmt.Errorf("entry %q: %q is not a resource name", entry, name))
			continue
		case len(validation.IsConfigMapKey(key)) > 0:
			errs = append(errs, fmt.Errorf("entry %q: %q is not a valid key", entry, key))
			continue
		}
		out[name] = append(out[name], key)
	}
	for name, ks := range out {
		slices.Sort(ks)
		out[name] = slices.Compact(ks)
	}
	return out, errs
}

// ChangeWindowFor is the workload's change window annotation, where it was
// read ("metadata" or "pod template"), and whether it has one.
func (n Names) ChangeWindowFor(w Workload) (value, on string, ok bool) {
	return w.lookup(n.ChangeWindow)
}
