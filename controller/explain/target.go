package explain

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/reloader-dev/reloader/controller/workload"
)

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
	k, known := workload.ByAlias(kind)
	if !known {
		return "", "", fmt.Errorf("%q: %q is not a kind the controller reloads (%s)", s, kind, kindList())
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return "", "", fmt.Errorf("%q: invalid name %q: %s", s, name, strings.Join(errs, "; "))
	}
	return k, name, nil
}

// kindList names the kinds the controller reloads, lower-cased, in the
// table's order.
func kindList() string {
	names := make([]string, 0, len(workload.All()))
	for _, k := range workload.All() {
		names = append(names, strings.ToLower(string(k)))
	}
	return strings.Join(names, ", ")
}
