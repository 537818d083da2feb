package explain

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// controllerStatus says whether a controller runs and which replica leads,
// from what the user may read: /readyz (through a port-forward), the
// controller's Deployment and its Lease. Each source fills in what the
// others miss, in that order, so they are read in one place.
func controllerStatus(ctx context.Context, cl Clients, o Options) ControllerStatus {
	st := ControllerStatus{OptionsFrom: o.OptionsFrom, Running: "unknown"}
	detail := func(format string, args ...any) { st.Details = append(st.Details, fmt.Sprintf(format, args...)) }
	if o.ReadyzURL != "" && cl.Get != nil {
		code, body, err := cl.Get(ctx, o.ReadyzURL)
		body = strings.TrimSpace(body)
		switch {
		case err != nil:
			st.Running = "no"
			detail("%s unreachable: %v", o.ReadyzURL, err)
		case code == 200:
			st.Running = "yes"
			detail("%s answered %q", o.ReadyzURL, body)
		default:
			st.Running = "no"
			detail("%s answered %d %q: not ready", o.ReadyzURL, code, body)
		}
	}
	if d := o.Deployment; d != nil && d.Name != "" {
		dep, err := cl.Kube.AppsV1().Deployments(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{})
		switch {
		case err != nil:
			detail("reading Deployment %s/%s: %s", d.Namespace, d.Name, reasonOf(err))
			if o.ReadyzURL == "" && strings.Contains(reasonOf(err), "not found") {
				st.Running = "no"
			}
		default:
			want := int32(1)
			if dep.Spec.Replicas != nil {
				want = *dep.Spec.Replicas
			}
			detail("Deployment %s/%s: %d of %d replicas ready", d.Namespace, d.Name, dep.Status.ReadyReplicas, want)
			if o.ReadyzURL == "" {
				st.Running = map[bool]string{true: "yes", false: "no"}[dep.Status.ReadyReplicas > 0]
			}
		}
	}
	if o.HA && o.LockName != "" && o.LeaseNamespace != "" {
		l, err := cl.Kube.CoordinationV1().Leases(o.LeaseNamespace).Get(ctx, o.LockName, metav1.GetOptions{})
		switch {
		case err != nil:
			detail("reading Lease %s/%s: %s", o.LeaseNamespace, o.LockName, reasonOf(err))
		case l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "":
			detail("Lease %s/%s: no holder, no replica leads", o.LeaseNamespace, o.LockName)
		default:
			dur := 15 * time.Second
			if l.Spec.LeaseDurationSeconds != nil {
				dur = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
			}
			var renewed time.Time
			if l.Spec.RenewTime != nil {
				renewed = l.Spec.RenewTime.Time
			}
			if renewed.Add(dur).After(o.Now()) {
				st.Leader = *l.Spec.HolderIdentity
				detail("Lease %s/%s held by %s, renewed %s", o.LeaseNamespace, o.LockName, st.Leader, renewed.UTC().Format(time.RFC3339))
				if st.Running == "unknown" {
					st.Running = "yes"
				}
			} else {
				detail("Lease %s/%s expired at %s (last holder %s): no replica leads", o.LeaseNamespace, o.LockName,
					renewed.Add(dur).UTC().Format(time.RFC3339), *l.Spec.HolderIdentity)
				if st.Running == "unknown" {
					st.Running = "no"
				}
			}
		}
	}
	if o.MetaInfoAbsent && st.Running == "unknown" {
		st.Running = "no"
		detail("no reloader-meta-info ConfigMap found: no controller appears to be installed (or it runs without RELOADER_NAMESPACE)")
	}
	if st.Running == "unknown" {
		detail("cannot tell whether a controller runs: pass --readyz-url through a port-forward to its metrics port")
	}
	return st
}
