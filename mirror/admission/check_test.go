package admission_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/reloader-dev/reloader/internal/exitcode"
	"github.com/reloader-dev/reloader/mirror/admission"
	"github.com/reloader-dev/reloader/mirror/policycheck"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/test/controlplane"
)

// policycheck, against the real apiserver with the generated
// ValidatingAdmissionPolicy applied, admits the release and reports every
// other case denied by that policy, from an identity that may do nothing
// but create pods in the namespace. With the policy removed the same check
// reports the bad cases admitted and fails with exit code 3; without
// permission to create pods it does not pretend to give verdicts.
func TestPolicyCheckOnTheAPIServer(t *testing.T) {
	t.Parallel()
	needControlPlane(t)
	ctx := testContext(t)
	m := publishKeyed(t)
	ns := cp.Namespace(t)
	k := newKube(t, cp.Admin)

	o := m.opts
	o.Namespace, o.Name = ns, "rm-"+ns
	out, err := admission.Generate(o, []admission.Format{admission.VAP})
	if err != nil {
		t.Fatal(err)
	}
	objs := decode(t, out[admission.VAP])
	for _, obj := range objs {
		if err := k.apply(ctx, obj, false); err != nil {
			t.Fatalf("applying %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
		t.Cleanup(func() { k.delete(obj) })
	}

	l, err := release.Parse(m.rel.LockJSON)
	if err != nil {
		t.Fatal(err)
	}
	cases, err := policycheck.Cases(l, m.mapping.Repository)
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.Grant(ctx, "policy-check", ns, controlplane.User("auditor"), []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create"}}}); err != nil {
		t.Fatal(err)
	}
	auditor, err := cp.UserConfig("auditor")
	if err != nil {
		t.Fatal(err)
	}
	check := func(ctx context.Context) (*policycheck.Report, error) {
		return policycheck.Run(ctx, policycheck.Options{Config: auditor, Namespace: ns}, cases)
	}

	// The apiserver enforces a new policy once its informer has seen it.
	var rep *policycheck.Report
	var last error
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		// RBAC picks the new grant up asynchronously too: an error is an
		// answer to wait past, reported if it stays.
		rep, last = check(ctx)
		return last == nil && rep.Holds, nil
	}); err != nil {
		t.Fatalf("the check never held: %v; last error %v, last report %+v", err, last, rep)
	}
	if rep.Err() != nil {
		t.Errorf("a holding report has an error: %v", rep.Err())
	}
	admitted, denied := 0, 0
	for _, v := range rep.Verdicts {
		if v.Admitted {
			admitted++
			if !strings.HasPrefix(v.Image, target+"/") || !strings.Contains(v.Image, "@sha256:") {
				t.Errorf("admitted case %q uses %s, not the release at the mirror by digest", v.Name, v.Image)
			}
			continue
		}
		denied++
		if want := "ValidatingAdmissionPolicy " + o.Name; !strings.HasPrefix(v.By, want) {
			t.Errorf("case %q (%s) was denied by %q, want %q; message: %s", v.Name, v.Image, v.By, want, v.Message)
		}
	}
	if variants := len(l.Find(release.KindImageIndex, "")); variants != 4 || admitted != variants || denied != 3*variants {
		t.Errorf("verdicts: %d admitted, %d denied; want each variant's release image admitted and its three bad cases denied: %+v", admitted, denied, rep.Verdicts)
	}

	t.Run("an identity without create on pods gets an error, not verdicts", func(t *testing.T) {
		nobody, err := cp.UserConfig("nobody")
		if err != nil {
			t.Fatal(err)
		}
		_, err = policycheck.Run(ctx, policycheck.Options{Config: nobody, Namespace: ns}, cases)
		if err == nil || !strings.Contains(err.Error(), "needs create on pods in namespace "+ns) {
			t.Errorf("got %v, want an error saying the check needs create on pods", err)
		}
	})

	t.Run("with the policies removed the bad cases are admitted and the check fails with exit 3", func(t *testing.T) {
		for _, obj := range objs {
			k.delete(obj)
		}
		var rep *policycheck.Report
		var last error
		if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			rep, last = check(ctx)
			return last == nil && !rep.Holds && allAdmitted(rep), nil
		}); err != nil {
			t.Fatalf("the removal never showed: %v; last error %v, last report %+v", err, last, rep)
		}
		err := rep.Err()
		if !errors.Is(err, policycheck.ErrNotEnforced) || exitcode.Of(err) != exitcode.Refused {
			t.Fatalf("got %v (exit %d), want ErrNotEnforced with exit 3", err, exitcode.Of(err))
		}
		if !strings.Contains(err.Error(), "by tag ("+target+"/reloader:v1.2.3) was admitted") {
			t.Errorf("the error does not name the admitted tag: %v", err)
		}
	})
}

func allAdmitted(r *policycheck.Report) bool {
	for _, v := range r.Verdicts {
		if !v.Admitted {
			return false
		}
	}
	return true
}
