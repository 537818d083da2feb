package pipeline_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/publish/pipeline"
	"github.com/reloader-dev/reloader/review"
)

// checkPublishedPage holds the versions page and the review published next
// to it to what a procurement reviewer needs from a release of the real
// controller: its dependencies with their licences, the UBI base's RPMs,
// the support table and the scan status.
func checkPublishedPage(t *testing.T, outDir string) {
	t.Helper()
	html, err := os.ReadFile(filepath.Join(outDir, "page", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<table id="support">`, "Security advisories", `href="review/index.html"`, `href="security.txt"`} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the versions page lacks %q", want)
		}
	}
	checkCRADuties(t, outDir, string(html))
	data, err := os.ReadFile(filepath.Join(outDir, "page", "review", review.FileJSON))
	if err != nil {
		t.Fatal(err)
	}
	var r review.Review
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	licences := map[string]string{}
	rpms := map[string]string{}
	for _, c := range r.Components {
		licences[c.Name] = c.Licence
		for _, in := range c.In {
			if strings.HasPrefix(c.Source, "RPM") && in.Variant == "ubi" {
				rpms[c.Name] = c.Licence
			}
		}
	}
	for _, name := range []string{"k8s.io/client-go", "github.com/prometheus/client_golang", "github.com/spf13/cobra", "github.com/reloader-dev/reloader"} {
		if !strings.Contains(licences[name], "Apache-2.0") {
			t.Errorf("the review gives %s licence %q, want Apache-2.0 in it", name, licences[name])
		}
	}
	if rpms["bash"] != "GPL-3.0-or-later" || len(rpms) < 4 {
		t.Errorf("the UBI variant's RPMs in the review: %v, want bash (GPL-3.0-or-later) and the base's other packages", rpms)
	}
	if r.Vulnerabilities.Status() != "scan skipped" {
		t.Errorf("a --no-scan release's review says %q", r.Vulnerabilities.Status())
	}
	// Each component once, with the images carrying it.
	seen := map[string]bool{}
	for _, c := range r.Components {
		k := c.Name + "@" + c.Version + " " + c.PURL + " " + c.Source
		if seen[k] || len(c.In) == 0 {
			t.Errorf("component %s listed twice or carried by no image", k)
		}
		seen[k] = true
	}
	// The published page is the signed one: its digest is in the signed
	// review attested on each index.
	pred, err := os.ReadFile(filepath.Join(outDir, pipeline.ReviewPredicateFile))
	if err != nil {
		t.Fatal(err)
	}
	a, err := review.ParseAttestation(pred)
	if err != nil {
		t.Fatalf("the signed review: %v", err)
	}
	page, err := os.ReadFile(filepath.Join(outDir, "page", "review", review.FileHTML))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("sha256:%x", sha256.Sum256(page)); got != a.HTMLDigest {
		t.Errorf("the published review page is %s, the signed review's page %s", got, a.HTMLDigest)
	}
	if len(a.Review.SSDF.Practices) == 0 || !strings.Contains(string(page), `id="ssdf-map"`) {
		t.Error("the signed review has no SSDF map")
	}
}
