package explain

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/reloader-dev/reloader/controller/workload"
)

// kindAliases are the names kubectl accepts for the kinds the controller
// reloads (singular, plural, short name), lower-cased.
var kindAliases = map[string]workload.Kind{
	"deployment": workload.Deployment, "deployments": workload.Deployment, "deploy": workload.Deployment,
	"statefulset": workload.StatefulSet, "statefulsets": workload.StatefulSet, "sts": workload.StatefulSet,
	"daemonset": workload.DaemonSet, "daemonsets": workload.DaemonSet, "ds": workload.DaemonSet,
	"cronjob": workload.CronJob, "cronjobs": workload.CronJob, "cj": workload.CronJob,
	"job": workload.Job, "jobs": workload.Job,
	"rollout": workload.Rollout, "rollouts": workload.Rollout, "ro": workload.Rollout,
	"deploymentconfig": workload.DeploymentConfig, "deploymentconfigs": workload.DeploymentConfig, "dc": workload.DeploymentConfig,
}

// ParseTarget reads KIND/NAME as kubectl writes it ("deployment/web",
// "deploy/web", "sts/db", "deployments.apps/web").
func ParseTarget(s string) (workload.Kind, string, error) {
	kind, name, ok := strings.Cut(s, "/")
	if !ok || kind == "" || name == "" {
		return "", "", fmt.Errorf("%q: want KIND/NAME, e.g. deployment/web", s)
	}
	// kubectl accepts resource.group ("deployments.apps"): the group adds
	// nothing for these kinds.
	kind, _, _ = strings.Cut(kind, ".")
	k, known := kindAliases[strings.ToLower(kind)]
	if !known {
		return "", "", fmt.Errorf("%q: %q is not a kind the controller reloads (deployment, statefulset, daemonset, cronjob, job, rollout, deploymentconfig)", s, kind)
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return "", "", fmt.Errorf("%q: invalid name %q: %s", s, name, strings.Join(errs, "; "))
	}
	return k, name, nil
}
