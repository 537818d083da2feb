package explain

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/reloader-dev/reloader/controller/workload"
)

// ParseTarget reads KIND/NAME as kubectl writes it ("deployment/web",
// "deploy/web", "sts/db", "deployments.apps/web").
func ParseTarget(s string) (workload.Kind, string, error) {
	return ParseTargetOf(s, workload.Table{})
}

// ParseTargetOf is ParseTarget knowing the declared kinds too
// (--workload-kind: "cloneset/web", "clonesets.apps.kruise.io/web").
func ParseTargetOf(s string, kinds workload.Table) (workload.Kind, string, error) {
	kind, name, ok := strings.Cut(s, "/")
	if !ok || kind == "" || name == "" {
		return "", "", fmt.Errorf("%q: want KIND/NAME, e.g. deployment/web", s)
	}
	// kubectl accepts resource.group ("deployments.apps"): the group adds
	// nothing for these kinds.
	kind, _, _ = strings.Cut(kind, ".")
	k, known := kinds.ByAlias(kind)
	if !known {
		return "", "", unknownKindError{fmt.Sprintf("%q: %q is not a kind the controller reloads (%s)", s, kind, kindList(kinds))}
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return "", "", fmt.Errorf("%q: invalid name %q: %s", s, name, strings.Join(errs, "; "))
	}
	return k, name, nil
}

// kindList names the kinds the controller reloads, lower-cased, in the
// table's order.
func kindList(kinds workload.Table) string {
	names := make([]string, 0, len(kinds.All()))
	for _, k := range kinds.All() {
		names = append(names, strings.ToLower(string(k)))
	}
	return strings.Join(names, ", ")
}

// unknownKindError says a target's kind is none the controller knows of
// the options read so far.
type unknownKindError struct{ msg string }

func (e unknownKindError) Error() string { return e.msg }

// UnknownKind reports whether err is ParseTarget's for a kind it does not
// know: it may be a kind the controller's options declare, not read yet.
func UnknownKind(err error) bool {
	var u unknownKindError
	return errors.As(err, &u)
}
