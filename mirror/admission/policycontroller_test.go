package admission_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/mirror/admission"
)

// policy-controller admits what no ClusterImagePolicy matches only under
// no-match-policy "warn" or "allow", and has no list of allowed digests: the
// policies' globs are the pin. Each names one approved digest in one
// mirrored repository, every policy matches the same images, no glob holds a
// wildcard that would match another digest or a tag, and the header says
// which no-match-policy the pin needs.
func TestPolicyControllerPoliciesMatchOnlyTheApprovedDigests(t *testing.T) {
	t.Parallel()
	other := "sha256:" + strings.Repeat("b", 64)
	o := keyOptions(t)
	o.Digests = []string{other, testDigest, other}
	o.Approved = []string{"v1.2.3", "v1.3.0"}
	out, err := admission.Generate(o, []admission.Format{admission.PolicyController})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{repo + "@" + other, repo + "@" + testDigest, repoUBI + "@" + other, repoUBI + "@" + testDigest}
	slices.Sort(want)
	policies := 0
	for _, obj := range objects(t, out[admission.PolicyController]) {
		if obj["kind"] != "ClusterImagePolicy" {
			continue
		}
		policies++
		var globs []string
		for _, img := range obj["spec"].(map[string]any)["images"].([]any) {
			globs = append(globs, img.(map[string]any)["glob"].(string))
		}
		slices.Sort(globs)
		if !slices.Equal(globs, want) {
			t.Errorf("%s matches %v, want exactly the approved digests in each repository %v", obj["metadata"].(map[string]any)["name"], globs, want)
		}
		for _, g := range globs {
			if strings.ContainsAny(g, "*?[") {
				t.Errorf("glob %q holds a wildcard", g)
			}
		}
	}
	if policies != 2 {
		t.Fatalf("%d ClusterImagePolicies, want the signature's and the SBOM's", policies)
	}
	head := string(out[admission.PolicyController])
	for _, w := range []string{"Only the approved digests (2, of Reloader v1.3.0, v1.2.3)", "no-match-policy: deny"} {
		if !strings.Contains(head, w) {
			t.Errorf("the policy does not say %q:\n%s", w, head)
		}
	}
}
