package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/pipeline"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/csaf"
	"github.com/reloader-dev/reloader/release/scancheck"
	"github.com/reloader-dev/reloader/test/tools"

	gocsaf "github.com/gocsaf/csaf/v3/csaf"
)

// The acceptance lines of issue 51 item 4, on a release made by the real
// pipeline with the real gate, accepting a finding until a date: the
// OpenVEX the release attests and the CSAF VEX document it publishes carry
// the statement's dates; imported while the statement holds, the release
// imports as before; imported on its date, the statement is reported by
// vulnerability, image and date (in -o json too) and refuses the release
// under the scan policy; and a CSAF VEX document whose date was moved is
// refused for its signature.
func TestAVEXStatementPastItsDateIsRefusedAtImportAndOneWithinItHolds(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds, scans and signs a release of the controller with the real Trivy")
	}
	ctx, cancel := tools.BuildContext(t)
	defer cancel()
	until := time.Now().UTC().AddDate(0, 2, 0).Truncate(24 * time.Hour)
	sr, err := publishScanned(t, ctx, startRegistry(t).Host, "v1.3.1", "HIGH", until.Format(time.DateOnly), 52)
	if err != nil {
		t.Fatal(err)
	}
	idx := sr.rel.Lock.Find(release.KindImageIndex, "reloader")[0]
	checkVEXDates(t, sr, idx, until)
	archive := exportScanned(t, sr)

	t.Run("within its date the statement holds and the release imports", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, "import", "-f", archive, "--target", startRegistry(t).Host+"/platform/reloader", "--key", sr.key, "-o", "json")
		if code != cli.ExitOK || strings.Contains(stdout, "expiredStatements") {
			t.Fatalf("import of a release whose statement holds: exit %d\n%s\n%s", code, stdout, stderr)
		}
	})

	t.Run("on its date the statement is reported and refuses the release", func(t *testing.T) {
		target := startRegistry(t).Host + "/platform/reloader"
		code, _, stderr := runCLIAt(t, until, "import", "-f", archive, "--target", target, "--key", sr.key)
		if code != cli.ExitRefused {
			t.Fatalf("import: exit %d, want %d\n%s", code, cli.ExitRefused, stderr)
		}
		for _, want := range []string{"CVE-2099-2201", "reloader@" + idx.Digest, until.Format(time.DateOnly), "VEX statement"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("the refusal does not name %q:\n%s", want, stderr)
			}
		}
		code, stdout, _ := runCLIAt(t, until, "import", "-f", archive, "--target", target, "--key", sr.key, "-o", "json")
		var res struct {
			ScanCheck scancheck.Result `json:"scanCheck"`
		}
		if err := json.Unmarshal([]byte(stdout), &res); err != nil || code != cli.ExitRefused || len(res.ScanCheck.ExpiredStatements) != 1 {
			t.Fatalf("import -o json: exit %d, %v, %+v\n%s", code, err, res.ScanCheck, stdout)
		}
		e := res.ScanCheck.ExpiredStatements[0]
		if e.Vulnerability != "CVE-2099-2201" || e.Expires != until.Format(time.DateOnly) || !slices.Contains(e.Images, "reloader@"+idx.Digest) {
			t.Errorf("import -o json reports %+v, want CVE-2099-2201 on reloader@%s past %s", e, idx.Digest, until.Format(time.DateOnly))
		}
	})

	t.Run("a CSAF VEX document whose date was moved is refused", func(t *testing.T) {
		csafDir := filepath.Join(sr.out, "page", pipeline.CSAFDir)
		name := csaf.FileName(csaf.VEXTrackingID(sr.rel.Lock.Version))
		doc, err := os.ReadFile(filepath.Join(csafDir, name))
		if err != nil {
			t.Fatal(err)
		}
		moved := bytes.ReplaceAll(doc, []byte(until.Format(time.DateOnly)), []byte(until.AddDate(5, 0, 0).Format(time.DateOnly)))
		if bytes.Equal(moved, doc) {
			t.Fatal("the CSAF VEX document does not hold the date the test moves")
		}
		tampered := copyDir(t, csafDir)
		if err := os.WriteFile(filepath.Join(tampered, name), moved, 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runCLI(t, "import", "-f", archive, "--target", startRegistry(t).Host+"/platform/reloader", "--key", sr.key, "--advisories", tampered)
		if code != cli.ExitRefused || !strings.Contains(stderr, "CSAF document "+name) || !strings.Contains(stderr, "untrusted") {
			t.Errorf("import judged by a CSAF VEX document with a moved date: exit %d, want %d refusing its signature:\n%s", code, cli.ExitRefused, stderr)
		}
	})
}

