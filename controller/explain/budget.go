package explain

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/reloader-dev/reloader/controller"
	"github.com/reloader-dev/reloader/controller/budget"
	"github.com/reloader-dev/reloader/controller/workload"
)

// budgetHolds says whether the rollout budget holds v's due reload: the
// managed Deployments, StatefulSets and DaemonSets rolling out now, counted
// from the cluster as a newly started controller counts them from its
// caches (budget/hold.go). Which rollouts the controller itself started, and
// the order among reloads waiting, are its memory, not the cluster's, so
// explain can only say the reload waits, not how many are ahead.
func budgetHolds(ctx context.Context, cl Clients, co controller.Options, v workload.View, rd *reader) []string {
	if !co.Budget.Enabled() || co.Webhook != nil || !budget.Gated(v.Kind) {
		return nil
	}
	namespaces := co.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	apps := cl.Kube.AppsV1()
	lists := map[workload.Kind]func(ns string) (runtime.Object, error){
		workload.Deployment: func(ns string) (runtime.Object, error) {
			return apps.Deployments(ns).List(ctx, metav1.ListOptions{})
		},
		workload.StatefulSet: func(ns string) (runtime.Object, error) {
			return apps.StatefulSets(ns).List(ctx, metav1.ListOptions{})
		},
		workload.DaemonSet: func(ns string) (runtime.Object, error) {
			return apps.DaemonSets(ns).List(ctx, metav1.ListOptions{})
		},
	}
	self := v.Key()
	cluster, here := 0, 0
	for _, ns := range namespaces {
		for kind, list := range lists {
			l, err := list(ns)
			var objs []runtime.Object
			if err == nil {
				objs, err = meta.ExtractList(l)
			}
			if err != nil {
				rd.notes = append(rd.notes, fmt.Sprintf("the %ss rolling out could not be counted (the rollout budget may hold this reload): %v", kind, err))
				return nil
			}
			for _, obj := range objs {
				w, err := workload.ViewOf(obj)
				if err != nil || w.Key() == self || slices.Contains(co.NamespacesToIgnore, w.Key().Namespace) ||
					!budget.Managed(w, co.Names, co.AutoReloadAll) || !budget.Rolling(obj) {
					continue
				}
				cluster++
				if w.Key().Namespace == self.Namespace {
					here++
				}
			}
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
