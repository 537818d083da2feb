package policycheck

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/reloader-dev/reloader/release"
)

func digest(c byte) string { return "sha256:" + strings.Repeat(string(c), 64) }

// Each image variant of the release gets one case that must be admitted (its
// index by digest from the mirror) and three that must be denied: a tag, the
// same digest where the lock says it was published, and a digest of the
// mirrored repository that the release does not hold.
func TestCasesProbeEachVariantFromTheMirrorAndThreeWaysAround(t *testing.T) {
	l := &release.Lock{Version: "v1.2.3", Artifacts: []release.Artifact{
		{Kind: release.KindImageIndex, Name: "reloader", Variant: "standard", Repository: "ghcr.io/reloader-dev/reloader", Digest: digest('a')},
		{Kind: release.KindImage, Name: "reloader", Variant: "standard", Platform: "linux/amd64", Repository: "ghcr.io/reloader-dev/reloader", Digest: digest('b')},
		{Kind: release.KindImageIndex, Name: "reloader-ubi", Variant: "ubi", Repository: "ghcr.io/reloader-dev/reloader-ubi", Digest: digest('c')},
	}}
	mirror := func(repo string) string {
		return "harbor.corp.example/platform/" + repo[strings.LastIndex(repo, "/")+1:]
	}
	cases, err := Cases(l, mirror)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cases {
		got = append(got, c.Image)
	}
	unlisted := cases[3].Image[strings.Index(cases[3].Image, "@")+1:]
	want := []string{
		"harbor.corp.example/platform/reloader@" + digest('a'),
		"harbor.corp.example/platform/reloader:v1.2.3",
		"ghcr.io/reloader-dev/reloader@" + digest('a'),
		"harbor.corp.example/platform/reloader@" + unlisted,
		"harbor.corp.example/platform/reloader-ubi@" + digest('c'),
		"harbor.corp.example/platform/reloader-ubi:v1.2.3",
		"ghcr.io/reloader-dev/reloader-ubi@" + digest('c'),
		"harbor.corp.example/platform/reloader-ubi@" + unlisted,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("cases:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i, c := range cases {
		if c.Admit != (i%4 == 0) {
			t.Errorf("case %q: expect admitted = %v", c.Name, c.Admit)
		}
	}
	for _, a := range l.Artifacts {
		if a.Digest == unlisted {
			t.Errorf("the unlisted digest %s is in the lock", unlisted)
		}
	}

	// A target that is the source registry itself still gets a registry
	// the policies must deny.
	same, err := Cases(l, func(repo string) string { return repo })
	if err != nil {
		t.Fatal(err)
	}
	if same[2].Image != "registry.invalid/reloader@"+digest('a') {
		t.Errorf("other-registry case at the source itself: %s", same[2].Image)
	}

	if _, err := Cases(&release.Lock{Version: "v1"}, mirror); err == nil {
		t.Error("a lock without image indexes gave cases")
	}
}

// Denials are told apart from the check being unable to run: RBAC, a missing
// namespace or an unreachable cluster are errors, never verdicts.
func TestClassifyNamesWhoDeniedAndRefusesNonVerdicts(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	for _, tc := range []struct {
		name string
		err  error
		by   string // "" with wantErr false: denied by an unnamed plugin
		fail string // non-empty: an error containing it
	}{
		{"another admission plugin, named by its message only", apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "x", nil), "", ""},
		{"a ValidatingAdmissionPolicy's message", apierrors.NewForbidden(pods, "x", errors.New("ValidatingAdmissionPolicy 'rm-images' with binding 'rm-images' denied request: image not pinned by digest")), "ValidatingAdmissionPolicy rm-images (binding rm-images)", ""},
		{"a webhook", apierrors.NewForbidden(pods, "x", errors.New(`admission webhook "policy.sigstore.dev" denied the request: validation failed`)), "webhook policy.sigstore.dev", ""},
		{"an unreachable webhook failing closed", apierrors.NewInternalError(errors.New(`failed calling webhook "validate.kyverno.svc-fail": connection refused`)), "webhook validate.kyverno.svc-fail (unreachable, failing closed)", ""},
		{"pod security", apierrors.NewForbidden(pods, "x", errors.New(`violates PodSecurity "restricted:latest": runAsNonRoot != true`)), "PodSecurity", ""},
		{"RBAC", apierrors.NewForbidden(pods, "", errors.New(`User "nobody" cannot create resource "pods" in API group "" in the namespace "reloader"`)), "", "needs create on pods in namespace reloader"},
		{"no namespace", apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "reloader"), "", "namespace reloader"},
		{"unauthorized", apierrors.NewUnauthorized("bad token"), "", "credentials were refused"},
		{"unreachable cluster", &url.Error{Op: "Post", URL: "https://127.0.0.1:1", Err: errors.New("connection refused")}, "", "creating a dry-run pod in namespace reloader"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			by, msg, err := classify("reloader", tc.err)
			if tc.fail != "" {
				if err == nil || !strings.Contains(err.Error(), tc.fail) {
					t.Fatalf("got verdict %q (%s), err %v; want an error containing %q", by, msg, err, tc.fail)
				}
				return
			}
			if err != nil {
				t.Fatalf("a denial became an error: %v", err)
			}
			if by != tc.by || msg != tc.err.Error() {
				t.Errorf("by %q message %q, want by %q message %q", by, msg, tc.by, tc.err.Error())
			}
		})
	}
}

// The report's error names each unexpected verdict and carries exit code 3.
func TestReportErrNamesWhatWasWronglyAdmittedOrDenied(t *testing.T) {
	r := &Report{Namespace: "reloader", Verdicts: []Verdict{
		{Case: Case{Name: "release", Image: "m/r@" + digest('a'), Admit: true}, Message: "denied: quota", OK: false},
		{Case: Case{Name: "tag", Image: "m/r:v1"}, Admitted: true, Warnings: []string{"not pinned"}},
		{Case: Case{Name: "other", Image: "o/r@" + digest('a')}, OK: true},
	}}
	err := r.Err()
	if !errors.Is(err, ErrNotEnforced) {
		t.Fatalf("got %v, want ErrNotEnforced", err)
	}
	for _, want := range []string{"namespace reloader", "release (m/r@" + digest('a') + ") was denied", "denied: quota", "tag (m/r:v1) was admitted with warnings only"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "other") {
		t.Errorf("error names a verdict that was as expected: %v", err)
	}
	if (&Report{Holds: true}).Err() != nil {
		t.Error("a holding report has an error")
	}
}
