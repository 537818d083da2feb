package explain

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reloader-dev/reloader/controller"
	"github.com/reloader-dev/reloader/controller/cache"
	"github.com/reloader-dev/reloader/controller/fingerprint"
	"github.com/reloader-dev/reloader/controller/hash"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/rollout"
	"github.com/reloader-dev/reloader/controller/workload"
)

// reader gathers what explain reads, noting what it may not read.
type reader struct {
	notes            []string
	unreadable       map[string]string // "kind/name" -> why
	namespaceUnknown bool
}

func (rd *reader) note(what string, err error) {
	rd.notes = append(rd.notes, fmt.Sprintf("%s: %s", what, reasonOf(err)))
}

func reasonOf(err error) string {
	switch {
	case apierrors.IsForbidden(err):
		return "forbidden (" + err.Error() + ")"
	case apierrors.IsNotFound(err):
		return "not found"
	}
	return err.Error()
}

// fingerprintKey reads the key the controller digests per-key values under,
// as the controller does when it need not create it. Without it the
// per-key hashes are unkeyed and differ from the controller's records.
func (rd *reader) fingerprintKey(ctx context.Context, cl Clients, ref fingerprint.Ref) hash.KeyDigester {
	if ref.Namespace == "" {
		return hash.KeyDigester{}
	}
	d, _, err := fingerprint.Get(ctx, cl.Kube, ref)
	if err != nil {
		rd.note("the fingerprint key (without it, per-key hashes differ from the controller's)", err)
	}
	return d
}

func getWorkload(ctx context.Context, cl Clients, o Options) (workload.View, error) {
	return rollout.GetOf(ctx, cl.Kube, cl.Dynamic, o.Controller.Declared, o.Kind, o.Namespace, o.Name)
}

// configs reads what the controller's watches hold for the namespace. It
// returns the objects for Inspect and every ConfigMap, Secret and class it
// could read (before selectors), by "kind/name". One read per kind, each
// noting what it could not read, in one place so the notes stay uniform.
func (rd *reader) configs(ctx context.Context, cl Clients, o Options, co *controller.Options, v workload.View) ([]any, map[string]map[string]string) {
	ns := o.Namespace
	var objs []any
	existing := map[string]map[string]string{} // "kind/name" -> annotations
	rd.unreadable = map[string]string{}
	used := refs.Find(&v.Template.Spec)
	namesOf := func(k refs.Kind) []string {
		var out []string
		for _, r := range used {
			if r.Kind == k {
				out = append(out, r.Name)
			}
		}
		return out
	}
	// A list is needed for named reloads (regexes over every name) and
	// shows the whole picture; without it, each used resource is read.
	readAll := func(kind refs.Kind, list func() ([]metav1.Object, error), get func(name string) (metav1.Object, error)) {
		add := func(o metav1.Object) {
			objs = append(objs, o)
			existing[string(kind)+"/"+o.GetName()] = o.GetAnnotations()
		}
		items, err := list()
		if err == nil {
			for _, o := range items {
				add(o)
			}
			return
		}
		rd.note("listing "+kindTitle(kind)+"s in "+ns, err)
		for _, name := range namesOf(kind) {
			o, err := get(name)
			switch {
			case err == nil:
				add(o)
			case !apierrors.IsNotFound(err):
				rd.unreadable[string(kind)+"/"+name] = reasonOf(err)
			}
		}
	}
	cms, secrets := cl.Kube.CoreV1().ConfigMaps(ns), cl.Kube.CoreV1().Secrets(ns)
	readAll(refs.ConfigMap, func() ([]metav1.Object, error) {
		l, err := cms.List(ctx, metav1.ListOptions{})
		return objects(l, err, func(l *corev1.ConfigMapList) []corev1.ConfigMap { return l.Items })
	}, func(name string) (metav1.Object, error) { return cms.Get(ctx, name, metav1.GetOptions{}) })
	readAll(refs.Secret, func() ([]metav1.Object, error) {
		l, err := secrets.List(ctx, metav1.ListOptions{})
		return objects(l, err, func(l *corev1.SecretList) []corev1.Secret { return l.Items })
	}, func(name string) (metav1.Object, error) { return secrets.Get(ctx, name, metav1.GetOptions{}) })
	if co.CSI && cl.Dynamic != nil {
		for _, gvr := range cache.CSIResources() {
			l, err := cl.Dynamic.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				rd.note("listing "+gvr.Resource+" in "+ns, err)
				continue
			}
			for i := range l.Items {
				objs = append(objs, &l.Items[i])
				if l.Items[i].GetKind() == "SecretProviderClass" {
					existing[string(refs.SecretProviderClass)+"/"+l.Items[i].GetName()] = l.Items[i].GetAnnotations()
				}
			}
		}
	}
	if co.NamespaceSelector != nil {
		n, err := cl.Kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err == nil {
			objs = append(objs, n)
		} else {
			rd.note("reading Namespace "+ns+" (for --namespace-selector)", err)
			rd.namespaceUnknown = true
			co.NamespaceSelector = nil
		}
	}
	return objs, existing
}

// objects are a list's items as metadata, or the list's error.
func objects[L any, T any, PT interface {
	*T
	metav1.Object
}](l L, err error, items func(L) []T) ([]metav1.Object, error) {
	if err != nil {
		return nil, err
	}
	list := items(l)
	out := make([]metav1.Object, len(list))
	for i := range list {
		out[i] = PT(&list[i])
	}
	return out, nil
}

// lastReload reads the controller's Reloaded Events for the workload.
func (rd *reader) lastReload(ctx context.Context, cl Clients, o Options, strategy string) *LastReload {
	l, err := cl.Kube.CoreV1().Events(o.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.name=" + o.Name + ",involvedObject.kind=" + string(o.Kind),
	})
	if err != nil {
		rd.note("listing Events in "+o.Namespace, err)
		return nil
	}
	var last *corev1.Event
	for i := range l.Items {
		e := &l.Items[i]
		if e.Reason != "Reloaded" {
			continue
		}
		if last == nil || eventTime(e).After(eventTime(last)) {
			last = e
		}
	}
	if last == nil {
		return nil
	}
	return &LastReload{Time: eventTime(last), Message: last.Message, Strategy: strategy}
}

func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}
