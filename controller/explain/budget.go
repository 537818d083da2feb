package explain

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reloader-dev/reloader/controller"
	"github.com/reloader-dev/reloader/controller/budget"
	"github.com/reloader-dev/reloader/controller/workload"
)

// budgetHolds says whether the rollout budget holds v's due reload: the
// Deployments, StatefulSets and DaemonSets rolling out now, counted from the
// cluster as the controller counts them from its caches. The order among
// reloads waiting is the controller's memory, not the cluster's, so explain
// can only say the reload waits, not how many are ahead.
func budgetHolds(ctx context.Context, cl Clients, co controller.Options, v workload.View, rd *reader) []string {
	if !co.Budget.Enabled() || co.Webhook != nil || !budget.Gated(v.Kind) {
		return nil
	}
	namespaces := co.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	cluster, here := 0, 0
	count := func(ns string, obj any, name string) {
		if ns == v.Object.GetNamespace() && name == v.Object.GetName() && objKind(obj) == v.Kind {
			return
		}
		if budget.Rolling(obj) && !slices.Contains(co.NamespacesToIgnore, ns) {
			cluster++
			if ns == v.Object.GetNamespace() {
				here++
			}
		}
	}
	apps := cl.Kube.AppsV1()
	for _, ns := range namespaces {
		ds, err := apps.Deployments(ns).List(ctx, metav1.ListOptions{})
		if err == nil {
			for i := range ds.Items {
				count(ds.Items[i].Namespace, &ds.Items[i], ds.Items[i].Name)
			}
		}
		ss, err2 := apps.StatefulSets(ns).List(ctx, metav1.ListOptions{})
		if err2 == nil {
			for i := range ss.Items {
				count(ss.Items[i].Namespace, &ss.Items[i], ss.Items[i].Name)
			}
		}
		dss, err3 := apps.DaemonSets(ns).List(ctx, metav1.ListOptions{})
		if err3 == nil {
			for i := range dss.Items {
				count(dss.Items[i].Namespace, &dss.Items[i], dss.Items[i].Name)
			}
		}
		if err := firstErr(err, err2, err3); err != nil {
			rd.notes = append(rd.notes, fmt.Sprintf("the rollouts in progress could not be counted (the rollout budget may hold this reload): %v", err))
			return nil
		}
	}
	var out []string
	if co.Budget.Max > 0 && cluster >= co.Budget.Max {
		out = append(out, fmt.Sprintf("the rollout budget (--max-concurrent-rollouts=%d) holds it: %d rolling out in the cluster; it starts when one finishes, in the order the reloads became due", co.Budget.Max, cluster))
	}
	if co.Budget.PerNamespace > 0 && here >= co.Budget.PerNamespace {
		out = append(out, fmt.Sprintf("the rollout budget (--max-concurrent-rollouts-per-namespace=%d) holds it: %d rolling out in namespace %s; it starts when one finishes", co.Budget.PerNamespace, here, v.Object.GetNamespace()))
	}
	return out
}

func objKind(obj any) workload.Kind {
	v, err := workload.ViewOf(obj)
	if err != nil {
		return ""
	}
	return v.Kind
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
