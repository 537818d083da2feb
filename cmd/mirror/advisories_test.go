package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/releasetest"
)

// advisoryID marks v1.0.0 affected; it is published with v1.1.0 only.
const advisoryID = "RELOADER-2026-0042"

// writeAdvisories writes what the project's release/ directory would hold
// when v1.1.0 is cut: an advisory fixed in v1.1.0, and a support table in
// which the v1.0 series ended a month ago.
func writeAdvisories(t *testing.T, withdrawn bool) (dir, table string) {
	t.Helper()
	root := t.TempDir()
	dir = filepath.Join(root, "advisories")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	w := ""
	if withdrawn {
		w = `"withdrawn": "2026-11-21T00:00:00Z",`
	}
	osv := fmt.Sprintf(`{"schema_version": "1.7.0", "id": %q, "modified": "2026-11-20T09:00:00Z", %s
  "summary": "Reload loop on a malformed annotation",
  "affected": [{"package": {"ecosystem": "Go", "name": "github.com/reloader-dev/reloader"},
    "ranges": [{"type": "SEMVER", "events": [{"introduced": "0"}, {"fixed": "1.1.0"}]}]}]}`, advisoryID, w)
	if err := os.WriteFile(filepath.Join(dir, advisoryID+".json"), []byte(osv), 0o644); err != nil {
		t.Fatal(err)
	}
	day := func(d int) string { return time.Now().UTC().AddDate(0, 0, d).Format(time.DateOnly) }
	table = filepath.Join(root, "support.yaml")
	yaml := fmt.Sprintf("apiVersion: reloader.dev/support/v1\nseries:\n"+
		"  - {series: v1.1, released: %q, endOfSupport: %q}\n"+
		"  - {series: v1.0, released: %q, endOfSupport: %q}\n", day(-10), day(300), day(-400), day(-30))
	if err := os.WriteFile(table, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, table
}

// Two real releases: v1.0.0, then v1.1.0 whose lock carries an advisory
// against v1.0.0 and a support table that ends v1.0. v1.1.0's archive is
// imported first; the site then learns from it, offline, that v1.0.0 must
// not be brought in.
func TestAnAdvisoryCarriedByANewerReleaseRefusesTheOlderOneAtImport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := startRegistry(t)
	s, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	key := filepath.Join(dir, "cosign.pub")
	if err := os.WriteFile(key, s.PublicKeyPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	v1, err := releasetest.Publish(ctx, releasetest.Options{Registry: src.Host, Signer: s, Seed: 21, Version: "v1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	advDir, table := writeAdvisories(t, false)
	v2, err := releasetest.Publish(ctx, releasetest.Options{Registry: src.Host, Signer: s, Seed: 22, Version: "v1.1.0",
		AdvisoriesDir: advDir, SupportFile: table})
	if err != nil {
		t.Fatal(err)
	}
	if len(v2.Lock.Advisories) != 1 || v2.Lock.Support == nil || len(v1.Lock.Advisories) != 0 {
		t.Fatalf("the pipeline did not record the advisories in the locks: v1 %d, v2 %d", len(v1.Lock.Advisories), len(v2.Lock.Advisories))
	}
	trust := []string{"--key", key, "--allow-unscanned", "--allow-no-provenance"}
	export := func(rel *releasetest.Release, name string, accept ...string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if code, _, errs := runCLI(t, append(append([]string{"export", "--lock-ref", rel.LockRef, "--to", p}, accept...), trust...)...); code != cli.ExitOK {
			t.Fatalf("export %s: exit %d: %s", rel.Lock.Version, code, errs)
		}
		return p
	}
	a2 := export(v2, "v2.tar")
	// v1's own lock knows of no advisory, but the connected side knows
	// v1.1.0, published beside it: the affected release does not leave
	// unnoticed. Exported anyway, with both accepted, for the air gap.
	code, _, errs := runCLI(t, append([]string{"export", "--lock-ref", v1.LockRef, "--to", filepath.Join(dir, "refused.tar")}, trust...)...)
	if code != cli.ExitRefused || !strings.Contains(errs, "advisory "+advisoryID+" marks v1.0.0 affected") || !strings.Contains(errs, "release v1.1.0 at ") {
		t.Errorf("export of v1.0.0 with v1.1.0 published beside it: exit %d, want %d naming %s and v1.1.0: %s", code, cli.ExitRefused, advisoryID, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "refused.tar")); err == nil {
		t.Error("the refused export wrote its archive")
	}
	a1 := export(v1, "v1.tar", "--accept-advisory", advisoryID, "--accept-unsupported")

	air := startRegistry(t)
	target := air.Host + "/platform/reloader"
	if code, _, errs := runCLI(t, append([]string{"import", "-f", a2, "--target", target}, trust...)...); code != cli.ExitOK {
		t.Fatalf("import of v1.1.0: exit %d: %s", code, errs)
	}

	code, _, errs = runCLI(t, append([]string{"import", "-f", a1, "--target", target}, trust...)...)
	if code != cli.ExitRefused || !strings.Contains(errs, "advisory "+advisoryID+" marks v1.0.0 affected") ||
		!strings.Contains(errs, "release v1.1.0 at "+target+"/reloader-release:v1.1.0") {
		t.Fatalf("import of v1.0.0 after v1.1.0: exit %d, want %d naming %s and where it came from: %s", code, cli.ExitRefused, advisoryID, errs)
	}
	if !strings.Contains(errs, "series v1.0 of v1.0.0 is past its end of support") {
		t.Errorf("the refusal does not name the ended series: %s", errs)
	}
	if code, _, errs = runCLI(t, append([]string{"import", "-f", a1, "--target", target, "--accept-advisory", advisoryID}, trust...)...); code != cli.ExitRefused ||
		strings.Contains(errs, "advisory "+advisoryID) || !strings.Contains(errs, "end of support") {
		t.Errorf("with --accept-advisory only the ended series may refuse: exit %d: %s", code, errs)
	}
	code, out, errs := runCLI(t, append([]string{"verify", "-f", a1, "--target", target, "-o", "json"}, trust...)...)
	var refused struct {
		Standing struct {
			Advisories []struct{ ID string }
			Support    string
			Refused    []string
		}
	}
	if code != cli.ExitRefused || json.Unmarshal([]byte(out), &refused) != nil || len(refused.Standing.Advisories) != 1 ||
		refused.Standing.Advisories[0].ID != advisoryID || refused.Standing.Support != "ended" || len(refused.Standing.Refused) != 2 {
		t.Errorf("verify -o json of v1.0.0 does not report the advisory and the ended series: exit %d %s %s", code, out, errs)
	}

	// Accepting both, into a fresh target, with v1.1.0's archive named as
	// the source: recorded in verify's report.
	fresh := air.Host + "/accepted/reloader"
	exceptions := []string{"--advisories", a2, "--accept-advisory", advisoryID, "--accept-unsupported"}
	if code, _, errs = runCLI(t, append(append([]string{"import", "-f", a1, "--target", fresh}, exceptions...), trust...)...); code != cli.ExitOK {
		t.Fatalf("import of v1.0.0 with the advisory accepted and --accept-unsupported: exit %d: %s", code, errs)
	}
	code, out, errs = runCLI(t, append(append([]string{"verify", "-f", a1, "-o", "json"}, exceptions...), trust...)...)
	var accepted struct {
		Verification any `json:"subjects"`
		Standing     struct {
			Source             struct{ Release string }
			Advisories         []struct{ Accepted bool }
			UnsupportedAllowed bool
			Refused            []string
		}
	}
	if code != cli.ExitOK || json.Unmarshal([]byte(out), &accepted) != nil || accepted.Standing.Source.Release != "v1.1.0" ||
		len(accepted.Standing.Advisories) != 1 || !accepted.Standing.Advisories[0].Accepted || !accepted.Standing.UnsupportedAllowed ||
		len(accepted.Standing.Refused) != 0 || accepted.Verification == nil {
		t.Errorf("verify -o json with both accepted: exit %d %s %s", code, out, errs)
	}

	// The policy admits no release verify refuses: with v1.0.0 and v1.1.0
	// both at the target, keeping the previous release beside v1.1.0 judges
	// v1.0.0 by v1.1.0's advisories, not by its own older lock.
	a2b := export(v2, "v2b.tar")
	if code, _, errs = runCLI(t, append([]string{"import", "-f", a2b, "--target", fresh}, trust...)...); code != cli.ExitOK {
		t.Fatalf("import of v1.1.0 beside v1.0.0: exit %d: %s", code, errs)
	}
	keep := []string{"policy", "--lock-ref", fresh + "/reloader-release:v1.1.0", "--target", fresh, "--keep-previous", "1", "--format", "vap"}
	code, out, errs = runCLI(t, append(keep, trust...)...)
	if code != cli.ExitRefused || !strings.Contains(errs, "release v1.0.0, admitted beside v1.1.0") || !strings.Contains(errs, advisoryID) || strings.Contains(out, "ValidatingAdmissionPolicy") {
		t.Errorf("policy --keep-previous 1 admitting the affected v1.0.0: exit %d, want %d naming it and %s, and no policy written:\n%s%s", code, cli.ExitRefused, advisoryID, out, errs)
	}
	if code, out, errs = runCLI(t, append(append(keep, "--accept-advisory", advisoryID, "--accept-unsupported"), trust...)...); code != cli.ExitOK || !strings.Contains(out, "ValidatingAdmissionPolicy") {
		t.Errorf("policy --keep-previous 1 with the advisory accepted: exit %d:\n%s", code, errs)
	}

	// A directory of advisories is the user's own: trusted as given, and a
	// withdrawn advisory refuses nothing.
	wdir, _ := writeAdvisories(t, true)
	if code, _, errs = runCLI(t, append([]string{"verify", "-f", a1, "--advisories", wdir}, trust...)...); code != cli.ExitOK {
		t.Errorf("verify of v1.0.0 against a withdrawn advisory: exit %d: %s", code, errs)
	}
}