// runCLIAt runs the CLI judging releases at now (app.now), as if on
// that day: the statement's date comes without waiting for it.
func runCLIAt(t *testing.T, now time.Time, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	root := (&app{stdout: &out, stderr: &errb, now: now}).root()
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errb)
	return cli.Report("reloader-mirror", root.ExecuteContext(context.Background()), &errb), out.String(), errb.String()
}

// exportScanned writes the release to an archive, as the connected side
// carries it across the air gap while its statement holds.
func exportScanned(t *testing.T, sr *scannedRelease) string {
	t.Helper()
	archive := filepath.Join(t.TempDir(), "release.tar")
	if code, _, stderr := runCLI(t, "export", "--lock-ref", sr.rel.LockRef, "--key", sr.key, "--to", archive); code != cli.ExitOK {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	return archive
}

// checkVEXDates reads the statement's date where a machine reads it: the
// attested OpenVEX's timestamp and status_notes, the CSAF VEX document's
// dated flag or mitigation and its "Stated until" threat; and the review
// page the release publishes shows both dates and lists the document.
func checkVEXDates(t *testing.T, sr *scannedRelease, idx release.Artifact, until time.Time) {
	t.Helper()
	doc := attestedVEX(t, t.Context(), idx)
	if len(doc.Statements) != 1 {
		t.Fatalf("attested OpenVEX statements %+v, want one", doc.Statements)
	}
	st := doc.Statements[0]
	got, ok, err := csaf.StatementUntil(st)
	if err != nil || !ok || !got.Equal(until) || st.Timestamp == nil || !st.Timestamp.Equal(sr.rel.Lock.Created) {
		t.Errorf("attested OpenVEX statement stated %v until %v (%v %v), want %v until %v", st.Timestamp, got, ok, err, sr.rel.Lock.Created, until)
	}
	data, err := os.ReadFile(filepath.Join(sr.out, "page", pipeline.CSAFDir, csaf.FileName(csaf.VEXTrackingID(sr.rel.Lock.Version))))
	if err != nil {
		t.Fatalf("the release published no CSAF VEX document: %v", err)
	}
	if err := csaf.Validate(data); err != nil {
		t.Fatal(err)
	}
	var adv gocsaf.Advisory
	if err := json.Unmarshal(data, &adv); err != nil || len(adv.Vulnerabilities) != 1 {
		t.Fatalf("the CSAF VEX document: %v, %d vulnerabilities", err, len(adv.Vulnerabilities))
	}
	v := adv.Vulnerabilities[0]
	if got, ok, err := csaf.VulnerabilityUntil(v); err != nil || !ok || !got.Equal(until) {
		t.Errorf("the CSAF VEX statement holds until %v (%v %v), want %v", got, ok, err, until)
	}
	if len(v.Remediations) == 0 || v.Remediations[0].Date == nil || *v.Remediations[0].Date != sr.rel.Lock.Created.UTC().Format(time.RFC3339) {
		t.Errorf("the CSAF VEX accepted risk's mitigation is not dated %s: %+v", sr.rel.Lock.Created, v.Remediations)
	}
	page, err := os.ReadFile(filepath.Join(sr.out, "page", "review", "index.html"))
	if err != nil || !strings.Contains(string(page), `id="vex-statements"`) || !strings.Contains(string(page), until.Format(time.DateOnly)) {
		t.Errorf("the release's review page does not show the statement's dates (%v)", err)
	}
	if vexID := csaf.VEXTrackingID(sr.rel.Lock.Version); !strings.Contains(string(page), `<tr data-csaf="`+vexID+`"><td><a href="../csaf/`+csaf.FileName(vexID)+`">`) {
		t.Errorf("the release's review page does not list its CSAF VEX document %s by a link to the published file", vexID)
	}
}
